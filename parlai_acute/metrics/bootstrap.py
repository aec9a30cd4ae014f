"""Seeded percentile bootstrap over items, for means and for pooled (corpus) statistics.

Items (contexts) are resampled with replacement; an interval is the ``(1-level)/2`` and
``(1+level)/2`` percentiles of the resampled statistic, by the one rule of
:func:`parlai_acute.stats.intervals.percentile_interval`. One item alone gives no interval
(NaN), never a zero-width one; nor do items that all score the same; each interval comes
with the reason in words when there is none.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from parlai_acute.stats.intervals import no_percentile_interval, percentile_interval, too_few

_NAN = float("nan")

def resample_weights(n: int, resamples: int, seed: int, chunk: int = 250):
    """Yield (chunk, n) matrices of bootstrap counts (each row sums to n); the same
    resamples for the same (n, resamples, seed), so every metric of a run uses them."""
    for start in range(0, resamples, chunk):
        yield _weights(n, resamples, seed)[start:start + chunk]


@functools.lru_cache(maxsize=1)
def _weights(n: int, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = np.zeros((resamples, n), dtype=np.float32)
    for row in range(resamples):
        counts[row] = np.bincount(rng.integers(0, n, size=n), minlength=n)
    return counts


def mean_interval(values: np.ndarray, resamples: int, seed: int, level: float = 0.95) -> tuple[float, float, str]:
    """(low, high, why) of the mean of ``values`` over resampled contexts; NaN bounds and the
    reason in words where there is no interval ("" where there is one)."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    why = too_few(n, "context", resamples)
    if why:
        return _NAN, _NAN, why
    if np.ptp(values) == 0:  # every context alike: no interval, not a zero-width one
        return _NAN, _NAN, "every context scores the same"
    means = np.concatenate([w @ values / n for w in resample_weights(n, resamples, seed)])
    return _interval(means, level)


def pooled_interval(stats: np.ndarray, score: Callable[[np.ndarray], dict], resamples: int, seed: int,
                    level: float = 0.95) -> dict[str, tuple[float, float, str]]:
    """{column: (low, high, why)} of ``score(summed statistics)`` (a dict of columns) over
    resampled items, for every column ``score`` gives; NaN bounds and the reason in words
    where there is no interval."""
    n = len(stats)
    why = too_few(n, "context", resamples)
    if why:
        return {column: (_NAN, _NAN, why) for column in score(np.asarray(stats, dtype=float).sum(axis=0))}
    draws: dict[str, list] = {}
    for weights in resample_weights(n, resamples, seed):
        for summed in weights @ stats:
            for column, value in score(summed).items():
                draws.setdefault(column, []).append(value)
    return {column: _interval(np.array(v, dtype=float), level) for column, v in draws.items()}


def _interval(draws: np.ndarray, level: float) -> tuple[float, float, str]:
    (low,), (high,) = percentile_interval(draws[:, None], level)
    return float(low), float(high), no_percentile_interval(draws[:, None], level)[0]
