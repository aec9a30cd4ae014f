"""A tie-aware ranking: Davidson's (1970) extension of Bradley-Terry, with its tie parameter.

When judges may answer "tie" (or "both are bad"), counting a tie as half a win for each side
(what :mod:`parlai_acute.stats.bradley_terry` does) keeps the ranking but says nothing about how
often models are hard to tell apart. Davidson's model gives ties their own probability::

    P(i beats j) = pi_i / D,   P(tie) = nu sqrt(pi_i pi_j) / D,   D = pi_i + pi_j + nu sqrt(pi_i pi_j)

with ``pi = exp(strength)`` (strengths sum to zero, as the ordinary fit's) and ``nu >= 0`` the
tie parameter: two equally strong models tie with probability ``nu / (2 + nu)``. Conditional on
a decision it is Bradley-Terry, so the strengths are on the ordinary fit's scale; with no tie
``nu`` goes to 0 and the two fits agree.

The fit is a damped Newton solve on the win and tie count matrices (its cost does not grow with
the number of judgments), penalised by ``alpha * sum(strength**2)`` as the ordinary fit. Its
intervals treat the worker as the unit, as the ordinary ranking's: a percentile bootstrap of
whole workers, or from :data:`~parlai_acute.stats.bradley_terry.SANDWICH_FROM` workers on the
cluster-robust sandwich (penalised information around the sum of the workers' score outer
products, G/(G-1), t on G-1 df). Where neither can be given, ``note`` says why in words.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from parlai_acute.errors import UserError
from parlai_acute.stats.bradley_terry import DEFAULT_ALPHA, connected, worker_interval
from parlai_acute.stats.intervals import percentile_interval
from parlai_acute.stats.resample import cluster_sums, resample_weights
from parlai_acute.stats.winrates import coded

__all__ = ["MODEL", "fit_davidson", "davidson"]

MODEL = "Davidson (1970): Bradley-Terry with a tie parameter nu; P(tie | equal strengths) = nu / (2 + nu)"


def _parts(theta: np.ndarray, tau: float):
    d = theta[:, None] - theta[None, :]
    nu = np.exp(tau)
    half = d / 2
    denom = 2 * np.cosh(half) + nu
    return d, nu, np.sinh(half) / denom, nu / denom, (1 + nu * np.cosh(half) / 2) / denom ** 2


def _loglik(wins: np.ndarray, ties: np.ndarray, theta: np.ndarray, tau: float, alpha: float) -> float:
    d, nu, _, _, _ = _parts(theta, tau)
    n = wins + wins.T + ties
    upper = np.triu(np.ones_like(d, dtype=bool), 1)
    value = ((wins - wins.T) * d / 2)[upper].sum() + ties[upper].sum() * tau \
        - (n * np.log(2 * np.cosh(d / 2) + nu))[upper].sum()
    return float(value - alpha * (theta ** 2).sum())


def _gradient_hessian(wins, ties, theta, tau, alpha):
    """Gradient and Hessian of the penalised log-likelihood in (strengths, log nu)."""
    k = len(theta)
    d, nu, g, h, fdd = _parts(theta, tau)
    n = wins + wins.T + ties  # symmetric
    # per ordered pair (i, j), i != j: d/d theta_i of the pair's log-likelihood
    dd = (wins - wins.T) / 2 - n * g
    np.fill_diagonal(dd, 0.0)
    grad = np.empty(k + 1)
    grad[:k] = dd.sum(axis=1) - 2 * alpha * theta
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    grad[k] = ties[upper].sum() - (n * h)[upper].sum()
    w = n * fdd
    np.fill_diagonal(w, 0.0)
    hess = np.zeros((k + 1, k + 1))
    hess[:k, :k] = -(np.diag(w.sum(axis=1)) - w) - 2 * alpha * np.eye(k)
    cross = n * g * h  # d2/dd dtau of -log D is +g h; of the log-likelihood, n g h
    np.fill_diagonal(cross, 0.0)
    hess[:k, k] = hess[k, :k] = cross.sum(axis=1)
    hess[k, k] = -(n * h * (1 - h))[upper].sum()
    return grad, hess


def fit_davidson(wins: np.ndarray, ties: np.ndarray, alpha: float = DEFAULT_ALPHA, init=None,
                 tol: float = 1e-10, max_iter: int = 200) -> tuple[np.ndarray, float]:
    """(strengths summing to zero, log nu) maximising the penalised likelihood of the win counts
    ``wins[i, j]`` (i beat j) and the symmetric tie counts ``ties[i, j]``. Needs at least one
    tie (else nu's maximum is at 0: log nu has no finite value)."""
    wins, ties = np.asarray(wins, float), np.asarray(ties, float)
    k = len(wins)
    params = np.zeros(k + 1) if init is None else np.array(init, dtype=float)
    if init is None:
        n = (wins + wins.T + ties)[np.triu_indices(k, 1)].sum()
        share = ties[np.triu_indices(k, 1)].sum() / max(n, 1)
        params[k] = np.log(max(2 * share / max(1 - share, 1e-9), 1e-6))
    # Without a penalty only differences of strengths are identified: fix their mean at zero
    fix = np.zeros((k + 1, k + 1))
    if alpha == 0:
        fix[:k, :k] = np.ones((k, k)) / k
    for _ in range(max_iter):
        grad, hess = _gradient_hessian(wins, ties, params[:k], params[k], alpha)
        step = np.linalg.solve(-hess + fix, grad)
        largest = np.abs(step).max()
        params = params + step * min(1.0, 2.0 / max(largest, 1e-300))
        if largest < tol:
            break
    else:
        warnings.warn("Davidson fit did not converge (a model that never wins or never loses needs alpha > 0)",
                      RuntimeWarning, stacklevel=2)
    params[:k] -= params[:k].mean()
    return params[:k], float(params[k])


@dataclass
class _Coded:
    """The judgments as integer codes, made once (three million judgments: each pass over the
    names costs a second): each judgment's models (``i`` won or tied against ``j``), whether it
    is a tie, its worker's code, and the win and tie count matrices."""

    i: np.ndarray
    j: np.ndarray
    tie: np.ndarray
    worker: np.ndarray
    groups: int
    models: list
    wins: np.ndarray
    ties: np.ndarray


def _coded(df: pd.DataFrame, models: list[str] | None, cluster: str) -> _Coded:
    i, j, tie, models = coded(df, models)
    k = len(models)
    wins = np.bincount(i[~tie] * k + j[~tie], minlength=k * k).reshape(k, k)
    ties = np.bincount(i[tie] * k + j[tie], minlength=k * k).reshape(k, k)
    worker, uniques = pd.factorize(df[cluster])
    return _Coded(i, j, tie, worker.astype(np.int64), len(uniques), models, wins, ties + ties.T)


def _cluster_counts(c: _Coded, resamples: int, rng):
    """(resamples, K, K) win and tie matrices, each from a resample of whole workers."""
    k = len(c.models)
    weights = resample_weights(c.groups, resamples, rng)
    cell = np.concatenate([c.i * k + c.j, k * k + c.i * k + c.j, k * k + c.j * k + c.i])
    value = np.concatenate([~c.tie, c.tie, c.tie]).astype(float)
    sums = cluster_sums(weights, np.concatenate([c.worker, c.worker, c.worker]), cell, value, 2 * k * k)
    return sums[:, : k * k].reshape(-1, k, k), sums[:, k * k:].reshape(-1, k, k)


def _sandwich(c: _Coded, theta, tau, alpha, confidence):
    """Cluster-robust Wald intervals of the strengths and of log nu."""
    k, i, j, tie, n_g = len(c.models), c.i, c.j, c.tie, c.groups
    d = theta[i] - theta[j]
    nu = np.exp(tau)
    denom = 2 * np.cosh(d / 2) + nu
    g, h = np.sinh(d / 2) / denom, nu / denom
    score_d = np.where(tie, 0.0, 0.5) - g  # first won (1/2 - g) or tied (-g): d/d theta_first
    score_t = tie - h
    scores = np.empty((n_g, k + 1))
    scores[:, :k] = (np.bincount(c.worker * k + i, score_d, n_g * k)
                     - np.bincount(c.worker * k + j, score_d, n_g * k)).reshape(n_g, k)
    scores[:, k] = np.bincount(c.worker, score_t, n_g)
    meat = scores.T @ scores * n_g / max(n_g - 1, 1)
    _, hess = _gradient_hessian(c.wins, c.ties, theta, tau, alpha)
    centre = np.eye(k + 1)
    centre[:k, :k] -= 1.0 / k
    bread = centre @ np.linalg.pinv(-hess)
    se = np.sqrt(np.maximum(np.diag(bread @ meat @ bread.T), 0))
    t = stats.t.ppf(0.5 + confidence / 2, max(n_g - 1, 1))
    params = np.append(theta, tau)
    return params - t * se, params + t * se


def davidson(df: pd.DataFrame, bootstrap: int = 1000, seed: int = 0, alpha: float = DEFAULT_ALPHA,
             confidence: float = 0.95, models: list[str] | None = None, cluster: str = "worker",
             min_clusters: int = 5) -> tuple[pd.DataFrame, dict]:
    """Davidson's tie-aware ranking of a judgments table (``outcome`` "tie"/"both_bad": a tie).

    Returns (ranking, tie): the ranking, best first, with model, strength, ci_low, ci_high,
    interval (its method), note (why there is none), rank, wins, ties, n; and the tie parameter
    ``{"nu", "nu_low", "nu_high", "tie_if_equal", "tie_if_equal_low", "tie_if_equal_high",
    "interval", "note", "model"}`` (``tie_if_equal``: P(tie) of two equally strong models)."""
    if alpha < 0:
        raise UserError(f"alpha must be 0 or more, got {alpha}", param="alpha")
    coded = _coded(df, models, cluster)  # every pass over the names, once
    wins, ties, models = coded.wins, coded.ties, coded.models
    if len(models) < 2:
        raise UserError(f"a ranking needs judgments between at least two models, got {models}")
    if not connected(wins + ties):
        raise UserError("some models are never compared, directly or through other models, so their "
                        "strengths cannot be put on one scale; add pairings that link the groups")
    if not ties.any():
        raise UserError("no judgment is a tie, so Davidson's tie parameter has no estimate; the ordinary "
                        "Bradley-Terry ranking is the whole answer")
    if not wins.any():
        raise UserError("every judgment is a tie, so Davidson's tie parameter has no finite estimate (nu goes to "
                        "infinity); the tie rate is the whole answer")
    try:
        theta, tau = fit_davidson(wins, ties, alpha)
    except np.linalg.LinAlgError:
        raise UserError("Davidson's model has no finite fit for these judgments (the models' wins and ties are "
                        "separated); the ordinary ranking, with ties as half wins, still stands") from None
    k = len(models)
    low, high = np.full(k + 1, np.nan), np.full(k + 1, np.nan)
    workers = coded.groups
    method = ""
    kind, why = worker_interval(bootstrap, workers, min_clusters)
    if kind == "sandwich":
        low, high = _sandwich(coded, theta, tau, alpha, confidence)
        method = f"cluster-robust (sandwich) over {workers} workers, t on G-1 df"
    elif kind == "bootstrap":
        w, t = _cluster_counts(coded, bootstrap, np.random.default_rng(seed))
        samples = np.empty((bootstrap, k + 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for b in range(bootstrap):
                if t[b].sum() == 0 or w[b].sum() == 0:  # all or no ties: nu has no finite estimate there
                    samples[b] = np.nan
                    continue
                try:
                    th, ta = fit_davidson(w[b], t[b], alpha, init=np.append(theta, tau), max_iter=50)
                except np.linalg.LinAlgError:
                    th, ta = np.full(k, np.nan), np.nan
                samples[b] = np.append(th, ta)
        low, high = percentile_interval(samples, confidence)
        method = f"percentile bootstrap of whole workers ({workers})"
        if not np.isfinite(low).all():
            why = "no interval over workers: the worker resamples do not vary or too many have no tie"
            low, high, method = np.full(k + 1, np.nan), np.full(k + 1, np.nan), ""
    order = np.argsort(-theta, kind="stable")
    rank = np.empty(k, dtype=int)
    rank[order] = np.arange(1, k + 1)
    never = [("never lost or tied" if (wins[:, i].sum() + ties[i].sum()) == 0 else
              "never won or tied" if (wins[i].sum() + ties[i].sum()) == 0 else "") for i in range(k)]
    ranking = pd.DataFrame({
        "model": models, "strength": theta, "ci_low": low[:k], "ci_high": high[:k], "interval": method,
        "note": [n + (f": its strength is set by the penalty (alpha={alpha:g})" if n else "") or why for n in never],
        "rank": rank, "wins": wins.sum(axis=1), "ties": ties.sum(axis=1), "n": wins.sum(axis=1) + wins.sum(axis=0)
        + ties.sum(axis=1)}).sort_values("rank").reset_index(drop=True)
    nu = float(np.exp(tau))
    nu_low, nu_high = (float(np.exp(low[k])), float(np.exp(high[k]))) if np.isfinite(low[k]) else (np.nan, np.nan)
    tie = {"nu": nu, "nu_low": nu_low, "nu_high": nu_high, "tie_if_equal": nu / (2 + nu),
           "tie_if_equal_low": nu_low / (2 + nu_low), "tie_if_equal_high": nu_high / (2 + nu_high),
           "interval": method, "note": why, "model": MODEL}
    return ranking, tie
