"""How diverse and how relevant are the references a multi-reference collection gathered?

Input: the references table (:mod:`parlai_acute.multiref.references`): per collection mode
(4R1W: 4 replies from 1 worker; 2R2W; 1R4W) and *context*, the *original* reply (the single
reference the dataset had) and the *collected* replies.

Per context, with the metrics' sacrebleu settings (:class:`parlai_acute.metrics.reference.SentenceBleu`:
13a tokens, lowercase, exponential smoothing, effective order; the signature is recorded):

* **Self-BLEU**: mean sentence BLEU-4 of each collected reply against the other collected
  replies of the context (:func:`parlai_acute.metrics.diversity.self_bleu`); lower is more diverse;
* **Gt-BLEU**: mean sentence BLEU-4 (and BLEU-2) of each collected reply against the original;
* **unique n-grams** (n = 1..4, lowercase word tokens): distinct n-grams of all collected
  replies together, of the original alone, and collected ones not in the original.

Per mode: the mean over contexts with a percentile bootstrap interval over contexts; where
there is none (one context, every resample the same), the mode's ``note`` says why in words.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from parlai_acute.result import Result
from parlai_acute.stats.intervals import no_percentile_interval, percentile_interval, too_few
from parlai_acute.stats.resample import resample_weights
from parlai_acute.stats.settings import Settings

__all__ = ["MODES", "MEASURES", "MultirefConfig", "MultirefResult", "contexts_by_mode", "context_table", "summarise",
           "analyze"]

MODES = ("4R1W", "2R2W", "1R4W")
ORDERS = (1, 2, 3, 4)


def contexts_by_mode(table: pd.DataFrame) -> dict[str, list[dict]]:
    """mode -> its contexts (context_id, context turns, original, collected replies), in table order."""
    out: dict[str, list[dict]] = {}
    for (mode, context_id), rows in table.groupby(["mode", "context_id"], sort=False):
        out.setdefault(mode, []).append({"context_id": context_id, "context": rows["context"].iloc[0].split("\n"),
                                         "original": rows["original"].iloc[0], "collected": list(rows["reply"])})
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
class MultirefConfig(Settings):
    """How a collection is analysed (the options of ``multiref analyze``; ``alpha`` is unused: no marks)."""


@dataclass
class MultirefResult(Result):
    """The analysis of a references table; ``summary()``, ``meta()``, ``tables()`` and ``warnings()`` as
    every protocol's result (:class:`parlai_acute.result.Result`). ``config``: the settings as recorded
    (bootstrap, seed, confidence, source, modes, the BLEU signature); ``reasons``: per mode and measure,
    in words, why it has no interval or no value."""

    protocol: ClassVar[str] = "multiref"
    contexts: pd.DataFrame
    modes: pd.DataFrame
    signature: str
    config: dict
    reasons: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["mode", "measure", "reason"]))

    def own_tables(self) -> dict[str, pd.DataFrame]:
        return {"contexts": self.contexts, "modes": self.modes}

    def warnings(self) -> list[str]:
        """Each mode's note (a measure without an interval or a value, and why)."""
        return [f"{m.mode}: {m.note}" for m in self.modes.itertuples(index=False) if m.note]


MEASURES = ["replies", "self_bleu4", "gt_bleu2", "gt_bleu4"] + [f"unique{n}_{k}" for n in ORDERS
                                                                for k in ("collected", "original", "new")]


def summarise(contexts: pd.DataFrame, resamples: int, seed: int,
              confidence: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per mode the mean of each measure over contexts, its percentile bootstrap interval over
    contexts, and a ``note`` saying in words why a measure has no interval or no value; and beside
    it the same reasons one row per (mode, measure)."""
    rows, reasons = [], []
    rng = np.random.default_rng(seed)
    for mode, group in contexts.groupby("mode", sort=False):
        values = group[MEASURES].to_numpy(float)
        row = {"mode": mode, "contexts": len(group)}
        low = high = np.full(len(MEASURES), np.nan)
        why = [too_few(len(group), "context", resamples)] * len(MEASURES)
        if not why[0]:
            weights = resample_weights(len(group), resamples, rng).astype(float)
            finite = np.where(np.isfinite(values), values, 0.0)
            counts = weights @ np.isfinite(values).astype(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                means = (weights @ finite) / counts
            low, high = percentile_interval(means, confidence)
            why = no_percentile_interval(means, confidence)
        notes: dict[str, list[str]] = {}
        for j, name in enumerate(MEASURES):
            defined = np.isfinite(values[:, j]).any()
            row[name] = float(np.nanmean(values[:, j])) if defined else float("nan")
            if name == "replies":
                continue
            row[f"{name}_low"], row[f"{name}_high"] = float(low[j]), float(high[j])
            if not defined:  # only Self-BLEU can be: it compares the replies of a context
                reason = "undefined: every context has a single reply, and Self-BLEU compares replies"
            else:
                reason = f"no interval: {why[j]}" if why[j] else ""
            if reason:
                notes.setdefault(reason, []).append(name)
                reasons.append({"mode": mode, "measure": name, "reason": reason})
        row["note"] = "; ".join(f"{what} ({', '.join(names)})" if len(names) < len(MEASURES) - 1 else what
                                for what, names in notes.items())
        rows.append(row)
    return pd.DataFrame(rows), pd.DataFrame(reasons, columns=["mode", "measure", "reason"])


def analyze(table: pd.DataFrame, config: MultirefConfig | None = None) -> MultirefResult:
    """Per context and per mode statistics of the references ``table``."""
    from parlai_acute.metrics.reference import SentenceBleu

    config = config or MultirefConfig()
    bleu = SentenceBleu()
    collections = contexts_by_mode(table)
    contexts = pd.concat([context_table(mode, rows, bleu) for mode, rows in collections.items()], ignore_index=True)
    record = {"bootstrap": config.bootstrap, "seed": config.seed, "confidence": config.confidence,
              "source": config.source, "modes": list(collections), "bleu": bleu.signature().format(),
              "ngrams": "lowercase word tokens (metrics.normalise.words)"}
    modes, reasons = summarise(contexts, config.bootstrap, config.seed, config.confidence)
    return MultirefResult(contexts, modes, bleu.signature().format(), record, reasons)
