"""Pairwise win rates with exact binomial tests and Holm correction.

ACUTE-Eval judgments are binary (one model of the pair wins), so each matchup is a
binomial experiment: under "no difference" each side wins with probability 1/2. The
tables follow the paper: cell (row=A, column=B) is the percentage of A-vs-B judgments won
by B. Inputs are tidy judgment tables with at least ``winner`` and ``loser`` columns.

Every win rate carries an exact (Clopper-Pearson) interval. Judgments by one worker are
not independent, so with ``cluster="worker"`` each matchup also says how many workers
made its judgments, flags matchups resting on fewer than ``min_clusters`` of them, and
adds a percentile bootstrap interval that resamples whole workers.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from parlai_acute.stats.intervals import clopper_pearson, percentile_interval
from parlai_acute.stats.resample import cluster_sums, resample_weights


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


def holm(pvalues) -> np.ndarray:
    """Holm-adjusted p-values (family-wise error control, valid under any dependence)."""
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return p
    return multipletests(p, method="holm")[1]


def significance_mark(p: float) -> str:
    """'**' for p < .01, '*' for p < .05, '' otherwise (as in the paper's tables)."""
    return "**" if p < 0.01 else "*" if p < 0.05 else ""


MATCHUP_COLUMNS = ["model_a", "model_b", "n", "wins_a", "wins_b", "winrate_b", "ci_low", "ci_high", "pvalue"]
WORKER_COLUMNS = ["workers", "few_workers", "ci_low_workers", "ci_high_workers"]


def matchups(df: pd.DataFrame, models: list[str] | None = None, confidence: float = 0.95,
             cluster: str | None = None, min_clusters: int = 5, bootstrap: int = 1000,
             seed: int = 0) -> pd.DataFrame:
    """One row per pair of models compared at least once.

    Columns: model_a, model_b (a < b in ``models`` order), n, wins_a, wins_b, winrate_b,
    ci_low, ci_high (Clopper-Pearson interval of winrate_b at ``confidence``), pvalue
    (two-sided exact binomial, H0: p = 1/2), p_holm (Holm across all matchups), mark.
    With ``cluster`` (a column, e.g. "worker") also: workers (distinct values in the
    matchup), few_workers (fewer than ``min_clusters``), ci_low_workers/ci_high_workers
    (winrate_b, ``bootstrap`` resamples of whole workers; NaN where none can be given).
    """
    counts, models = win_matrix(df, models)
    rows = []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            n = int(counts[i, j] + counts[j, i])
            if n == 0:
                continue
            pvalue = binomial_pvalue(int(counts[i, j]), n)
            low, high = clopper_pearson(int(counts[j, i]), n, confidence)
            rows.append({"model_a": models[i], "model_b": models[j], "n": n, "wins_a": int(counts[i, j]),
                         "wins_b": int(counts[j, i]), "winrate_b": counts[j, i] / n, "ci_low": low, "ci_high": high,
                         "pvalue": float(pvalue)})
    table = pd.DataFrame(rows, columns=MATCHUP_COLUMNS)
    table["p_holm"] = holm(table["pvalue"].to_numpy())
    table["mark"] = [significance_mark(p) for p in table["p_holm"]]
    if cluster is not None:
        table = _with_clusters(table, df, cluster, min_clusters, bootstrap, seed, confidence)
    return table


def _with_clusters(table: pd.DataFrame, df: pd.DataFrame, cluster: str, min_clusters: int, bootstrap: int,
                   seed: int, confidence: float) -> pd.DataFrame:
    """Workers per matchup and the worker-resampling interval of winrate_b (one bootstrap of
    the question's workers; each resample's win rate of every matchup)."""
    table = table.copy()
    index = {(a, b): m for m, (a, b) in enumerate(zip(table["model_a"], table["model_b"]))}
    winner, loser = df["winner"].astype(str).to_numpy(), df["loser"].astype(str).to_numpy()
    column = np.array([index.get((w, l), index.get((l, w), -1)) for w, l in zip(winner, loser)])
    b_won = np.array([index.get((l, w), -1) >= 0 for w, l in zip(winner, loser)], dtype=float)
    known = column >= 0
    codes, uniques = pd.factorize(df[cluster])
    pairs = pd.DataFrame({"m": column[known], "c": codes[known]}).drop_duplicates()
    table["workers"] = pairs.groupby("m").size().reindex(range(len(table)), fill_value=0).to_numpy()
    table["few_workers"] = table["workers"] < min_clusters
    low = high = np.full(len(table), np.nan)
    if bootstrap > 0 and len(uniques) >= 2 and len(table):
        weights = resample_weights(len(uniques), bootstrap, np.random.default_rng([seed, 1]))
        wins = cluster_sums(weights, codes[known], column[known], b_won[known], len(table))
        totals = cluster_sums(weights, codes[known], column[known], np.ones(known.sum()), len(table))
        with np.errstate(invalid="ignore", divide="ignore"):
            low, high = percentile_interval(wins / totals, confidence)
        alone = table["workers"].to_numpy() < 2
        low, high = np.where(alone, np.nan, low), np.where(alone, np.nan, high)
    table["ci_low_workers"], table["ci_high_workers"] = low, high
    return table


def winrate_grid(df: pd.DataFrame, models: list[str] | None = None) -> pd.DataFrame:
    """The paper's table as long format: one row per (loser row, winner column) cell.

    Columns: row, col, n (judgments of the matchup), wins (won by ``col``), winrate (percent
    won by ``col``), pvalue, p_holm, mark. Matchups never compared are absent.
    """
    return grid_from_matchups(matchups(df, models))


GRID_COLUMNS = ["row", "col", "n", "wins", "winrate", "ci_low", "ci_high", "pvalue", "p_holm", "mark"]


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
            for low, high in (("ci_low", "ci_high"), ("ci_low_workers", "ci_high_workers")):
                if low in m:
                    cell[low], cell[high] = (1 - m[high], 1 - m[low]) if flip else (m[low], m[high])
            if clustered:
                cell["workers"], cell["few_workers"] = m["workers"], m["few_workers"]
            cells.append(cell)
    columns = GRID_COLUMNS + (WORKER_COLUMNS if clustered else [])
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
