"""Adaptive pair selection for rankings: show people the comparisons that teach the most.

With many models, comparing every pair equally often spends most judgments on pairs whose
order is already clear (the best model against the worst). Chatbot Arena samples pairs by
the expected reduction of the ranking's interval widths; active ranking in the literature
does the same. Here, after each batch of judgments:

1. fit Bradley-Terry (:func:`parlai_acute.stats.bradley_terry.fit_counts`) and take the
   covariance of the strengths from the penalised Fisher information;
2. list the contrasts the goal depends on -- ``ranking``: every pair of models adjacent in
   the current order; ``top-k``: every pair with one model in the current top k and one
   outside -- each weighted by the chance its order is still wrong, Phi(-|d| / sd(d));
3. score each pair (i, j) by how much one more judgment of i vs j would shrink the variance
   of those contrasts (Sherman-Morrison: (c' S u)^2 w / (1 + w u' S u), u = e_i - e_j,
   w = p(1 - p)), and draw the next pairs with probability proportional to the score (a
   draw, not an argmax: every pair keeps a chance, so the design keeps exploring).

The sides of every shown pair are still drawn at random (:func:`next_pairs` returns them),
and the choice depends only on judgments already made, so each judgment's outcome is
independent of how its pair was chosen given the past: per-pair confidence sequences
(:mod:`parlai_acute.stats.sequential`) stay valid, since their wealth processes only need
the next outcome's conditional mean given the past.

:func:`simulate` compares adaptive with uniform allocation on models of known strengths with
the same stopping rule ("the goal is resolved when every contrast it depends on is
significant at Bonferroni level delta"), so both finish at about the same error rate, which
is measured and reported beside the judgments each needed.
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

from parlai_acute.errors import UserError
from parlai_acute.stats.bradley_terry import DEFAULT_ALPHA, fit_counts

__all__ = ["GOALS", "covariance", "contrasts", "pair_scores", "next_pairs", "resolved", "simulate"]

GOALS = ("ranking", "top-k")


def covariance(wins: np.ndarray, theta: np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """Covariance of the strengths (inverse penalised Fisher information), batched (..., K, K)."""
    total = wins + np.swapaxes(wins, -1, -2)
    p = special.expit(theta[..., :, None] - theta[..., None, :])
    weight = total * p * (1 - p)
    k = wins.shape[-1]
    info = np.einsum("...i,ij->...ij", weight.sum(axis=-1), np.eye(k)) - weight + 2 * alpha * np.eye(k)
    return np.linalg.inv(info)


def contrasts(theta: np.ndarray, goal: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The model pairs (a, b) the goal depends on, per run: arrays (..., C) of indices, with a
    ahead of b in the current order."""
    order = np.argsort(-theta, axis=-1)
    size = theta.shape[-1]
    if goal == "ranking":
        return order[..., :-1], order[..., 1:]
    if goal != "top-k":
        raise UserError(f"goal must be one of {', '.join(GOALS)}, got {goal!r}")
    if not 1 <= k < size:
        raise UserError(f"top-k needs 1 <= k < number of models ({size}), got k={k}")
    top, rest = order[..., :k], order[..., k:]
    a = np.repeat(top[..., :, None], size - k, axis=-1).reshape(*theta.shape[:-1], -1)
    b = np.repeat(rest[..., None, :], k, axis=-2).reshape(*theta.shape[:-1], -1)
    return a, b


def pair_scores(wins: np.ndarray, goal: str = "ranking", k: int = 3, alpha: float = DEFAULT_ALPHA,
                scores: bool = True) -> dict:
    """Expected reduction of the goal's uncertainty from one more judgment of each pair.

    ``wins``: (K, K) or a batch (R, K, K) of win counts. Returns ``scores`` (..., K, K),
    symmetric, zero on the diagonal), ``theta``, ``sd`` of each goal contrast and the
    contrasts ``a``, ``b`` (indices) with their ``z`` = difference / sd. ``scores=False``
    skips the scores (a uniform design only needs ``z``).
    """
    wins = np.asarray(wins, dtype=float)
    theta = fit_counts(wins, alpha)
    cov = covariance(wins, theta, alpha)
    a, b = contrasts(theta, goal, k)
    diff = np.take_along_axis(theta, a, -1) - np.take_along_axis(theta, b, -1)
    var = (np.take_along_axis(np.diagonal(cov, axis1=-2, axis2=-1), a, -1)
           + np.take_along_axis(np.diagonal(cov, axis1=-2, axis2=-1), b, -1) - 2 * _entries(cov, a, b))
    sd = np.sqrt(np.maximum(var, 1e-12))
    z = diff / sd
    out = {"theta": theta, "a": a, "b": b, "z": z, "sd": sd}
    if not scores:
        return out
    weight = stats.norm.sf(np.abs(z))  # chance the contrast's order is still wrong
    # S c for each contrast c = e_a - e_b: (..., K, C)
    sc = np.take_along_axis(cov, a[..., None, :], axis=-1) - np.take_along_axis(cov, b[..., None, :], axis=-1)
    # (c' S u) for u = e_i - e_j: sc[i] - sc[j] -> (..., K, K, C)
    csu = sc[..., :, None, :] - sc[..., None, :, :]
    dg = np.diagonal(cov, axis1=-2, axis2=-1)
    usu = dg[..., :, None] + dg[..., None, :] - 2 * cov  # u' S u, (..., K, K)
    p = special.expit(theta[..., :, None] - theta[..., None, :])
    w = p * (1 - p)
    gain = (csu ** 2 * (weight[..., None, None, :])).sum(axis=-1) * w / (1 + w * usu)
    size = wins.shape[-1]
    gain = gain * (1 - np.eye(size))
    return out | {"scores": gain}


def _entries(cov, a, b):
    """cov[..., a, b] for index arrays a, b of shape (..., C)."""
    return np.take_along_axis(cov.reshape(*cov.shape[:-2], -1), a * cov.shape[-1] + b, axis=-1)


def next_pairs(wins: np.ndarray, count: int, rng: np.random.Generator, goal: str = "ranking", k: int = 3,
               alpha: float = DEFAULT_ALPHA, models: list[str] | None = None) -> list[dict]:
    """The next ``count`` pairs to show, drawn in proportion to :func:`pair_scores`, each with
    its sides drawn at random and why it was chosen (score share, the goal)."""
    wins = np.asarray(wins, dtype=float)
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1] or wins.shape[0] < 2:
        raise UserError("wins must be a square matrix of win counts over at least 2 models")
    size = wins.shape[0]
    names = models or [str(i) for i in range(size)]
    scores = pair_scores(wins, goal, k if goal == "top-k" else 1, alpha)["scores"]
    upper = np.triu(scores, 1)
    flat = upper.ravel()
    if flat.sum() <= 0:  # nothing to learn (or nothing yet): uniform over pairs
        flat = np.triu(np.ones((size, size)), 1).ravel()
    prob = flat / flat.sum()
    picks = rng.choice(flat.size, size=count, p=prob)
    out = []
    for pick in picks:
        i, j = divmod(int(pick), size)
        left, right = (i, j) if rng.random() < 0.5 else (j, i)
        out.append({"model_left": names[left], "model_right": names[right], "probability": float(prob[pick]),
                    "reason": f"{goal}: expected uncertainty reduction share {prob[pick]:.3f}"})
    return out


def resolved(z: np.ndarray, delta: float) -> np.ndarray:
    """Is the goal resolved: every contrast significant at Bonferroni level delta (per run)."""
    crit = stats.norm.isf(delta / z.shape[-1])
    return (np.abs(z) >= crit).all(axis=-1)


def simulate(strengths, goal: str = "top-k", k: int = 3, adaptive: bool = True, runs: int = 20, batch: int = 20,
             delta: float = 0.05, budget: int = 200_000, seed: int = 0, alpha: float = DEFAULT_ALPHA) -> dict:
    """Judgments until the goal is resolved, for ``runs`` seeded runs at once (vectorised).

    Each round every unresolved run draws ``batch`` pairs (adaptively or uniformly), the
    judgments follow Bradley-Terry with the true ``strengths``, and the goal is checked.
    Returns per-run ``judgments`` (budget where unresolved), ``correct`` (the resolved top k
    set / full order is the true one) and their summaries.
    """
    theta_true = np.asarray(strengths, dtype=float)
    size = theta_true.size
    rng = np.random.default_rng(seed)
    wins = np.zeros((runs, size, size))
    # a start every design shares: each pair once, so every model is connected
    iu = np.triu_indices(size, 1)
    first = rng.random((runs, iu[0].size)) < special.expit(theta_true[iu[0]] - theta_true[iu[1]])
    wins[:, iu[0], iu[1]] += first
    wins[:, iu[1], iu[0]] += ~first
    used = np.full(runs, iu[0].size)
    done = np.zeros(runs, bool)
    judgments = np.full(runs, budget)
    correct = np.zeros(runs, bool)
    truth = np.argsort(-theta_true)
    pair_index = np.arange(size * size).reshape(size, size)[iu]
    kk = k if goal == "top-k" else 1
    while not done.all():
        live = np.flatnonzero(~done)
        info = pair_scores(wins[live], goal, kk, alpha, scores=adaptive)
        now = resolved(info["z"], delta)
        for row in np.flatnonzero(now):
            r = live[row]
            done[r], judgments[r] = True, used[r]
            order = np.argsort(-info["theta"][row])
            correct[r] = (set(order[:k]) == set(truth[:k])) if goal == "top-k" else bool((order == truth).all())
        keep = ~now & (used[live] < budget)
        done[live[~keep]] = True
        live = live[keep]
        if live.size == 0:
            break
        if adaptive:
            sub = info["scores"][keep].reshape(live.size, -1)[:, pair_index]
            sub = np.where(sub.sum(axis=1, keepdims=True) > 0, sub, 1.0)
            cdf = np.cumsum(sub / sub.sum(axis=1, keepdims=True), axis=1)
            draws = (rng.random((live.size, batch, 1)) > cdf[:, None, :]).sum(axis=-1)
            draws = np.minimum(draws, pair_index.size - 1)
        else:
            draws = rng.integers(0, pair_index.size, (live.size, batch))
        i, j = iu[0][draws], iu[1][draws]
        won = rng.random(draws.shape) < special.expit(theta_true[i] - theta_true[j])
        for row, r in enumerate(live):
            np.add.at(wins[r], (i[row][won[row]], j[row][won[row]]), 1)
            np.add.at(wins[r], (j[row][~won[row]], i[row][~won[row]]), 1)
        used[live] += batch
    return {"judgments": judgments, "correct": correct, "median": float(np.median(judgments)),
            "error_rate": float(1 - correct.mean()), "resolved_share": float((judgments < budget).mean()),
            "goal": goal, "k": k, "adaptive": adaptive, "runs": runs, "batch": batch, "delta": delta, "seed": seed}
