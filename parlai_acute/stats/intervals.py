"""The one place for intervals, and for the rule of when none can be given.

An interval is never a point and never NaN pretending to be a number: when the data
cannot support one (no observations, every resample the same value, most resamples
undefined) the bounds are NaN and the caller says why in words. The cluster-aware
intervals of the headline verdicts (inverted randomisation tests) live with their tests
in :mod:`parlai_acute.stats.inference`.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
from scipy.stats import beta, binomtest

__all__ = ["clopper_pearson", "exact_intervals", "percentile_interval", "no_percentile_interval", "too_few"]

_NAN = float("nan")


@functools.lru_cache(maxsize=65536)
def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval of the proportion ``k / n`` (scipy), never narrower
    than the data allow (6 of 6 gives [0.54, 1] at 95 %); (NaN, NaN) for n = 0."""
    if n <= 0:
        return _NAN, _NAN
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def exact_intervals(wins, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """:func:`clopper_pearson` for arrays of counts at once (beta
    quantiles, no call per matchup; NaN where n = 0)."""
    k, n = np.asarray(wins, dtype=float), np.asarray(n, dtype=float)
    tail = (1 - confidence) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(k > 0, beta.ppf(tail, k, n - k + 1), 0.0)
        high = np.where(k < n, beta.ppf(1 - tail, k + 1, n - k), 1.0)
    bad = n <= 0
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


#: Share of resamples that must give a value for a percentile interval.
DEFINED_SHARE = 0.9


def _percentiles(samples: np.ndarray, confidence: float):
    samples = np.asarray(samples, dtype=float)
    tail = (1 - confidence) / 2 * 100
    defined = np.isfinite(samples).mean(axis=0) >= DEFINED_SHARE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: handled below
        low, high = np.nanpercentile(samples, [tail, 100 - tail], axis=0)
    return low, high, defined, high - low > 1e-12


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval per column (axis 0 = resamples), ignoring NaN resamples;
    NaN where the interval has no width or fewer than 90 % of the resamples are defined
    (none can honestly be given; :func:`no_percentile_interval` says which, in words)."""
    low, high, defined, wide = _percentiles(samples, confidence)
    bad = ~defined | ~wide
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def no_percentile_interval(samples: np.ndarray, confidence: float) -> list[str]:
    """Per column, why :func:`percentile_interval` gives no interval, in words ("" where it gives one)."""
    _, _, defined, wide = _percentiles(samples, confidence)
    return ["" if ok and width else
            f"fewer than {DEFINED_SHARE:.0%} of the resamples give a value" if not ok else
            "every resample gives the same value" for ok, width in zip(np.atleast_1d(defined), np.atleast_1d(wide))]


def too_few(n: int, unit: str, resamples: int, least: int = 2) -> str:
    """Why a bootstrap over ``n`` ``unit``s (e.g. "context") gives no interval before resampling
    ("" when it may give one): none was asked for (``resamples`` 0), or too few units to
    resample (one unit resampled is itself every time: it says nothing about others)."""
    if resamples < 1:
        return "no resampling asked for (bootstrap = 0)"
    if n < least:
        return f"{n} {unit}{'' if n == 1 else 's'}: a bootstrap over {unit}s needs {least} or more"
    return ""

