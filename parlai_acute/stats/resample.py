"""Bootstrap resampling as weights, so one matrix product replaces a loop over resamples.

Drawing ``size`` units with replacement is the same as giving each unit the number of
times it was drawn; :func:`resample_weights` returns those counts for many resamples at
once. :func:`cluster_sums` then totals per-judgment values by column (e.g. by matchup, or
by win-matrix cell) under each resample of the clusters (workers, items), through a sparse
(cluster x column) matrix: its cost grows with the judgments, not with clusters x columns.
:func:`cluster_totals` and :func:`cluster_bootstrap` do the same for a (judgments, m)
array whose rows belong to clusters (per-turn picks by dialogue). The one place for
resampling clusters.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["resample_weights", "cluster_sums", "cluster_totals", "cluster_bootstrap"]


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


def cluster_totals(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster column sums of ``values`` (judgments, m) and judgments per cluster;
    ``clusters`` holds each judgment's cluster code 0..G-1 (e.g. ``pd.factorize(dialogue)[0]``)."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[:, None]
    clusters = np.asarray(clusters)
    g = int(clusters.max()) + 1 if clusters.size else 0
    sums = np.zeros((g, values.shape[1]))
    for j in range(values.shape[1]):
        sums[:, j] = np.bincount(clusters, weights=values[:, j], minlength=g)
    return sums, np.bincount(clusters, minlength=g).astype(float)


def cluster_bootstrap(sums: np.ndarray, counts: np.ndarray, resamples: int, rng: np.random.Generator,
                      chunk: int = 250) -> np.ndarray:
    """(resamples, m) means per judgment of datasets made of G clusters drawn with
    replacement (:func:`cluster_totals` gives ``sums`` and ``counts``); each resample's
    means are one matrix product of its cluster multiplicities."""
    sums = np.asarray(sums, dtype=float)
    out = np.empty((resamples, sums.shape[1]))
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        weights = resample_weights(len(counts), b, rng).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:start + b] = (weights @ sums) / (weights @ counts)[:, None]
    return out
