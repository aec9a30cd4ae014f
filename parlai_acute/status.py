"""Where a running evaluation stands: each comparison's estimate, its anytime-valid interval,
whether it is decided, and how many more judgments the undecided ones are likely to need.

Pure functions over the protocols' tidy tables (ACUTE judgments, per-turn turns, SSA labels):
the command ``parlai-acute status`` reads a Mephisto run or a table file and hands the table
here. Because the intervals are confidence sequences (:mod:`parlai_acute.stats.sequential`),
looking at a live run as often as one likes and stopping once a comparison is decided keeps
the error rate: a fixed-sample p-value checked this way would not.

The observation is the sampled unit, as in the issue "Verdicts that hold on real data": the
worker for ACUTE-Eval (a worker's taste spans their judgments), the dialogue for per-turn
runs, the conversation for interactive SSA items (the worker for static ones). A unit counts
once it is in the table; units are taken in the order they finished (last timestamp).

Several comparisons are watched at once, so each gets alpha / (number of comparisons)
(Bonferroni): "decided" then holds for all of them together at level alpha.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.stats import ranksets
from parlai_acute.stats.bradley_terry import fit_counts
from parlai_acute.stats.ppi import acute_items
from parlai_acute.stats.sequential import GRID, cluster_stream, confidence_sequence, decide, first_crossing

PROTOCOLS = ("acute", "per-turn", "ssa")
#: columns that tell the protocols' tables apart
SIGNATURE = {"acute": "winner", "per-turn": "picked", "ssa": "sensible"}


def detect_protocol(df: pd.DataFrame) -> str:
    """The protocol whose tidy table ``df`` is, from its columns."""
    for protocol, column in SIGNATURE.items():
        if column in df.columns:
            return protocol
    raise UserError("the table is none of an ACUTE judgments table (column 'winner'), a per-turn turns table "
                    "('picked') or an SSA labels table ('sensible'); pass one of those")


def acute_streams(df: pd.DataFrame) -> list[dict]:
    """One preference stream per (question, model pair): does the first model (by name) win,
    one value per worker (their share of wins), workers in the order they finished."""
    work = acute_items(df)
    out = []
    for (question, a, b), part in work.groupby(["question", "first", "second"], sort=True):
        out.append({"protocol": "acute", "group": question, "comparison": f"{a} vs {b}", "measure": f"{a} wins",
                    "unit": "worker", "stream": cluster_stream(part, "value", "worker", "timestamp")})
    return out


def perturn_streams(df: pd.DataFrame) -> list[dict]:
    """One stream per (setting, protocol, model set, model pair), one value per dialogue.

    SOBA: among turns where one of the two was picked, the share won by the first model
    (1/2 when the models are equal). SATA: the pick difference first - second on every turn,
    shifted to [0, 1] as (d + 1) / 2. SM runs compare models across dialogues; they are not
    watched here."""
    df = df[~df["incomplete"].fillna(False).astype(bool)]
    df = df[df["protocol"] != "sm"]
    out = []
    for (setting, protocol, model_set), part in df.groupby(["setting", "protocol", "model_set"], sort=True):
        picks = part.pivot_table(index=["dialogue", "turn"], columns="model", values="picked", aggfunc="max")
        stamp = part.groupby(["dialogue", "turn"])["timestamp"].max()
        stamp = pd.to_numeric(stamp, errors="coerce").reindex(picks.index)
        models = sorted(picks.columns)
        for a, b in itertools.combinations(models, 2):
            pa, pb = picks[a].astype(float), picks[b].astype(float)
            ok = pa.notna() & pb.notna()
            if protocol == "soba":
                ok &= (pa + pb) == 1
                value = pa
            else:
                value = (pa - pb + 1) / 2
            rows = pd.DataFrame({"dialogue": picks.index.get_level_values(0)[ok.to_numpy()],
                                 "value": value[ok].to_numpy(), "timestamp": stamp[ok].to_numpy()})
            measure = f"{a} wins" if protocol == "soba" else "pick rate difference"
            out.append({"protocol": "per-turn", "group": f"{setting} {protocol} {model_set}",
                        "difference": protocol != "soba",
                        "comparison": f"{a} vs {b}", "measure": measure, "unit": "dialogue",
                        "stream": cluster_stream(rows, "value", "dialogue", "timestamp")})
    return out


def ssa_streams(df: pd.DataFrame) -> list[dict]:
    """One stream per (model, sensible | specific): the model's rate, one value per
    conversation (interactive and log items) or per worker (static items)."""
    unit = np.where(df["conversation"].fillna("").astype(str) != "", "c:" + df["conversation"].fillna("").astype(str),
                    "w:" + df["worker"].astype(str))
    work = df.assign(_unit=unit, timestamp=pd.to_numeric(df["timestamp"], errors="coerce"))
    out = []
    for model, part in work.groupby("model", sort=True):
        for measure in ("sensible", "specific"):
            out.append({"protocol": "ssa", "group": measure, "comparison": model, "measure": f"{measure} rate",
                        "unit": "conversation or worker",
                        "stream": cluster_stream(part.assign(_v=part[measure].astype(float)), "_v", "_unit",
                                                 "timestamp")})
    return out


STREAMS = {"acute": acute_streams, "per-turn": perturn_streams, "ssa": ssa_streams}


def status(df: pd.DataFrame, protocol: str | None = None, alpha: float = 0.05, budget: int = 1_000_000,
           grid: int = GRID) -> dict:
    """Every comparison's anytime-valid state. Returns ``{"protocol", "alpha", "per_comparison_alpha",
    "rows": [...]}``; each row has the comparison, estimate, lower, upper (confidence
    sequence at the per-comparison level), decided, more (judgments likely still needed;
    None when decided or when no decision is in sight within ``budget``), clusters, judgments.

    ACUTE and per-turn comparisons are decided against 1/2 (no preference). SSA rates have no
    null; two models' rates are decided apart when their sequences (each at half the
    comparison's level) are disjoint, listed as extra rows ``A - B``.
    """
    if not 0 < alpha < 1:
        raise UserError(f"alpha {alpha} must be strictly between 0 and 1; 0.05 is usual", param="alpha")
    protocol = protocol or detect_protocol(df)
    if protocol not in STREAMS:
        raise UserError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    streams = STREAMS[protocol](df)
    if protocol == "ssa":
        pairs = [(s, t) for s, t in itertools.combinations(streams, 2) if s["group"] == t["group"]]
        count = max(len(pairs), 1)
        each = alpha / count
        rows = [_rate_row(s, each / 2, grid) for s in streams]
        by = {(r["group"], r["comparison"]): r for r in rows}
        rows += [_pair_row(by[(s["group"], s["comparison"])], by[(t["group"], t["comparison"])]) for s, t in pairs]
    else:
        count = max(len(streams), 1)
        each = alpha / count
        rows = []
        for s in streams:
            result = decide(s["stream"], each, 0.5, grid, budget)
            if s.get("difference") and result["estimate"] is not None:  # back from (d + 1) / 2 to d in [-1, 1]
                result |= {k: 2 * result[k] - 1 for k in ("estimate", "lower", "upper")} | {"m0": 0.0}
            rows.append({k: s[k] for k in ("protocol", "group", "comparison", "measure", "unit")} | result)
    return {"protocol": protocol, "alpha": alpha, "comparisons": count, "per_comparison_alpha": each,
            "judgments": int(len(df)), "rows": rows}


def top_k(df: pd.DataFrame, k: int, alpha: float = 0.05, models: list[str] | None = None, grid: int = GRID,
          budget: int = 1_000_000, details: bool = True) -> dict:
    """Is the set of the top ``k`` models decided, per question, from an ACUTE judgments table?

    Every model pair gets the anytime-valid test of :func:`status` (confidence sequences over
    workers) at alpha / (all pairs of all questions): pairs not judged yet count in the
    correction, so the level never depends on what has been collected. The top k is decided
    when k models are each decided ahead of every other model by direct comparisons
    (:func:`parlai_acute.stats.ranksets.top_k`; no assumption that preferences are
    transitive); the guarantee holds at every look. ``models``: the full list (default: those
    in the table). Per question: ``decided``, ``top`` (the decided set, else the current
    Bradley-Terry top k), rank-sets (meaningful when the models have a true order), and
    ``undecided``: the pairs across the current boundary still open, with (``details``) their
    estimate, interval and the judgments they likely still need. Only those pairs' intervals
    are computed: the decisions alone are cheap (435 pairs of 30 models in about a second).
    """
    if not 0 < alpha < 1:
        raise UserError(f"alpha {alpha} must be strictly between 0 and 1; 0.05 is usual", param="alpha")
    work = acute_items(df)
    questions = sorted(set(work["question"])) or ["(no judgments)"]
    names = sorted(models) if models else sorted(set(work["first"]) | set(work["second"]))
    if not 1 <= k < len(names):
        raise UserError(f"k={k} needs 1 <= k < number of models ({len(names)}: {', '.join(names) or 'none yet'})",
                        param="k")
    index = {m: i for i, m in enumerate(names)}
    pairs = len(names) * (len(names) - 1) // 2
    each = alpha / (pairs * len(questions))
    out = []
    for question in questions:
        part = work[work["question"] == question]
        ahead = np.zeros((len(names), len(names)), bool)
        wins = np.zeros_like(ahead, dtype=float)
        if len(part):  # one stream of (pair, worker) clusters in the order they finished, split by pair
            worker, workers = pd.factorize(part["worker"])
            pair = part["first"].map(index).to_numpy() * len(names) + part["second"].map(index).to_numpy()
            stream = cluster_stream(part.assign(_key=pair * len(workers) + worker), "value", "_key", "timestamp")
            code = stream["cluster"].to_numpy() // len(workers)
            order = np.argsort(code, kind="stable")  # by pair, each in finishing order
            means, sizes = stream["mean"].to_numpy(float)[order], stream["judgments"].to_numpy()[order]
            codes, starts = np.unique(code[order], return_index=True)
            for c, x, n in zip(codes, np.split(means, starts[1:]), np.split(sizes, starts[1:])):
                i, j = divmod(int(c), len(names))
                _, decided, _ = first_crossing(x, n, each)
                ahead[i, j], ahead[j, i] = decided == "above", decided == "below"
                wins[i, j], wins[j, i] = float(x @ n), float(n.sum() - x @ n)
        state = ranksets.top_k(ahead, k)
        lower, upper = ranksets.rank_sets(ahead)
        decided = bool(state["decided"])
        if decided:
            top = state["top"]
        else:
            top = np.zeros(len(names), bool)
            top[np.argsort(-fit_counts(wins), kind="stable")[:k]] = True
        undecided = []
        for i in np.flatnonzero(top):
            for j in np.flatnonzero(~top):
                if ahead[i, j]:
                    continue
                a, b = (i, j) if i < j else (j, i)
                row = {"pair": f"{names[a]} vs {names[b]}", "models": [names[i], names[j]],
                       "decided": "below" if a == i and ahead[j, i] else "above" if ahead[j, i] else "undecided"}
                if details:
                    rows = part[(part["first"] == names[a]) & (part["second"] == names[b])]
                    full = decide(cluster_stream(rows, "value", "worker", "timestamp"), each, 0.5, grid, budget)
                    row |= {key: full[key] for key in ("estimate", "lower", "upper", "more", "judgments")}
                undecided.append(row)
        out.append({"question": question, "decided": decided, "top": [names[i] for i in np.flatnonzero(top)],
                    "rank_sets": {m: [int(lower[i]), int(upper[i])] for i, m in enumerate(names)},
                    "undecided": undecided, "judgments": int(len(part))})
    return {"k": k, "alpha": alpha, "per_pair_alpha": each, "pairs": pairs * len(questions), "models": names,
            "decided": all(q["decided"] for q in out), "questions": out,
            "method": "direct pairwise decisions by confidence sequences over workers, Bonferroni over all pairs"}


def top_k_lines(result: dict) -> list[str]:
    """The top-k verdict as text, one block per question."""
    lines = [f"top {result['k']} of {len(result['models'])} models ({', '.join(result['models'])}; a model not judged "
             f"yet is not counted): alpha {result['alpha']:g} over all {result['pairs']} pair(s) "
             f"({result['per_pair_alpha']:.3g} each); decided when each of the k is decided ahead of every model "
             f"outside by its own confidence sequence"]
    for q in result["questions"]:
        still_open = sum(u["decided"] == "undecided" for u in q["undecided"])  # the rest: decided the other way
        verdict = "DECIDED" if q["decided"] else f"undecided, {still_open} pair(s) across the boundary open"
        lines.append(f"[{q['question']}] top {result['k']}: {', '.join(q['top'])}"
                     f"{'' if q['decided'] else ' (current estimate)'}  {verdict}")
        for u in q["undecided"]:
            more = ("no judgments yet" if u["estimate"] is None else f"~{u['more']} more judgments" if u["more"]
                    else "no decision in sight" if u["decided"] == "undecided" else "decided the other way")
            lines.append(f"    {u['pair']:<32} {_pct(u['estimate'])} [{_pct(u['lower'])}, {_pct(u['upper'])}]  "
                         f"{u['judgments']} judgments, {more}")
        sets = "  ".join(f"{m} {lo}-{hi}" if lo != hi else f"{m} {lo}"
                         for m, (lo, hi) in sorted(q["rank_sets"].items(), key=lambda kv: (kv[1], kv[0])))
        lines.append(f"    rank-sets (if the models have a true order): {sets}")
    return lines


def _rate_row(s: dict, alpha: float, grid: int) -> dict:
    x = s["stream"]["mean"].to_numpy(float)
    base = {k: s[k] for k in ("protocol", "group", "comparison", "measure", "unit")}
    base |= {"clusters": int(x.size), "judgments": int(s["stream"]["judgments"].sum()), "alpha": alpha,
             "decided": "rate (no null)", "more": None, "decided_at_judgments": None, "m0": None}
    if not x.size:
        return base | {"estimate": None, "lower": None, "upper": None, "note": "no labels yet"}
    cs = confidence_sequence(x, alpha, grid=grid)
    return base | {"estimate": float(x.mean()), "lower": float(cs["lower"][-1]), "upper": float(cs["upper"][-1]),
                   "note": ""}


def _pair_row(a: dict, b: dict) -> dict:
    """Two models' rates: decided apart when their sequences are disjoint (a valid test of
    equal rates at the sum of their levels, at every look)."""
    row = {"protocol": "ssa", "group": a["group"], "comparison": f"{a['comparison']} - {b['comparison']}",
           "measure": f"{a['group']} rate difference", "unit": a["unit"], "clusters": a["clusters"] + b["clusters"],
           "judgments": a["judgments"] + b["judgments"], "alpha": a["alpha"] * 2, "m0": 0.0, "more": None,
           "decided_at_judgments": None, "note": "decided when the two rates' sequences are disjoint"}
    if a["estimate"] is None or b["estimate"] is None:
        return row | {"estimate": None, "lower": None, "upper": None, "decided": "undecided"}
    lower, upper = a["lower"] - b["upper"], a["upper"] - b["lower"]
    decided = "above" if lower > 0 else "below" if upper < 0 else "undecided"
    return row | {"estimate": a["estimate"] - b["estimate"], "lower": lower, "upper": upper, "decided": decided}


def _pct(value) -> str:
    return "   n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:6.1f}"


def status_lines(result: dict) -> list[str]:
    """The status as text, one comparison a line, then the legend."""
    lines = [f"{result['protocol']}: {result['judgments']} rows, {result['comparisons']} comparison(s); "
             f"intervals are confidence sequences valid at every look (alpha {result['alpha']:g} over all, "
             f"{result['per_comparison_alpha']:.3g} each)"]
    group = None
    for row in result["rows"]:
        if row["group"] != group:
            group = row["group"]
            lines.append(f"[{group}]")
        verdict = {"above": "DECIDED: first ahead", "below": "DECIDED: second ahead"}.get(row["decided"], row["decided"])
        if row["protocol"] == "ssa" and row["decided"] in ("above", "below"):
            verdict = "DECIDED: rates differ"
        if row["decided"] == "undecided":
            verdict += (f", ~{row['more']} more judgments" if row["more"] else ", no decision in sight")
        if row["decided_at_judgments"]:
            verdict += f" (at {row['decided_at_judgments']} judgments)"
        lines.append(f"  {row['comparison']:<32} {row['measure']:<28} {_pct(row['estimate'])} "
                     f"[{_pct(row['lower'])}, {_pct(row['upper'])}]  {row['clusters']} {row['unit']}s, "
                     f"{row['judgments']} judgments  {verdict}")
    lines.append("more: judgments still to collect before the interval would exclude no difference, if the "
                 "estimate held (a projection, not a promise)")
    return lines
