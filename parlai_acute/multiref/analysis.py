"""How diverse and how relevant are the references a multi-reference collection gathered?

Input: per collection mode (4R1W: 4 replies from 1 worker; 2R2W; 1R4W) a file in the
DailyDialog multi-reference layout: JSON lines, each dialogue a list of turns (or
``{"dialogue": [...]}``), every turn with ``text`` and an optional ``responses`` list. A
turn with responses and a next turn is one *context*: its turns up to there, the *original*
reply (the next turn's text, the single reference the dataset had) and the *collected*
replies. (The reader is local because it must keep the original apart from the collected
replies, which the metrics' test-set reader merges into one reference list.)

Per context, with the metrics' sacrebleu settings (:class:`parlai_acute.metrics.reference.SentenceBleu`:
13a tokens, lowercase, exponential smoothing, effective order; the signature is recorded):

* **Self-BLEU**: mean sentence BLEU-4 of each collected reply against the other collected
  replies of the context (:func:`parlai_acute.metrics.diversity.self_bleu`); lower is more diverse;
* **Gt-BLEU**: mean sentence BLEU-4 (and BLEU-2) of each collected reply against the original;
* **unique n-grams** (n = 1..4, lowercase word tokens): distinct n-grams of all collected
  replies together, of the original alone, and collected ones not in the original.

Per mode: the mean over contexts with a percentile bootstrap interval over contexts.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import parlai_acute
from parlai_acute.errors import UserError
from parlai_acute.files import atomic_write, write_json
from parlai_acute.stats.intervals import percentile_interval
from parlai_acute.stats.resample import resample_weights

MODES = ("4R1W", "2R2W", "1R4W")
ORDERS = (1, 2, 3, 4)


def read_collection(path: str | Path) -> list[dict]:
    """Contexts with collected replies: context_id, context, original, collected."""
    from parlai_acute.jsonl import read_jsonl

    out = []
    for where, raw in read_jsonl(path, "multi-reference file", "pass the .jsonl `parlai-acute multiref export` "
                                                               "wrote"):
        number = where.rsplit(":", 1)[1]
        turns = raw.get("dialogue", raw.get("dialog")) if isinstance(raw, dict) else raw
        if not isinstance(turns, list) or not all(isinstance(t, dict) and isinstance(t.get("text"), str)
                                                  for t in turns):
            raise UserError(f"{where}: a dialogue must be a list of turns, each with a 'text' string and optionally "
                            f"a 'responses' list")
        for i, turn in enumerate(turns):
            responses = turn.get("responses") or []
            if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
                raise UserError(f"{where}: turn {i + 1}'s 'responses' must be a list of strings")
            collected = [r.strip() for r in responses if r.strip()]
            if collected and i + 1 < len(turns):
                out.append({"context_id": f"{number}:{i}", "context": [t["text"] for t in turns[:i + 1]],
                            "original": turns[i + 1]["text"], "collected": collected})
    if not out:
        raise UserError(f"{path} has no turn with collected 'responses' and a next turn; nothing to analyse")
    return out


def _grams(texts: list[str], n: int) -> set:
    from parlai_acute.metrics import normalise

    return {g for t in texts for g in normalise.ngrams(normalise.words(t), n)}


def context_table(mode: str, contexts: list[dict], bleu) -> pd.DataFrame:
    """One row per context: replies, Self-BLEU-4, Gt-BLEU-2/4, unique n-gram counts."""
    from parlai_acute.metrics.diversity import self_bleu

    rows = []
    for c in contexts:
        replies = c["collected"]
        gt = bleu.pair_scores(replies, [c["original"]] * len(replies))
        row = {"mode": mode, "context_id": c["context_id"], "replies": len(replies),
               "self_bleu4": self_bleu(replies, bleu, sample=10 ** 6)["self_bleu4"],
               "gt_bleu2": float(gt["bleu2"].mean()), "gt_bleu4": float(gt["bleu4"].mean())}
        for n in ORDERS:
            mine, original = _grams(replies, n), _grams([c["original"]], n)
            row[f"unique{n}_collected"] = len(mine)
            row[f"unique{n}_original"] = len(original)
            row[f"unique{n}_new"] = len(mine - original)
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass
class MultirefResult:
    contexts: pd.DataFrame
    modes: pd.DataFrame
    signature: str
    config: dict


def summarise(contexts: pd.DataFrame, resamples: int, seed: int, confidence: float) -> pd.DataFrame:
    measures = ["replies", "self_bleu4", "gt_bleu2", "gt_bleu4"] + [f"unique{n}_{k}" for n in ORDERS
                                                                    for k in ("collected", "original", "new")]
    rows = []
    rng = np.random.default_rng(seed)
    for mode, group in contexts.groupby("mode", sort=False):
        values = group[measures].to_numpy(float)
        row = {"mode": mode, "contexts": len(group)}
        low = high = np.full(len(measures), np.nan)
        if resamples and len(group) > 1:
            weights = resample_weights(len(group), resamples, rng).astype(float)
            finite = np.where(np.isfinite(values), values, 0.0)
            counts = weights @ np.isfinite(values).astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                low, high = percentile_interval((weights @ finite) / counts, confidence)
        for j, name in enumerate(measures):
            row[name] = float(np.nanmean(values[:, j])) if np.isfinite(values[:, j]).any() else float("nan")
            if name != "replies":
                row[f"{name}_low"], row[f"{name}_high"] = float(low[j]), float(high[j])
        rows.append(row)
    return pd.DataFrame(rows)


def analyze(collections: dict[str, list[dict]], bootstrap: int = 1000, seed: int = 0,
            confidence: float = 0.95) -> MultirefResult:
    """``collections``: mode -> contexts of :func:`read_collection`."""
    from parlai_acute.metrics.reference import SentenceBleu

    bleu = SentenceBleu()
    contexts = pd.concat([context_table(mode, rows, bleu) for mode, rows in collections.items()], ignore_index=True)
    config = {"bootstrap": bootstrap, "seed": seed, "confidence": confidence, "modes": list(collections),
              "bleu": bleu.signature().format(), "ngrams": "lowercase word tokens (metrics.normalise.words)"}
    return MultirefResult(contexts, summarise(contexts, bootstrap, seed, confidence), bleu.signature().format(), config)


def write_outputs(result: MultirefResult, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise UserError(f"--outdir {outdir}: exists and is not a directory; pass a directory path")
    paths = {}
    for name, table in (("contexts.csv", result.contexts), ("modes.csv", result.modes)):
        with atomic_write(outdir / name) as fh:
            table.to_csv(fh, index=False)
        paths[name] = outdir / name
    run = {"analysis": "multiref", "version": parlai_acute.__version__, "seed": result.config["seed"],
           "configuration": result.config}
    records = result.modes.astype(object).where(result.modes.notna(), None).to_dict(orient="records")
    write_json(outdir / "results.json", {"modes": records, "bleu_signature": result.signature, "run": run})
    write_json(outdir / "run.json", run)
    paths["results.json"], paths["run.json"] = outdir / "results.json", outdir / "run.json"
    if report:
        from parlai_acute.report import Report, interval_plot

        level = f"{100 * result.config['confidence']:g}%"
        interval = f"{level} percentile bootstrap over contexts ({result.config['bootstrap']} resamples, seed " \
                   f"{result.config['seed']})"
        page = Report("Multi-reference collection", intro=f"BLEU: {result.signature}. Self-BLEU: lower is more "
                                                          f"diverse; Gt-BLEU: overlap with the original reply.")
        section = page.section("Collection modes")
        section.note(f"[low, high]: {interval}.")
        section.table(result.modes, "modes", caption="Per collection mode (means over contexts)")
        for measure, label in (("self_bleu4", "Self-BLEU-4"), ("gt_bleu4", "Gt-BLEU-4"),
                               ("unique1_collected", "unique unigrams of the collected replies")):
            section.figure(interval_plot(result.modes, "mode", measure, f"{measure}_low", f"{measure}_high",
                                         xlabel=label, interval_label=interval), measure,
                           caption=f"{label} per mode; bars: {interval}")
        page.configuration("Run", run)
        paths.update(page.write(outdir))
    return paths
