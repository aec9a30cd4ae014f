"""Bradley-Terry ranking of models from pairwise judgments, with bootstrap intervals.

A pairwise win-rate grid does not order models that were never compared directly and
does not pool evidence across matchups; Bradley-Terry does both: P(i beats j) =
sigmoid(theta_i - theta_j), fitted by (penalised) maximum likelihood. The fit works on
the win-count matrix, so its cost does not grow with the number of judgments, and is a
batched Newton solve: a bootstrap of B resamples is one (B, K, K) computation.

Resampling judgments with replacement is the same as drawing the count matrix from a
multinomial over its cells, which is what :func:`bootstrap_counts` does.

The penalty is ``alpha * sum(theta**2)``, the same objective as
``choix.opt_pairwise(..., alpha=alpha)``; a small alpha keeps strengths finite when a
model wins (or loses) every comparison of a resample. Strengths sum to zero.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.stats.winrates import win_matrix

DEFAULT_ALPHA = 0.01


def fit_counts(wins: np.ndarray, alpha: float = DEFAULT_ALPHA, init: np.ndarray | None = None,
               tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """Log-strengths for one ``(K, K)`` or a batch ``(B, K, K)`` of win-count matrices.

    ``wins[..., i, j]`` is how often i beat j. Damped Newton steps on the penalised
    log-likelihood; ``init`` warm-starts (e.g. bootstrap fits from the point estimate).
    With ``alpha == 0`` the comparison graph must be connected and every model must have
    a win and a loss for the maximum to exist.
    """
    wins = np.asarray(wins, dtype=float)
    single = wins.ndim == 2
    if single:
        wins = wins[None]
    batch, k, _ = wins.shape
    total = wins + np.swapaxes(wins, 1, 2)
    won = wins.sum(axis=2)
    theta = np.zeros((batch, k)) if init is None else np.broadcast_to(np.asarray(init, float), (batch, k)).copy()
    eye = np.eye(k)
    # Without a penalty the Hessian is singular along the all-ones direction (only
    # differences are identified); adding ones/k fixes the mean of the step at zero.
    fix = alpha * 2 * eye if alpha > 0 else np.ones((k, k)) / k
    active = np.arange(batch)
    for _ in range(max_iter):
        th = theta[active]
        diff = th[:, :, None] - th[:, None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        n = total[active]
        grad = won[active] - (n * p).sum(axis=2) - 2 * alpha * th
        weight = n * p * (1 - p)
        hess = np.einsum("bi,ij->bij", weight.sum(axis=2), eye) - weight + fix
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        largest = np.abs(step).max(axis=1, keepdims=True)
        step *= np.minimum(1.0, 2.0 / np.maximum(largest, 1e-300))  # damp far from the optimum
        theta[active] = th + step
        done = largest[:, 0] < tol
        active = active[~done]
        if active.size == 0:
            break
    else:
        warnings.warn(f"Bradley-Terry fit did not converge for {active.size} of {batch} win matrices "
                      f"(a model that never wins or never loses needs alpha > 0)", RuntimeWarning, stacklevel=2)
    theta -= theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def bootstrap_counts(wins: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``resamples`` win matrices drawn as if resampling the judgments with replacement."""
    wins = np.asarray(wins)
    n = int(wins.sum())
    flat = wins.ravel().astype(float)
    draws = rng.multinomial(n, flat / n, size=resamples)
    return draws.reshape((resamples,) + wins.shape)


def connected(wins: np.ndarray) -> bool:
    """Whether every model is linked to every other through compared pairs."""
    linked = (np.asarray(wins) + np.asarray(wins).T) > 0
    k = len(linked)
    seen, stack = {0}, [0]
    while stack:
        i = stack.pop()
        for j in np.flatnonzero(linked[i]):
            if j not in seen:
                seen.add(int(j))
                stack.append(int(j))
    return len(seen) == k


def bradley_terry(df: pd.DataFrame, bootstrap: int = 1000, seed: int = 0, alpha: float = DEFAULT_ALPHA,
                  confidence: float = 0.95, models: list[str] | None = None) -> pd.DataFrame:
    """Rank the models of a judgments table (``winner``/``loser`` columns).

    Returns one row per model, best first: model, strength (log-strength, mean zero),
    ci_low, ci_high (percentile bootstrap interval), rank (1 = best), wins, n, and
    p_beats_average (sigmoid of the strength: chance of beating a model of strength 0).
    """
    wins, models = win_matrix(df, models)
    if len(models) < 2:
        raise UserError(f"a ranking needs judgments between at least two models, got {models}; "
                        f"check the judgments after exclusions")
    if not connected(wins):
        raise UserError("some models are never compared, directly or through other models, so their "
                        "strengths cannot be put on one scale; add pairings that link the groups")
    theta = fit_counts(wins, alpha=alpha)
    low = high = np.full(len(models), np.nan)
    if bootstrap > 0:
        rng = np.random.default_rng(seed)
        samples = fit_counts(bootstrap_counts(wins, bootstrap, rng), alpha=alpha, init=theta)
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(samples, [tail, 100 - tail], axis=0)
    order = np.argsort(-theta, kind="stable")
    rank = np.empty(len(models), dtype=int)
    rank[order] = np.arange(1, len(models) + 1)
    table = pd.DataFrame({
        "model": models, "strength": theta, "ci_low": low, "ci_high": high, "rank": rank,
        "wins": wins.sum(axis=1), "n": wins.sum(axis=1) + wins.sum(axis=0),
        "p_beats_average": 1 / (1 + np.exp(-theta)),
    })
    return table.sort_values("rank").reset_index(drop=True)
