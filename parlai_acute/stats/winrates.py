"""Pairwise win rates: worker-clustered tests behind the marks, exact binomial tests beside them.

ACUTE-Eval judgments are binary (one model of the pair wins) unless the task offered a tie
(``outcome`` "tie" or "both_bad"): a tie counts half a win for each model, everywhere here
(:func:`scored`). The tables follow the paper: cell (row=A, column=B) is the percentage of
A-vs-B judgments won by B, ties as halves.

The sampled unit is the worker: one worker's judgments share that worker's taste, so
with ``cluster="worker"`` (the analysis) the headline p-value, interval and mark of each
matchup come from a test over workers (:mod:`parlai_acute.stats.inference`): a sign-flip
test of each worker's total of the per-judgment differences (+1 B won, 0 a tie, -1 A won), exact
or Monte Carlo, and its inverted interval, converted to B's win rate. From
:data:`NORMAL_FROM` workers on, the sign-flip distribution is replaced by its normal limit
(mean 0, variance the sum of the squared worker totals: the cluster-robust score test),
with a t on G - 1 degrees of freedom, and the interval by the same test inverted in closed
form; it is what makes a million judgments affordable, and with that many workers the two
agree (tested). A matchup judged by too few workers for the test to reach ``alpha`` gets
no mark and says how many workers it needs. Holm runs across the matchups of a question.

Conversations reused across a matchup's judgments (fewer conversations than comparisons: a
demo's 3 self-chats per model, a pool of 20 pairs) are a second sampled facet: there the
headline test is the two-way (worker x conversation) cluster-robust t of
:func:`parlai_acute.stats.inference.multiway_tests`, ``conversations`` counts them (the fewer of
the two models'), ``design`` says which facets were treated as sampled, and the test over
workers alone stays as ``pvalue_workers``/``ci_low_workers``/``ci_high_workers`` (a verdict
about these conversations). Too few conversations per model: no mark, and ``reason`` says how
many are needed; :func:`design_note` is the sentence the summary, report and run.json print.

Secondary columns, named with their assumption ("exact, judgments independent"): the
two-sided exact binomial p-value against 1/2 (``pvalue_exact``, ``p_holm_exact``; with ties, the
sign test: the decisive judgments only, as ties carry no sign) and the Clopper-Pearson interval
(``ci_low_exact``/``ci_high_exact``; a tie as half a success), both vectorised over
matchups (scipy's beta quantiles and binomial cdf). Without ``cluster`` the table is the
per-judgment one alone (columns ``pvalue``, ``p_holm``, ``ci_low``, ``ci_high``, ``mark``).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy import stats
from scipy.stats import binomtest

from parlai_acute.stats.inference import NORMAL_FROM, cell_totals, normal_sign_flip  # one place for the limit
from parlai_acute.stats.intervals import exact_intervals, percentile_interval
from parlai_acute.stats.multitest import holm
from parlai_acute.stats.resample import cluster_bootstrap, cluster_totals

__all__ = ["tied", "scored", "coded", "outcome_matrices", "counts_of_codes", "models_of", "win_matrix", "design_note", "binomial_pvalue",
           "binomial_p_half", "significance_mark",
           "MATCHUP_COLUMNS", "WORKER_COLUMNS", "EXACT", "matchups", "winrate_grid", "GRID_COLUMNS",
           "GRID_WORKER_COLUMNS", "grid_from_matchups", "grid_table", "side_bias", "OUTCOME_SHARES",
           "outcome_rates"]


def tied(df: pd.DataFrame) -> np.ndarray:
    """Which judgments are ties: an ``outcome`` other than a win ("tie", "both_bad"); a table
    without the column (or a blank outcome) holds wins only."""
    if "outcome" not in df.columns or not len(df):
        return np.zeros(len(df), dtype=bool)
    outcome = df["outcome"].to_numpy(dtype=object)
    other = outcome != "win"
    if other.any():  # the rest looked at only where it is not a win (a table of wins: one comparison)
        rest = outcome[other]
        other[other] = (rest != "") & pd.notna(rest)
    return other


def scored(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every judgment as (first, second, score of first over second): a win is (winner, loser,
    1); a tie is (left model, right model, 1/2) -- half a win each, the one way every statistic
    here counts a tie."""
    tie = tied(df)
    if not tie.any():
        return df["winner"].to_numpy(dtype=object), df["loser"].to_numpy(dtype=object), np.ones(len(df))
    first = np.where(tie, df["model_left"].to_numpy(dtype=object), df["winner"].to_numpy(dtype=object))
    second = np.where(tie, df["model_right"].to_numpy(dtype=object), df["loser"].to_numpy(dtype=object))
    return first, second, np.where(tie, 0.5, 1.0)


def conversation_codes(ids) -> tuple[np.ndarray, int]:
    """(codes 0..C-1, C) of conversation ids, each side of each judgment one entry. A blank id
    (missing or empty: a released table without ids, rows from before ids were stored) is a
    conversation of its own, never one conversation shared by every blank row: without ids
    nothing says a conversation was reused, and ``status`` reads them the same way
    (:func:`parlai_acute.acute.estimands.conversations_known`)."""
    codes, names = pd.factorize(np.asarray(ids, dtype=object))  # missing: -1
    codes = codes.astype(np.int64)
    blank = codes < 0
    empty = np.flatnonzero(np.asarray(names, dtype=object) == "")  # looked for among the distinct ids only
    if len(empty):
        blank |= codes == empty[0]
    if not blank.any():
        return codes, len(names)
    present, kept = np.unique(codes[~blank], return_inverse=True)
    out = np.empty(len(codes), np.int64)
    out[~blank] = kept
    out[blank] = len(present) + np.arange(int(blank.sum()))
    return out, len(present) + int(blank.sum())


def models_of(df: pd.DataFrame) -> list[str]:
    """All model names in the judgments (winners, losers and both sides of a tie), sorted."""
    first, second, _ = scored(df)
    return sorted(set(first).union(second))


def coded(df: pd.DataFrame, models: list[str] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``(i, j, tie, models)``: every judgment as the codes (positions in ``models``, default all of
    them sorted) of the model that won or tied first and of the other one, and whether it is a tie.
    One hash pass over the names (three million judgments: a pass costs a second)."""
    first, second, score = scored(df)
    both = np.concatenate([first, second])
    if models is None:  # every model, sorted by name (as models_of)
        codes, names = pd.factorize(both)
        models = sorted(names)
        codes = pd.Index(models).get_indexer(names)[codes] if len(codes) else codes
    else:
        models = list(models)
        codes = pd.Index(models).get_indexer(both)
        if (codes < 0).any():
            raise ValueError(f"model {both[np.flatnonzero(codes < 0)[0]]!r} of the judgments is not in models")
    n = len(first)
    return codes[:n].astype(np.int64), codes[n:].astype(np.int64), score != 1, list(models)


def outcome_matrices(df: pd.DataFrame, models: list[str] | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(W, T, models)``: ``W[i, j]`` judgments model i won against model j, ``T[i, j] = T[j, i]``
    ties between them."""
    i, j, tie, models = coded(df, models)
    return (*counts_of_codes(i, j, tie, len(models)), models)


def counts_of_codes(i: np.ndarray, j: np.ndarray, tie: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`outcome_matrices` ``(W, T)`` of judgments already :func:`coded` (``k`` models): a
    caller that needs the codes too does not hash the names twice."""
    if not tie.any():
        return np.bincount(i * k + j, minlength=k * k).reshape(k, k), np.zeros((k, k), dtype=np.int64)
    counts = np.bincount(i[~tie] * k + j[~tie], minlength=k * k).reshape(k, k)
    ties = np.bincount(i[tie] * k + j[tie], minlength=k * k).reshape(k, k)
    return counts, ties + ties.T


def win_matrix(df: pd.DataFrame, models: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """``W[i, j]`` = judgments model i won against model j, a tie counting half a win for each
    (integers when there is no tie)."""
    counts, ties, models = outcome_matrices(df, models)
    return (counts + ties / 2 if ties.any() else counts), models


@functools.lru_cache(maxsize=65536)
def binomial_pvalue(wins: int, n: int) -> float:
    """Two-sided exact binomial p-value of ``wins`` out of ``n`` against a fair coin."""
    return float(binomtest(int(wins), int(n), 0.5, alternative="two-sided").pvalue)


def binomial_p_half(k, n) -> np.ndarray:
    """Two-sided exact binomial p-values against 1/2, vectorised (equal to scipy's binomtest:
    the distribution is symmetric, so p = 2 min(P(X <= k), P(X >= k)), capped at 1; 1 if n = 0)."""
    k, n = np.asarray(k), np.asarray(n)
    low = stats.binom.cdf(np.minimum(k, n - k), n, 0.5)
    return np.where(n > 0, np.minimum(1.0, 2 * low), 1.0)


def significance_mark(p: float, alpha: float = 0.05) -> str:
    """'**' for p < alpha / 5, '*' for p < alpha, '' otherwise or without a p-value (as
    :func:`parlai_acute.stats.inference.mark`; at alpha .05: the paper's .01 and .05)."""
    from parlai_acute.stats.inference import mark

    return mark(p, alpha)


MATCHUP_COLUMNS = ["model_a", "model_b", "n", "wins_a", "wins_b", "ties", "winrate_b", "ci_low", "ci_high", "pvalue"]
WORKER_COLUMNS = ["workers", "few_workers", "workers_needed", "test", "reason"]
EXACT = "exact, judgments independent"


def matchups(df: pd.DataFrame, models: list[str] | None = None, confidence: float = 0.95,
             cluster: str | None = None, min_clusters: int = 5, alpha: float = 0.05, seed: int = 0,
             n_resamples: int = 10_000) -> pd.DataFrame:
    """One row per pair of models compared at least once.

    Columns: model_a, model_b (a < b in ``models`` order), n, wins_a, wins_b, winrate_b.
    Without ``cluster``: ci_low, ci_high (Clopper-Pearson of winrate_b at ``confidence``),
    pvalue (two-sided exact binomial, H0: p = 1/2), p_holm (Holm across matchups), mark.
    With ``cluster`` (a column, e.g. "worker"): pvalue, p_holm, ci_low, ci_high and mark
    come from the test over clusters (module docstring; NaN and no mark where none can be
    given, ``reason`` says why, ``workers_needed`` how many a mark needs), ``test`` names it;
    workers (distinct clusters in the matchup), few_workers (fewer than ``min_clusters``);
    the per-judgment ones stay as pvalue_exact, p_holm_exact, ci_low_exact, ci_high_exact.
    """
    first, second, tied_, models = coded(df, models)
    counts, tie_counts = counts_of_codes(first, second, tied_, len(models))
    i, j = np.triu_indices(len(models), 1)
    ties = tie_counts[i, j]
    n = counts[i, j] + counts[j, i] + ties
    keep = n > 0
    i, j, n, ties = i[keep], j[keep], n[keep], ties[keep]
    score_b = counts[j, i] + ties / 2  # a tie is half a win
    # a tie as half a success: the binomial variance p(1 - p) bounds that of a score in {0, 1/2, 1}
    low, high = exact_intervals(score_b, n, confidence)
    decisive = counts[i, j] + counts[j, i]  # the sign test: ties carry no sign
    table = pd.DataFrame({"model_a": np.asarray(models, dtype=object)[i], "model_b": np.asarray(models, dtype=object)[j],
                          "n": n.astype(int), "wins_a": counts[i, j].astype(int), "wins_b": counts[j, i].astype(int),
                          "ties": ties.astype(int), "winrate_b": score_b / np.maximum(n, 1), "ci_low": low,
                          "ci_high": high, "pvalue": binomial_p_half(counts[i, j], decisive).astype(float)},
                         columns=MATCHUP_COLUMNS)
    table["p_holm"] = holm(table["pvalue"].to_numpy())
    table["mark"] = [significance_mark(p, alpha) for p in table["p_holm"]]
    if cluster is not None:
        table = _with_clusters(table, df, cluster, min_clusters, alpha, confidence, seed, n_resamples,
                               (first, second, np.where(tied_, 0.5, 1.0), models))
    return table


def _with_clusters(table: pd.DataFrame, df: pd.DataFrame, cluster: str, min_clusters: int, alpha: float,
                   confidence: float, seed: int, n_resamples: int, sides: tuple) -> pd.DataFrame:
    """The worker-clustered verdict of every matchup (module docstring); the exact columns
    renamed with their assumption. ``sides``: (first, second, score, models) of every judgment,
    the models as their positions in ``models`` (:func:`coded`)."""
    from parlai_acute.stats.inference import paired_cluster_test

    table = table.rename(columns={"pvalue": "pvalue_exact", "p_holm": "p_holm_exact", "ci_low": "ci_low_exact",
                                  "ci_high": "ci_high_exact"}).drop(columns=["mark"])
    names = pd.Index(sorted(set(table["model_a"]) | set(table["model_b"])))
    k = max(len(names), 1)
    first, second, score, models = sides
    position = np.append(names.get_indexer(models), -1)  # a model of no matchup: -1, as get_indexer says
    w, l = position[first], position[second]
    lookup = np.full(k * k, -1)
    lookup[names.get_indexer(table["model_a"]) * k + names.get_indexer(table["model_b"])] = np.arange(len(table))
    # model_a comes first in the caller's order, which need not be sorted: look both ways
    lookup[names.get_indexer(table["model_b"]) * k + names.get_indexer(table["model_a"])] = np.arange(len(table))
    ok = (w >= 0) & (l >= 0)
    column = np.where(ok, lookup[np.where(ok, w * k + l, 0)], -1)
    b_index = np.append(names.get_indexer(table["model_b"]), -2)  # column -1 (unknown pair) -> -2: no model
    diff = np.where(w == b_index[column], 2 * score - 1, 1 - 2 * score)  # +1: model_b won, 0: a tie, -1: model_a won
    known = column >= 0
    worker_codes, worker_names = pd.factorize(df[cluster])
    cells = pd.DataFrame({"m": column[known], "c": worker_codes[known], "d": diff[known]})
    # each (matchup, worker)'s total and count (whole numbers: the order of the cells changes no sum)
    size = max(len(worker_names), 1)
    m_codes = cells["m"].to_numpy(np.int64)
    first, sums, sizes = cell_totals(m_codes * size + cells["c"].to_numpy(np.int64), max(len(table), 1) * size,
                                     cells["d"].to_numpy(float))
    per = pd.DataFrame({"m": m_codes[first], "sum": sums, "size": sizes})
    m_count = len(table)
    workers = np.bincount(per["m"].to_numpy(), minlength=m_count)
    p = np.full(m_count, np.nan)
    low, high = np.full(m_count, np.nan), np.full(m_count, np.nan)
    needed = np.zeros(m_count, dtype=int)
    tests, reasons = [""] * m_count, [""] * m_count
    big = workers >= NORMAL_FROM
    if big.any():
        sub = per[big[per["m"].to_numpy()]]
        res = normal_sign_flip(sub["m"].to_numpy(), sub["sum"].to_numpy(float), sub["size"].to_numpy(float),
                                m_count, confidence)
        p[big], low[big], high[big] = res[0][big], res[1][big], res[2][big]
        for m in np.flatnonzero(big):
            tests[m] = f"sign-flip test over workers (normal limit, t on {workers[m] - 1} df)"
            if not np.isfinite(low[m]):
                reasons[m] = "every worker has the same mean difference, so no interval of non-zero width follows"
    small = cells[~big[cells["m"].to_numpy()]].sort_values("m", kind="stable")
    starts = np.searchsorted(small["m"].to_numpy(), np.arange(m_count + 1))
    d, c = small["d"].to_numpy(), small["c"].to_numpy()
    for m in np.flatnonzero(~big):
        test = paired_cluster_test(d[starts[m]:starts[m + 1]], c[starts[m]:starts[m + 1]], unit="worker",
                                   alpha=alpha, confidence=confidence, seed=seed, n_resamples=n_resamples)
        p[m] = np.nan if test.p_value is None else test.p_value
        if test.low is not None:
            low[m], high[m] = test.low, test.high
        tests[m], reasons[m] = test.method, test.reason or ""
        needed[m] = test.clusters_needed or 0
    table["workers"] = workers
    table["few_workers"] = workers < min_clusters
    table["workers_needed"] = needed
    # the one-facet test over workers stays as a named secondary column: conversations held fixed
    table["pvalue_workers"] = p.copy()
    table["ci_low_workers"] = np.clip((1 + low) / 2, 0, 1)
    table["ci_high_workers"] = np.clip((1 + high) / 2, 0, 1)
    conversations = np.zeros(m_count, dtype=int)
    design = np.array(["workers (each conversation judged once in the matchup)"] * m_count, dtype=object)
    if {"dialogue_left", "dialogue_right", "model_left"} <= set(df.columns):
        _crossed(df, names, table, column, diff, worker_codes, known, alpha, confidence, p, low, high, tests,
                 reasons, needed, conversations, design)
    table["conversations"] = conversations
    table["design"] = design
    table["pvalue"] = p
    table["p_holm"] = holm(p)
    table["mark"] = [significance_mark(q, alpha) for q in table["p_holm"]]
    table["ci_low"] = np.clip((1 + low) / 2, 0, 1)
    table["ci_high"] = np.clip((1 + high) / 2, 0, 1)
    table["workers_needed"] = needed
    table["test"], table["reason"] = tests, reasons
    return table[ORDER]


ORDER = ["model_a", "model_b", "n", "wins_a", "wins_b", "ties", "winrate_b", "ci_low", "ci_high", "pvalue", "p_holm",
         "mark", "workers", "few_workers", "workers_needed", "conversations", "design", "test", "reason",
         "pvalue_workers", "ci_low_workers", "ci_high_workers", "ci_low_exact", "ci_high_exact", "pvalue_exact",
         "p_holm_exact"]


def _crossed(df, names, table, column, diff, worker_codes, known, alpha, confidence, p, low, high, tests, reasons,
             needed, conversations, design) -> None:
    """Where a matchup's conversations are reused (some conversation of either model is in more
    than one of its judgments), the headline test treats workers *and* conversations as sampled
    (:func:`parlai_acute.stats.inference.multiway_tests`, facets: the worker, model A's
    conversation, model B's conversation); the arrays are updated in place. Too few
    conversations for a verdict about the models: no p-value, and the sentence says what the
    one-facet test over workers shows (a verdict about these conversations) and what is needed."""
    from parlai_acute.stats.inference import min_clusters as fewest, multiway_tests

    m_count = len(table)
    left = names.get_indexer(df["model_left"])
    a_index = np.append(names.get_indexer(table["model_a"]), -2)
    left_is_a = left == a_index[column]
    both = np.concatenate([df["dialogue_left"].to_numpy(dtype=object), df["dialogue_right"].to_numpy(dtype=object)])
    if pd.api.types.infer_dtype(both, skipna=True) not in ("string", "empty"):  # ids as text (a validated table's are)
        both = np.where(pd.isna(both), "", pd.Series(both).astype(str).to_numpy())
    dialogues, _ = conversation_codes(both)
    dl, dr = dialogues[: len(df)], dialogues[len(df):]
    dlg_a, dlg_b = np.where(left_is_a, dl, dr)[known], np.where(left_is_a, dr, dl)[known]
    col, d, wk = column[known], diff[known], worker_codes[known]
    n = np.bincount(col, minlength=m_count)
    width = int(dialogues.max()) + 1
    levels_a, levels_b = (np.bincount(col[cell_totals(col * width + dlg, m_count * width, d)[0]],
                                      minlength=m_count)
                          for dlg in (dlg_a, dlg_b))  # distinct conversations of each side per matchup
    conversations[:] = np.minimum(levels_a, levels_b)
    reused = (levels_a < n) | (levels_b < n)
    if not reused.any():
        return
    res = multiway_tests(col, d, [wk, dlg_a, dlg_b], m_count, confidence)
    need = fewest(alpha)
    for m in np.flatnonzero(reused):
        g_w, g_c = int(res["levels"][0, m]), int(conversations[m])
        design[m] = (f"workers x conversations crossed ({g_c} conversations per model reused across {int(n[m])} "
                     f"judgments by {g_w} workers): both facets sampled")
        tests[m] = (f"two-way cluster-robust t over workers and conversations (CR3, t on {int(res['df'][m])} df)")
        worker_p = p[m]
        p[m], low[m], high[m] = np.nan, np.nan, np.nan
        if g_c < need:
            needed[m] = max(needed[m], need)
            shown = "no p-value" if worker_p != worker_p else f"p = {worker_p:.3g}"
            reasons[m] = (f"{g_c} conversations per model: the difference holds for these conversations (test over "
                          f"workers, {shown}); at least {need} conversations per model are needed for a verdict "
                          f"about the models")
        elif g_w < need:
            reasons[m] = reasons[m] or f"only {g_w} workers: a test over workers and conversations needs at least {need}"
        elif not np.isfinite(res["p"][m]):
            reasons[m] = "every worker and conversation has the same mean difference, so no test or interval follows"
            if not d[col == m].any():  # every judgment a tie: no evidence either way, p = 1 (no interval)
                p[m] = 1.0
        else:
            p[m], low[m], high[m] = res["p"][m], max(-1.0, res["low"][m]), min(1.0, res["high"][m])
            reasons[m] = ""


def design_note(table: pd.DataFrame) -> str:
    """One sentence for the terminal, the report and run.json: which facets the marks of a
    question's matchups treat as sampled, and why (what :func:`matchups` read from the table)."""
    if "design" not in table.columns or not len(table):
        return ""
    crossed = table["design"].str.startswith("workers x conversations")
    if not crossed.any():
        return ("each conversation was judged once per matchup, so workers are the one sampled facet: marks and "
                "intervals come from the sign-flip test over workers")
    few = crossed & table["reason"].str.contains("conversations per model are needed", regex=False)
    text = (f"conversations are reused across judgments in {int(crossed.sum())} of {len(table)} matchups, so their "
            f"marks and intervals treat workers and conversations both as sampled (two-way cluster-robust t, CR3, t on "
            f"min(workers, conversations) - 1 df); the test over workers alone, a verdict about these conversations, "
            f"is the secondary column pvalue_workers")
    if few.any():
        text += (f"; {int(few.sum())} matchup(s) have too few conversations per model for a verdict about the models "
                 f"and carry no mark (the reason says how many are needed)")
    return text


def winrate_grid(df: pd.DataFrame, models: list[str] | None = None) -> pd.DataFrame:
    """The paper's table as long format: one row per (loser row, winner column) cell.

    Columns: row, col, n (judgments of the matchup), wins (won by ``col``), winrate (percent
    won by ``col``), pvalue, p_holm, mark. Matchups never compared are absent.
    """
    return grid_from_matchups(matchups(df, models))


GRID_COLUMNS = ["row", "col", "n", "wins", "ties", "winrate", "ci_low", "ci_high", "pvalue", "p_holm", "mark"]
GRID_WORKER_COLUMNS = ["workers", "few_workers", "workers_needed", "reason", "ci_low_exact", "ci_high_exact",
                       "pvalue_exact", "p_holm_exact"]


def grid_from_matchups(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`winrate_grid` from an already computed :func:`matchups` table. Intervals
    (proportions won by ``col``) and worker columns are carried over when present."""
    cells = []
    clustered = "workers" in table.columns
    for m in table.to_dict(orient="records"):
        for row, col, wins, flip in ((m["model_a"], m["model_b"], m["wins_b"], False),
                                     (m["model_b"], m["model_a"], m["wins_a"], True)):
            ties = m.get("ties", 0)
            cell = {"row": row, "col": col, "n": m["n"], "wins": wins, "ties": ties,
                    "winrate": 100.0 * (wins + ties / 2) / m["n"],
                    "pvalue": m["pvalue"], "p_holm": m["p_holm"], "mark": m["mark"]}
            for low, high in (("ci_low", "ci_high"), ("ci_low_exact", "ci_high_exact")):
                if low in m:
                    cell[low], cell[high] = (1 - m[high], 1 - m[low]) if flip else (m[low], m[high])
            if clustered:
                cell.update({k: m[k] for k in GRID_WORKER_COLUMNS if k not in cell})
            cells.append(cell)
    columns = GRID_COLUMNS + (GRID_WORKER_COLUMNS if clustered else [])
    return pd.DataFrame(cells, columns=columns)


def grid_table(grid: pd.DataFrame, models: list[str], value: str = "winrate") -> pd.DataFrame:
    """Wide table (index: rows/losers, columns: winners) of one value of :func:`winrate_grid`."""
    wide = grid.pivot(index="row", columns="col", values=value) if len(grid) else pd.DataFrame()
    return wide.reindex(index=models, columns=models)


def side_bias(df: pd.DataFrame) -> dict:
    """How often the left conversation won, with a two-sided binomial test against 1/2.

    With left/right randomised this is an A/A check of the interface: a bias here does not
    bias the win rates, but a strong one means annotators are not reading both sides.
    """
    decisive = ~tied(df)  # a tie picks no side (the one column read: no copy of the table)
    n = int(decisive.sum())
    left = int((df["winner_side"].to_numpy(dtype=object)[decisive] == "left").sum()) if n else 0
    pvalue = binomial_pvalue(left, n) if n else float("nan")
    return {"n": n, "left_wins": left, "left_rate": left / n if n else float("nan"), "pvalue": pvalue}


#: the shares of :func:`outcome_rates`: B won outright, tie (any kind), A won outright, both bad
OUTCOME_SHARES = ["won_b", "tie_rate", "won_a", "both_bad_rate"]


def outcome_rates(df: pd.DataFrame, models: list[str] | None = None, confidence: float = 0.95,
                  cluster: str = "worker", min_clusters: int = 5, resamples: int = 1000,
                  seed: int = 0) -> pd.DataFrame:
    """Win, tie and loss rates of every matchup (``model_a`` < ``model_b`` in ``models`` order),
    each with its interval: ``won_b`` (share of the pair's judgments B won outright), ``tie_rate``
    (share tied, "both bad" included), ``won_a`` (A's outright wins: B's loss rate) and
    ``both_bad_rate``; they add up to one without ``both_bad_rate``, a part of ``tie_rate``.

    Interval (``<share>_low``/``_high``, method in ``<share>_interval``): the percentile bootstrap
    of whole ``cluster`` units (workers: a worker's judgments share their taste) from
    ``min_clusters`` of them on; else, or where the resamples do not vary (a share of 0 or 1
    everywhere), Clopper-Pearson, which treats judgments as independent and says so."""
    models = models or models_of(df)
    index = {m: i for i, m in enumerate(models)}
    first, second, score = scored(df)
    f, s = pd.Series(first).map(index).to_numpy(), pd.Series(second).map(index).to_numpy()
    a, b = np.minimum(f, s), np.maximum(f, s)
    tie = score != 1
    both_bad = (df["outcome"].to_numpy(dtype=object) == "both_bad") if "outcome" in df.columns else tie & False
    values = np.column_stack([~tie & (f == b), tie, ~tie & (f == a), both_bad]).astype(float)
    k = max(len(models), 1)
    pair = a * k + b
    codes = pd.factorize(df[cluster])[0] if len(df) else np.zeros(0, dtype=int)
    rng = np.random.default_rng(seed)
    level = f"{100 * confidence:g}%"
    rows = []
    for key in np.unique(pair):
        rows_of = pair == key
        part, n = values[rows_of], int(rows_of.sum())
        workers = pd.factorize(codes[rows_of])[0]
        g = int(workers.max()) + 1
        counts = part.sum(axis=0)
        row = {"model_a": models[key // k], "model_b": models[key % k], "n": n, "workers": g}
        low, high = exact_intervals(counts, np.full(4, n), confidence)
        method = np.array([f"{level} Clopper-Pearson (judgments independent: fewer than {min_clusters} workers)"] * 4,
                          dtype=object)
        if g >= min_clusters and resamples > 0:
            sums, sizes = cluster_totals(part, workers)
            b_low, b_high = percentile_interval(cluster_bootstrap(sums, sizes, resamples, rng), confidence)
            ok = np.isfinite(b_low)
            low, high = np.where(ok, b_low, low), np.where(ok, b_high, high)
            method = np.where(ok, f"{level} percentile bootstrap of whole workers ({g})",
                              f"{level} Clopper-Pearson (judgments independent: the worker resamples do not vary)")
        for c, name in enumerate(OUTCOME_SHARES):
            row |= {name: counts[c] / n, f"{name}_low": float(low[c]), f"{name}_high": float(high[c]),
                    f"{name}_interval": str(method[c])}
        rows.append(row)
    columns = ["model_a", "model_b", "n", "workers"] + [f"{name}{suffix}" for name in OUTCOME_SHARES
                                                       for suffix in ("", "_low", "_high", "_interval")]
    return pd.DataFrame(rows, columns=columns)
