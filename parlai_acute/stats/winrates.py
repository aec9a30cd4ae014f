"""Pairwise win rates: worker-clustered tests behind the marks, exact binomial tests beside them.

ACUTE-Eval judgments are binary (one model of the pair wins). The tables follow the paper:
cell (row=A, column=B) is the percentage of A-vs-B judgments won by B.

The sampled unit is the worker: one worker's judgments share that worker's taste, so
with ``cluster="worker"`` (the analysis) the headline p-value, interval and mark of each
matchup come from a test over workers (:mod:`parlai_acute.stats.inference`): a sign-flip
test of each worker's total of the per-judgment differences (+1 B won, -1 A won), exact
or Monte Carlo, and its inverted interval, converted to B's win rate. From
:data:`NORMAL_FROM` workers on, the sign-flip distribution is replaced by its normal limit
(mean 0, variance the sum of the squared worker totals: the cluster-robust score test),
with a t on G - 1 degrees of freedom, and the interval by the same test inverted in closed
form; it is what makes a million judgments affordable, and with that many workers the two
agree (tested). A matchup judged by too few workers for the test to reach ``alpha`` gets
no mark and says how many workers it needs. Holm runs across the matchups of a question.

Secondary columns, named with their assumption ("exact, judgments independent"): the
two-sided exact binomial p-value against 1/2 (``pvalue_exact``, ``p_holm_exact``) and the
Clopper-Pearson interval (``ci_low_exact``/``ci_high_exact``), both vectorised over
matchups (scipy's beta quantiles and binomial cdf). Without ``cluster`` the table is the
per-judgment one alone (columns ``pvalue``, ``p_holm``, ``ci_low``, ``ci_high``, ``mark``).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy import stats
from scipy.stats import binomtest

from parlai_acute.stats.inference import NORMAL_FROM, normal_sign_flip  # one place for the limit
from parlai_acute.stats.intervals import exact_intervals
from parlai_acute.stats.multitest import holm

__all__ = ["models_of", "win_matrix", "binomial_pvalue", "binomial_p_half", "significance_mark",
           "MATCHUP_COLUMNS", "WORKER_COLUMNS", "EXACT", "matchups", "winrate_grid", "GRID_COLUMNS",
           "GRID_WORKER_COLUMNS", "grid_from_matchups", "grid_table", "side_bias"]


def models_of(df: pd.DataFrame) -> list[str]:
    """All model names in the judgments, sorted."""
    return sorted(set(df["winner"]).union(df["loser"]))


def win_matrix(df: pd.DataFrame, models: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """``W[i, j]`` = number of judgments model i won against model j."""
    models = models or models_of(df)
    index = {m: i for i, m in enumerate(models)}
    counts = np.zeros((len(models), len(models)), dtype=np.int64)
    if len(df):
        w = df["winner"].map(index).to_numpy()
        l = df["loser"].map(index).to_numpy()
        np.add.at(counts, (w, l), 1)
    return counts, models


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


MATCHUP_COLUMNS = ["model_a", "model_b", "n", "wins_a", "wins_b", "winrate_b", "ci_low", "ci_high", "pvalue"]
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
    counts, models = win_matrix(df, models)
    i, j = np.triu_indices(len(models), 1)
    n = counts[i, j] + counts[j, i]
    keep = n > 0
    i, j, n = i[keep], j[keep], n[keep]
    low, high = exact_intervals(counts[j, i], n, confidence)
    table = pd.DataFrame({"model_a": np.asarray(models, dtype=object)[i], "model_b": np.asarray(models, dtype=object)[j],
                          "n": n.astype(int), "wins_a": counts[i, j].astype(int), "wins_b": counts[j, i].astype(int),
                          "winrate_b": counts[j, i] / np.maximum(n, 1), "ci_low": low, "ci_high": high,
                          "pvalue": binomial_p_half(counts[i, j], n).astype(float)}, columns=MATCHUP_COLUMNS)
    table["p_holm"] = holm(table["pvalue"].to_numpy())
    table["mark"] = [significance_mark(p, alpha) for p in table["p_holm"]]
    if cluster is not None:
        table = _with_clusters(table, df, cluster, min_clusters, alpha, confidence, seed, n_resamples)
    return table


def _with_clusters(table: pd.DataFrame, df: pd.DataFrame, cluster: str, min_clusters: int, alpha: float,
                   confidence: float, seed: int, n_resamples: int) -> pd.DataFrame:
    """The worker-clustered verdict of every matchup (module docstring); the exact columns
    renamed with their assumption."""
    from parlai_acute.stats.inference import paired_cluster_test

    table = table.rename(columns={"pvalue": "pvalue_exact", "p_holm": "p_holm_exact", "ci_low": "ci_low_exact",
                                  "ci_high": "ci_high_exact"}).drop(columns=["mark"])
    names = pd.Index(sorted(set(table["model_a"]) | set(table["model_b"])))
    k = max(len(names), 1)
    w, l = names.get_indexer(df["winner"]), names.get_indexer(df["loser"])
    lookup = np.full(k * k, -1)
    lookup[names.get_indexer(table["model_a"]) * k + names.get_indexer(table["model_b"])] = np.arange(len(table))
    # model_a comes first in the caller's order, which need not be sorted: look both ways
    lookup[names.get_indexer(table["model_b"]) * k + names.get_indexer(table["model_a"])] = np.arange(len(table))
    ok = (w >= 0) & (l >= 0)
    column = np.where(ok, lookup[np.where(ok, w * k + l, 0)], -1)
    b_index = np.append(names.get_indexer(table["model_b"]), -2)  # column -1 (unknown pair) -> -2: no model
    diff = np.where(w == b_index[column], 1.0, -1.0)  # +1: model_b won
    known = column >= 0
    worker_codes, _ = pd.factorize(df[cluster])
    cells = pd.DataFrame({"m": column[known], "c": worker_codes[known], "d": diff[known]})
    per = cells.groupby(["m", "c"], sort=True)["d"].agg(["sum", "size"]).reset_index()
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
    table["pvalue"] = p
    table["p_holm"] = holm(p)
    table["mark"] = [significance_mark(q, alpha) for q in table["p_holm"]]
    table["ci_low"] = np.clip((1 + low) / 2, 0, 1)
    table["ci_high"] = np.clip((1 + high) / 2, 0, 1)
    table["test"], table["reason"] = tests, reasons
    order = ["model_a", "model_b", "n", "wins_a", "wins_b", "winrate_b", "ci_low", "ci_high", "pvalue", "p_holm",
             "mark", "workers", "few_workers", "workers_needed", "test", "reason", "ci_low_exact", "ci_high_exact",
             "pvalue_exact", "p_holm_exact"]
    return table[order]


def winrate_grid(df: pd.DataFrame, models: list[str] | None = None) -> pd.DataFrame:
    """The paper's table as long format: one row per (loser row, winner column) cell.

    Columns: row, col, n (judgments of the matchup), wins (won by ``col``), winrate (percent
    won by ``col``), pvalue, p_holm, mark. Matchups never compared are absent.
    """
    return grid_from_matchups(matchups(df, models))


GRID_COLUMNS = ["row", "col", "n", "wins", "winrate", "ci_low", "ci_high", "pvalue", "p_holm", "mark"]
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
            cell = {"row": row, "col": col, "n": m["n"], "wins": wins, "winrate": 100.0 * wins / m["n"],
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
    n = int(len(df))
    left = int((df["winner_side"] == "left").sum()) if n else 0
    pvalue = binomial_pvalue(left, n) if n else float("nan")
    return {"n": n, "left_wins": left, "left_rate": left / n if n else float("nan"), "pvalue": pvalue}
