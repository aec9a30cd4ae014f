"""Tests for choices made on the same items (turns), and the cluster bootstrap.

Per-turn evaluation asks, at every turn, which of k candidate replies are good. The picks of
one turn form a row of 0/1 values, one per model, so comparisons between models are
*paired*: McNemar's test for two models, Cochran's Q for k, a binomial test on the turns
where exactly one of two was picked. These treat turns as independent ("exact, judgments
independent"); they are secondary columns. The turns of one dialogue share a conversation,
a worker and a mood, so the headline marks come from :mod:`parlai_acute.stats.inference`.

Every function is pure: arrays in, numbers or arrays out; the tests are scipy's and
statsmodels'.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q as _cochrans_q
from statsmodels.stats.contingency_tables import mcnemar

from parlai_acute.stats.winrates import binomial_pvalue

__all__ = ["paired_counts", "mcnemar_exact", "binomial_test", "cochran_q", "chisquare_uniform", "fisher_exact",
           "two_proportion_z"]

_NAN = float("nan")


def paired_counts(a: np.ndarray, b: np.ndarray) -> dict:
    """The 2x2 table of two models' picks over the same turns: both, a only, b only, neither."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    return {"both": int((a & b).sum()), "a_only": int((a & ~b).sum()), "b_only": int((~a & b).sum()),
            "neither": int((~a & ~b).sum())}


def mcnemar_exact(counts: dict) -> float:
    """Exact McNemar p-value (statsmodels, binomial on the discordant turns); 1 without any."""
    table = [[counts["both"], counts["a_only"]], [counts["b_only"], counts["neither"]]]
    if counts["a_only"] + counts["b_only"] == 0:
        return 1.0
    return float(mcnemar(table, exact=True).pvalue)


def binomial_test(wins: int, n: int) -> float:
    """Two-sided exact binomial p-value against 1/2 (scipy ``binomtest``); NaN for n = 0."""
    return binomial_pvalue(int(wins), int(n)) if n > 0 else _NAN


def cochran_q(picks: np.ndarray) -> dict:
    """Cochran's Q over a (turns, k) 0/1 matrix (statsmodels). Undefined (NaN) when every turn
    gave all k the same verdict: then the data say nothing about differences."""
    picks = np.asarray(picks, dtype=float)
    k = picks.shape[1]
    row = picks.sum(axis=1)
    if picks.shape[0] == 0 or not np.any((row > 0) & (row < k)):
        return {"statistic": _NAN, "df": k - 1, "pvalue": _NAN}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _cochrans_q(picks)
    return {"statistic": float(res.statistic), "df": int(res.df), "pvalue": float(res.pvalue)}


def chisquare_uniform(counts) -> dict:
    """Pearson's chi-squared goodness of fit of counts against equal shares (scipy)."""
    counts = np.asarray(counts, dtype=float)
    if counts.sum() == 0:
        return {"statistic": _NAN, "df": len(counts) - 1, "pvalue": _NAN}
    res = stats.chisquare(counts)
    return {"statistic": float(res.statistic), "df": len(counts) - 1, "pvalue": float(res.pvalue)}


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided Fisher exact p-value of k1/n1 against k2/n2 (scipy)."""
    if n1 <= 0 or n2 <= 0:
        return _NAN
    return float(stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def two_proportion_z(k1: int, n1: int, k2: int, n2: int) -> float:
    """Pooled two-proportion z-test p-value (statsmodels); NaN when undefined."""
    from statsmodels.stats.proportion import proportions_ztest

    pooled = (k1 + k2) / (n1 + n2) if n1 + n2 else _NAN
    if n1 <= 0 or n2 <= 0 or pooled in (0.0, 1.0):
        return _NAN
    return float(proportions_ztest([k1, k2], [n1, n2])[1])
