"""Pairwise win rates with exact binomial tests and Holm correction.

ACUTE-Eval judgments are binary (one model of the pair wins), so each matchup is a
binomial experiment: under "no difference" each side wins with probability 1/2. The
tables follow the paper: cell (row=A, column=B) is the percentage of A-vs-B judgments won
by B. Inputs are tidy judgment tables with at least ``winner`` and ``loser`` columns.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests


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


def matchups(df: pd.DataFrame, models: list[str] | None = None) -> pd.DataFrame:
    """One row per pair of models compared at least once.

    Columns: model_a, model_b (a < b in ``models`` order), n, wins_a, wins_b, winrate_b,
    pvalue (two-sided exact binomial, H0: p = 1/2), p_holm (Holm across all matchups), mark.
    """
    counts, models = win_matrix(df, models)
    rows = []
    for i in range(len(models)):
        for j in range(i + 1, len(models)):
            n = int(counts[i, j] + counts[j, i])
            if n == 0:
                continue
            pvalue = binomial_pvalue(int(counts[i, j]), n)
            rows.append({"model_a": models[i], "model_b": models[j], "n": n, "wins_a": int(counts[i, j]),
                         "wins_b": int(counts[j, i]), "winrate_b": counts[j, i] / n, "pvalue": float(pvalue)})
    table = pd.DataFrame(rows, columns=["model_a", "model_b", "n", "wins_a", "wins_b", "winrate_b", "pvalue"])
    table["p_holm"] = holm(table["pvalue"].to_numpy())
    table["mark"] = [significance_mark(p) for p in table["p_holm"]]
    return table


def winrate_grid(df: pd.DataFrame, models: list[str] | None = None) -> pd.DataFrame:
    """The paper's table as long format: one row per (loser row, winner column) cell.

    Columns: row, col, n (judgments of the matchup), wins (won by ``col``), winrate (percent
    won by ``col``), pvalue, p_holm, mark. Matchups never compared are absent.
    """
    return grid_from_matchups(matchups(df, models))


def grid_from_matchups(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`winrate_grid` from an already computed :func:`matchups` table."""
    cells = []
    for m in table.itertuples(index=False):
        for row, col, wins in ((m.model_a, m.model_b, m.wins_b), (m.model_b, m.model_a, m.wins_a)):
            cells.append({"row": row, "col": col, "n": m.n, "wins": wins, "winrate": 100.0 * wins / m.n,
                          "pvalue": m.pvalue, "p_holm": m.p_holm, "mark": m.mark})
    return pd.DataFrame(cells, columns=["row", "col", "n", "wins", "winrate", "pvalue", "p_holm", "mark"])


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
