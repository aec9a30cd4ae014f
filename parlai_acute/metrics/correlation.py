"""Do the metrics agree with people? Correlations with human ratings (Gupta et al. 2019, Table 4)
and of per-model perplexity with per-model human scores (Meena's R^2).

Per response: Pearson and Spearman (scipy) between each metric, single- and
multi-reference, and the rating of each response. Per system: the same between models'
mean metric and mean rating.

Intervals. Per response: seeded percentile bootstrap, resampling responses. Per system the
sampled units are the systems, so the interval is over systems: Fisher's z for Pearson
(se 1/sqrt(k - 3)) and Bonett and Wright's (2000) for Spearman (se sqrt((1 + r^2/2) /
(k - 3))); it needs 4 or more systems and a correlation short of +-1 (then z is infinite
and the interval would be a point). The old interval, resampling responses within each
model (``*_within_low/high``), says only how sure the ordering of *these* systems is: with
3 systems it printed +1.00 [+1.00, +1.00]; it is kept as a secondary column, named so.
Where no interval can be given ``*_note`` says why in words. With fewer than 3 systems a
system-level correlation is not computed (NaN).

P-values (``*_p``) test no correlation over each level's units. Per response: scipy's
(Pearson: the t test under normality; Spearman: its t approximation), as the published tables
computed them. Per system, with at most :data:`EXACT_SYSTEMS` systems: the exact permutation
test over every pairing of the two columns (two-sided), because the t approximation gives
p ~ 0 to a perfect correlation of three systems, where chance alone makes one in three; above
that, scipy's. Papers print them beside the correlations and mark those above .05.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from parlai_acute.errors import UserError
from parlai_acute.stats.intervals import percentile_interval


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of two (B, n) matrices; NaN where a row is constant."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    denom = np.sqrt((xc ** 2).sum(axis=1) * (yc ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (xc * yc).sum(axis=1) / np.where(denom > 0, denom, 1), np.nan)


#: up to this many systems, system-level p-values come from the exact permutation test (8! pairings)
EXACT_SYSTEMS = 8


def _tests(x, y, exact: bool = False) -> tuple[float, float, float, float]:
    """(Pearson r, Spearman rho, Pearson p, Spearman p); NaN where undefined (a constant column).
    ``exact``: the p-values of the exact permutation test when there are at most
    :data:`EXACT_SYSTEMS` pairs, scipy's otherwise."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return (float("nan"),) * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pearson, spearman = stats.pearsonr(x, y), stats.spearmanr(x, y)
    r, rho, p_r, p_rho = (float(pearson.statistic), float(spearman.statistic), float(pearson.pvalue),
                          float(spearman.pvalue))
    if exact and len(x) <= EXACT_SYSTEMS:
        p_r, p_rho = _permutation_p(x, y, r), _permutation_p(stats.rankdata(x), stats.rankdata(y), rho)
    return r, rho, p_r, p_rho


def _permutation_p(x: np.ndarray, y: np.ndarray, observed: float) -> float:
    """Two-sided exact permutation p of Pearson's r of ``x`` and ``y``: the share of all pairings
    (every permutation of ``x``) whose |r| reaches the observed one."""
    import itertools

    perms = np.array(list(itertools.permutations(range(len(x)))))
    draws = _pearson_rows(x[perms], np.broadcast_to(y, perms.shape))
    return float(np.mean(np.abs(draws) >= abs(observed) - 1e-12))


def _interval(draws: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile interval; NaN where it has no width or too few defined resamples."""
    if draws.size < 10:
        return float("nan"), float("nan")
    low, high = percentile_interval(draws[:, None], level)
    return float(low[0]), float(high[0])


def fisher_z_interval(r: float, k: int, level: float, spearman: bool = False) -> tuple[float, float, str]:
    """Interval over ``k`` systems of a correlation ``r`` (Fisher z; Bonett-Wright for
    Spearman), and why none can be given ('' when it can)."""
    if not np.isfinite(r):
        return float("nan"), float("nan"), "undefined correlation (fewer than 3 systems, or a constant column)"
    if k < 4:
        return float("nan"), float("nan"), (f"{k} systems are too few for an interval over systems (Fisher z needs "
                                            f"4 or more)")
    if abs(r) >= 1 - 1e-12:
        return float("nan"), float("nan"), (f"a perfect correlation over {k} systems: Fisher's z is infinite, so no "
                                            f"interval of non-zero width follows from so few systems")
    se = math.sqrt((1 + r ** 2 / 2) / (k - 3)) if spearman else 1 / math.sqrt(k - 3)
    z = stats.norm.ppf(0.5 + level / 2)
    return float(math.tanh(math.atanh(r) - z * se)), float(math.tanh(math.atanh(r) + z * se)), ""


def response_level(table: pd.DataFrame, metric_columns: list[str], rating: str = "rating",
                   resamples: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    y = table[rating].to_numpy(dtype=float)
    n = len(y)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(resamples, n)) if resamples and n >= 3 else None
    rows = []
    for column in metric_columns:
        x = table[column].to_numpy(dtype=float)
        pearson, spearman, pearson_p, spearman_p = _tests(x, y)
        row = {"metric": column, "n": n, "pearson": pearson, "spearman": spearman, "pearson_p": pearson_p,
               "spearman_p": spearman_p}
        if index is not None:
            xb, yb = x[index], y[index]
            row["pearson_low"], row["pearson_high"] = _interval(_pearson_rows(xb, yb), level)
            ranks_x = stats.rankdata(xb, axis=1)
            ranks_y = stats.rankdata(yb, axis=1)
            row["spearman_low"], row["spearman_high"] = _interval(_pearson_rows(ranks_x, ranks_y), level)
        rows.append(row)
    return pd.DataFrame(rows)


def system_level(table: pd.DataFrame, metric_columns: list[str], rating: str = "rating", model: str = "model",
                 resamples: int = 1000, seed: int = 0, level: float = 0.95) -> pd.DataFrame:
    groups = [g for _, g in table.groupby(model, sort=True)]
    k = len(groups)
    rng = np.random.default_rng(seed)
    rows = []
    for column in metric_columns:
        means = np.array([[g[column].mean(), g[rating].mean()] for g in groups], dtype=float)
        pearson, spearman, pearson_p, spearman_p = (_tests(means[:, 0], means[:, 1], exact=True) if k >= 3
                                                    else (float("nan"),) * 4)
        row = {"metric": column, "n": k, "pearson": pearson, "spearman": spearman, "pearson_p": pearson_p,
               "spearman_p": spearman_p}
        for stat, value in (("pearson", pearson), ("spearman", spearman)):
            row[f"{stat}_low"], row[f"{stat}_high"], row[f"{stat}_note"] = fisher_z_interval(
                value, k, level, spearman=stat == "spearman")
        if k >= 3 and resamples:
            draws = np.empty((resamples, k, 2))
            for j, g in enumerate(groups):
                values = g[[column, rating]].to_numpy(dtype=float)
                idx = rng.integers(0, len(values), size=(resamples, len(values)))
                draws[:, j, :] = values[idx].mean(axis=1)
            row["pearson_within_low"], row["pearson_within_high"] = _interval(
                _pearson_rows(draws[:, :, 0], draws[:, :, 1]), level)
            ranks = [stats.rankdata(draws[:, :, c], axis=1) for c in (0, 1)]
            row["spearman_within_low"], row["spearman_within_high"] = _interval(_pearson_rows(*ranks), level)
        rows.append(row)
    return pd.DataFrame(rows)


def gupta_table(correlations: pd.DataFrame, base_metrics: list[str]) -> pd.DataFrame:
    """Rows: metrics; columns: Spearman and Pearson, single- and multi-reference (Gupta et al.'s Table 4)."""
    by = correlations.set_index("metric")
    rows = []
    for metric in base_metrics:
        row = {"metric": metric}
        for kind in ("single", "multi"):
            key = f"{metric}_{kind}"
            for stat in ("spearman", "pearson"):
                row[f"{stat}_{kind}"] = by.loc[key, stat] if key in by.index else float("nan")
                for end in ("low", "high", "p"):
                    name = f"{stat}_{end}"
                    row[f"{stat}_{kind}_{end}"] = by.loc[key, name] if key in by.index and name in by else float("nan")
                if f"{stat}_note" in by:
                    row[f"{stat}_{kind}_note"] = by.loc[key, f"{stat}_note"] if key in by.index else ""
        rows.append(row)
    return pd.DataFrame(rows)


def perplexity_vs_human(table: pd.DataFrame, perplexity: str = "perplexity", scores: list[str] | None = None,
                        model: str = "model") -> pd.DataFrame:
    """Per human score column: linear fit of score on perplexity across models (Meena: R^2 = 0.93
    for SSA), Pearson r with its Fisher-z interval (scipy; needs 4 or more models)."""
    for column in [model, perplexity] + list(scores or []):
        if column not in table:
            raise UserError(f"system scores: missing column {column!r}; the columns are {', '.join(table.columns)}")
    scores = scores or [c for c in table.columns if c not in (model, perplexity)]
    if not scores:
        raise UserError("system scores: no human score column (e.g. ssa, win_rate) beside the perplexity")
    if len(table) < 3:
        raise UserError(f"system scores: {len(table)} models are too few for a correlation; give 3 or more")
    x = table[perplexity].to_numpy(dtype=float)
    rows = []
    for column in scores:
        y = table[column].to_numpy(dtype=float)
        fit = stats.linregress(x, y)
        row = {"score": column, "models": len(table), "slope": float(fit.slope), "intercept": float(fit.intercept),
               "r": float(fit.rvalue), "r_squared": float(fit.rvalue ** 2), "p_value": float(fit.pvalue)}
        row["r_low"] = row["r_high"] = float("nan")
        if not np.isfinite(fit.rvalue):
            row["r_note"] = "undefined correlation: a constant column"
        elif len(table) < 4:
            row["r_note"] = f"{len(table)} models: a Fisher-z interval needs 4 or more"
        elif abs(fit.rvalue) >= 1 - 1e-12:
            row["r_note"] = "a perfect correlation: no interval of non-zero width"
        else:
            ci = stats.pearsonr(x, y).confidence_interval()
            row["r_low"], row["r_high"], row["r_note"] = float(ci.low), float(ci.high), ""
        rows.append(row)
    return pd.DataFrame(rows)
