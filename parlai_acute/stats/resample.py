"""Bootstrap resampling as weights, so one matrix product replaces a loop over resamples.

Drawing ``size`` units with replacement is the same as giving each unit the number of
times it was drawn; :func:`resample_weights` returns those counts for many resamples at
once. :func:`cluster_sums` then totals per-judgment values by column (e.g. by matchup, or
by win-matrix cell) under each resample of the clusters (workers, items), through a sparse
(cluster x column) matrix: its cost grows with the judgments, not with clusters x columns.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse


def resample_weights(size: int, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(resamples, size)``: how often each of ``size`` units is drawn in each resample
    of ``size`` draws with replacement (rows sum to ``size``)."""
    out = np.empty((resamples, size), dtype=np.int64)
    step = max(1, 4_000_000 // max(size, 1))  # blocks of resamples: bounded memory for any size
    for start in range(0, resamples, step):
        b = min(step, resamples - start)
        draws = rng.integers(0, size, size=(b, size))
        offsets = (np.arange(b) * size)[:, None]
        out[start:start + b] = np.bincount((draws + offsets).ravel(), minlength=b * size).reshape(b, size)
    return out


def cluster_sums(weights: np.ndarray, cluster: np.ndarray, column: np.ndarray, values: np.ndarray,
                 columns: int) -> np.ndarray:
    """``(resamples, columns)``: sum of ``values`` per column, each judgment counted as often
    as its cluster was drawn (``weights[b, cluster]``)."""
    table = sparse.coo_matrix((np.asarray(values, float), (cluster, column)),
                              shape=(weights.shape[1], columns)).tocsr()
    return np.asarray((table.T @ weights.T.astype(float)).T)


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column, ignoring NaN resamples; NaN where the interval has
    no width or fewer than 90 % of the resamples are defined (none can honestly be given)."""
    samples = np.asarray(samples, dtype=float)
    tail = (1 - confidence) / 2 * 100
    defined = np.isfinite(samples).mean(axis=0) >= 0.9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: handled below
        low, high = np.nanpercentile(samples, [tail, 100 - tail], axis=0)
    bad = ~defined | ~(high - low > 1e-12)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)
