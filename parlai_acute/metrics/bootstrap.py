"""Seeded percentile bootstrap over items, for means and for pooled (corpus) statistics.

Items (contexts) are resampled with replacement; an interval is the ``(1-level)/2`` and
``(1+level)/2`` percentiles of the resampled statistic. One item alone gives no interval
(NaN), never a zero-width one; nor do items that all score the same.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np


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


def mean_interval(values: np.ndarray, resamples: int, seed: int, level: float = 0.95) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    n = len(values)
    if n < 2 or resamples < 1 or np.ptp(values) == 0:  # every context alike: no interval, not a zero-width one
        return float("nan"), float("nan")
    means = np.concatenate([w @ values / n for w in resample_weights(n, resamples, seed)])
    return _percentiles(means, level)


def pooled_interval(stats: np.ndarray, score: Callable[[np.ndarray], dict], resamples: int, seed: int,
                    level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Intervals of ``score(summed statistics)`` (a dict of columns) over resampled items."""
    n = len(stats)
    if n < 2 or resamples < 1:
        return {}
    draws: dict[str, list] = {}
    for weights in resample_weights(n, resamples, seed):
        for summed in weights @ stats:
            for column, value in score(summed).items():
                draws.setdefault(column, []).append(value)
    return {column: _percentiles(np.array(v), level) for column, v in draws.items() if np.ptp(v) > 0}


def _percentiles(draws: np.ndarray, level: float) -> tuple[float, float]:
    low, high = np.percentile(draws, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(low), float(high)
