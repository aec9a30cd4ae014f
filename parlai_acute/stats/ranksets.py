"""Rank-sets and a decided top k from pairwise decisions that hold simultaneously.

A ranking claim is only as good as the pairwise comparisons under it. If every decision "i is
ahead of j" in a set holds at once with probability >= 1 - alpha (simultaneous intervals, or
anytime-valid tests at a Bonferroni level over all pairs), then with the same probability

* each model's rank lies in its **rank-set** [1 + #models decided ahead of it,
  n - #models it is decided ahead of] (Chatzi, Straitouri, Thejaswi & Gomez-Rodriguez,
  "Prediction-Powered Ranking of Large Language Models", NeurIPS 2024, Alg. 1: the ranks a
  model may take given the comparisons that are certain) -- when the models have a true order
  (Bradley-Terry strengths give one);
* the **top k is decided** when a set S of k models is separated from the rest by direct
  decisions: every model in S decided ahead of every model outside. This needs no order of
  the models at all (no transitivity): it is a statement about the k(n - k) pairs across the
  boundary. Such an S is unique when it exists (two would contradict each other on a pair),
  and it is exactly the models decided ahead of at least n - k others.

:func:`rank_sets` and :func:`top_k` read a boolean matrix ``ahead`` (``ahead[i, j]``: i is
decided ahead of j); :func:`simultaneous_ahead` builds one from estimated strengths and their
covariance (PPI Bradley-Terry, :func:`parlai_acute.stats.ppi.ppi_bradley_terry`); the
anytime-valid one comes from the per-pair confidence sequences of :mod:`parlai_acute.monitoring.status`
(:func:`parlai_acute.monitoring.status.top_k`). :func:`simulate_top_k` measures how many judgments a
decided top k takes with adaptive and uniform allocation, and how often it is wrong.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from parlai_acute.errors import UserError
from parlai_acute.stats.bradley_terry import fit_counts
from parlai_acute.stats.sequential import mixture_bets

__all__ = ["rank_sets", "top_k", "pairwise_critical", "simultaneous_ahead", "mixture_log_wealth",
           "simulate_top_k"]


def rank_sets(ahead: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest rank (1 = best) each model may take, batched over leading axes."""
    ahead = np.asarray(ahead, dtype=bool)
    n = ahead.shape[-1]
    return 1 + ahead.sum(axis=-2), n - ahead.sum(axis=-1)


def top_k(ahead: np.ndarray, k: int) -> dict:
    """Is the top k decided by direct pairwise decisions (batched over leading axes)?

    Returns ``decided`` (bool per run) and ``top`` (boolean mask of the models decided ahead of
    at least n - k others: the separated set when ``decided``)."""
    ahead = np.asarray(ahead, dtype=bool)
    n = ahead.shape[-1]
    if not 1 <= k < n:
        raise UserError(f"top k needs 1 <= k < number of models ({n}), got k={k}")
    top = ahead.sum(axis=-1) >= n - k
    across = top[..., :, None] & ~top[..., None, :]
    decided = (top.sum(axis=-1) == k) & (~across | ahead).all(axis=(-1, -2))
    return {"decided": decided, "top": top}


def pairwise_critical(models: int, alpha: float, df: float | None = None) -> tuple[float, str]:
    """Critical value making all n(n-1)/2 pairwise intervals hold at once: the smaller of
    Bonferroni's and Scheffe's (the projection of the chi-square ellipsoid with n - 1 degrees of
    freedom that Chatzi et al. use); both depend only on n and alpha, so taking the smaller
    keeps the level. ``df``: the standard errors are read on a t with df degrees of freedom (a
    sandwich over few levels of a sampled facet, as the strengths' own intervals are), so
    Bonferroni's t and Scheffe's F on (n - 1, df) replace the normal and the chi-square."""
    if not 0 < alpha < 1:
        raise UserError(f"alpha={alpha} must be strictly between 0 and 1; 0.05 is usual")
    pairs = models * (models - 1) // 2
    if df is None:
        bonferroni = float(stats.norm.isf(alpha / (2 * max(pairs, 1))))
        scheffe = float(math.sqrt(stats.chi2.isf(alpha, max(models - 1, 1))))
    else:
        df = max(float(df), 1.0)
        bonferroni = float(stats.t.isf(alpha / (2 * max(pairs, 1)), df))
        scheffe = float(math.sqrt(max(models - 1, 1) * stats.f.isf(alpha, max(models - 1, 1), df)))
    return (bonferroni, "Bonferroni") if bonferroni <= scheffe else (scheffe, "Scheffe")


def simultaneous_ahead(theta: np.ndarray, cov: np.ndarray, alpha: float = 0.05, df: float | None = None) -> np.ndarray:
    """``ahead[i, j]``: the simultaneous interval of theta_i - theta_j lies above zero (batched;
    ``df``: see :func:`pairwise_critical`)."""
    theta, cov = np.asarray(theta, dtype=float), np.asarray(cov, dtype=float)
    crit, _ = pairwise_critical(theta.shape[-1], alpha, df)
    dg = np.diagonal(cov, axis1=-2, axis2=-1)
    sd = np.sqrt(np.maximum(dg[..., :, None] + dg[..., None, :] - 2 * cov, 0.0))
    diff = theta[..., :, None] - theta[..., None, :]
    return (diff - crit * sd > 0) & ~np.eye(theta.shape[-1], dtype=bool)


def mixture_log_wealth(wins: np.ndarray, games: np.ndarray, m0: float = 0.5) -> np.ndarray:
    """log wealth of the mixture bettor of :mod:`parlai_acute.stats.sequential` against rate m0
    after ``wins`` of ``games`` 0/1 outcomes (it depends on the outcomes only through the
    counts): :func:`parlai_acute.stats.sequential.log_capital` on counts, for simulations."""
    lam = mixture_bets(m0)
    wins, games = np.asarray(wins, dtype=float)[..., None], np.asarray(games, dtype=float)[..., None]
    total = wins * np.log1p(lam * (1 - m0)) + (games - wins) * np.log1p(-lam * m0)
    return special.logsumexp(total, axis=-1) - math.log(lam.size)


def simulate_top_k(strengths, k: int = 3, adaptive: bool = True, runs: int = 20, alpha: float = 0.05,
                   batch: int = 50, growth: float = 0.05, budget: int = 5_000_000, seed: int = 0) -> dict:
    """Judgments until the top k is decided by anytime-valid pairwise tests, ``runs`` seeded
    runs at once (vectorised), models of known Bradley-Terry ``strengths``, independent judgments.

    Each pair is tested with the mixture bettor against 1/2 at level alpha / (pairs) (the
    ACUTE stop rule's test on one-judgment clusters); a pair is decided when its wealth first
    reaches the bound, in the direction of its win share then. Looks at each batch's end; a
    batch is max(``batch``, ``growth`` x judgments so far) (any schedule of looks keeps the
    tests valid). Adaptive: the batch goes uniformly to the undecided pairs across the current
    boundary (the top k of a Bradley-Terry fit vs the rest), else to any undecided pair; uniform:
    to all pairs. Returns per-run ``judgments`` (``budget`` where undecided) and ``correct``
    (the decided set is the true top k), with the median and the error rate.
    """
    theta = np.asarray(strengths, dtype=float)
    n = theta.size
    if not 1 <= k < n:
        raise UserError(f"top k needs 1 <= k < number of models ({n}), got k={k}")
    rng = np.random.default_rng(seed)
    iu = np.triu_indices(n, 1)
    pairs = iu[0].size
    p_true = special.expit(theta[iu[0]] - theta[iu[1]])
    bound = math.log(pairs / alpha)
    wins, games = np.zeros((runs, pairs)), np.zeros((runs, pairs))
    sign = np.zeros((runs, pairs))  # +1: the first of the pair decided ahead, -1: the second
    used = np.zeros(runs, dtype=np.int64)
    done = np.zeros(runs, bool)
    judgments = np.full(runs, budget, dtype=np.int64)
    correct = np.zeros(runs, bool)
    truth = np.zeros(n, bool)
    truth[np.argsort(-theta)[:k]] = True
    while True:
        live = np.flatnonzero(~done)
        fresh = (sign[live] == 0) & (mixture_log_wealth(wins[live], games[live]) >= bound)
        sign[live] = np.where(fresh, np.sign(2 * wins[live] - games[live]), sign[live])
        ahead = np.zeros((live.size, n, n), bool)
        ahead[:, iu[0], iu[1]] = sign[live] > 0
        ahead[:, iu[1], iu[0]] = sign[live] < 0
        state = top_k(ahead, k)
        finished = state["decided"] | (used[live] >= budget)
        judgments[live[state["decided"]]] = used[live[state["decided"]]]
        correct[live] = state["decided"] & (state["top"] == truth).all(axis=-1)
        done[live[finished]] = True
        live, ahead = live[~finished], ahead[~finished]
        if live.size == 0:
            break
        size = np.minimum(np.maximum(batch, np.ceil(growth * used[live])).astype(np.int64), budget - used[live])
        open_ = sign[live] == 0
        if adaptive:
            counts = np.zeros((live.size, n, n))
            counts[:, iu[0], iu[1]] = wins[live]
            counts[:, iu[1], iu[0]] = games[live] - wins[live]
            order = np.argsort(-fit_counts(counts), axis=-1)
            top = np.zeros((live.size, n), bool)
            np.put_along_axis(top, order[:, :k], True, axis=-1)
            boundary = open_ & (top[:, iu[0]] != top[:, iu[1]])
            weight = np.where(boundary.any(axis=1, keepdims=True), boundary, open_).astype(float)
        else:
            weight = np.ones((live.size, pairs))
        weight = np.where(weight.sum(axis=1, keepdims=True) > 0, weight, 1.0)  # all decided, yet no top k
        weight = weight / weight.sum(axis=1, keepdims=True)
        drawn = rng.multinomial(size, weight)
        wins[live] += rng.binomial(drawn, p_true)
        games[live] += drawn
        used[live] += size
    decided = judgments < budget
    return {"judgments": judgments, "correct": correct, "median": float(np.median(judgments)),
            "error_rate": float((decided & ~correct).sum() / max(decided.sum(), 1)),
            "decided_share": float(decided.mean()), "k": k, "adaptive": adaptive, "runs": runs, "alpha": alpha,
            "batch": batch, "growth": growth, "seed": seed, "pairs": pairs}
