"""Bradley-Terry ranking of models from pairwise judgments, with honest intervals.

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

Intervals. With plenty of judgments and no separation the percentile bootstrap (resample
judgments) is used. It fails exactly where it matters: when a model won (or lost) every
comparison -- separation -- every resample is separated the same way and the interval
collapses to a point (6 wins of 6 gave ``+2.408 [+2.408, +2.408]``), and with a handful of
judgments the resampling distribution is too coarse to mean anything. Then
:func:`profile_intervals` is used instead: the set of strengths whose penalised profile
log-likelihood is within ``chi2_1(confidence) / 2`` of the maximum. It is never a point;
a model that never lost (or never won) gets no interval at all -- one bound would come
from the regularisation and the other from a likelihood that overstates a few
all-or-nothing judgments -- and the ``note`` column says so. ``interval`` names the method
in every row.

Judgments by one worker are not independent. With ``cluster="worker"`` (the analysis) the
headline interval (``ci_low``/``ci_high``, ``interval`` names it) is a percentile bootstrap
that resamples whole workers -- the unit that was sampled -- and the intervals above, which
treat judgments as independent, move to ``ci_low_judgments``/``ci_high_judgments``
(``interval_judgments``). The worker bootstrap is given only where the judgment bootstrap
is trusted (no separation, enough judgments) and from ``min_clusters`` workers on; else
``note`` says why there is none. From :data:`SANDWICH_FROM` workers on, the worker interval
is the cluster-robust sandwich instead (:func:`sandwich_intervals`: the penalised
information on both sides of the sum of the workers' score outer products, G/(G-1), t on
G - 1 df): with that many workers the two agree (tested), and a million judgments then
cost one pass instead of a thousand resampled fits.

Conversations reused (issue 23). When ``conversations`` names the columns of each side's
conversation and some conversation serves more than one judgment, a worker interval treats the
sampled conversations as fixed (measured: it excludes equal strengths in 32-34 % of seeded A/A
studies of a reused pool at 8 and 20 levels). Then the headline interval treats both as sampled
with the **multiway sandwich** (Cameron, Gelbach and Miller 2011): a judgment belongs to one
worker and two conversations, and the meat V_W + V_C - V_WxC - V_P + V_WxP (C: a judgment's
score vector in both its conversations' cells, P: the pair of conversations) counts every two
judgments that share a worker or a conversation exactly once; each part times G/(G-1), a t on
min(workers, conversations per model) - 1 df; it excluded equal strengths in 5.7-6.7 % of 300
studies each at 8, 20 and 60 levels. The **pigeonhole bootstrap** (Owen 2007;
:func:`pigeonhole_counts`: workers and each model's conversations resampled independently, a
judgment counted by the product of their multiplicities) was measured beside it and not adopted:
it counts the judgment noise once per facet and excluded equal strengths in 0-1 % (intervals far
too wide). ``interval`` names the method.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy import optimize, sparse, stats
from scipy.sparse.csgraph import connected_components

from parlai_acute.errors import UserError
from parlai_acute.stats.intervals import percentile_interval
from parlai_acute.stats.resample import cluster_sums, resample_weights
from parlai_acute.stats.winrates import coded, conversation_codes, counts_of_codes, models_of, scored

__all__ = ["DEFAULT_ALPHA", "MIN_JUDGMENTS_FOR_BOOTSTRAP", "PROFILE_SPAN", "BOOTSTRAP", "PROFILE", "WORKERS",
           "SANDWICH", "SANDWICH_FROM", "worker_interval", "fit_counts", "bootstrap_counts", "bootstrap_outcomes", "connected", "separated",
           "penalised_loglik", "profile_loglik", "profile_intervals", "cluster_bootstrap_counts",
           "sandwich_intervals", "pigeonhole_counts", "crossed_sandwich_intervals", "bradley_terry"]

DEFAULT_ALPHA = 0.01
#: Fewer judgments of some model than this and bootstrap intervals are not trusted.
MIN_JUDGMENTS_FOR_BOOTSTRAP = 20
#: Profile bounds are searched this far (log-odds) from the estimate; beyond it: no bound.
PROFILE_SPAN = 60.0
BOOTSTRAP = "percentile bootstrap (judgments)"
PROFILE = "profile likelihood (penalised)"
WORKERS = "percentile bootstrap of whole workers"
SANDWICH = "cluster-robust (sandwich) over workers, t on G-1 df"
PIGEONHOLE = "pigeonhole bootstrap of workers and conversations (Owen 2007)"
SANDWICH_CROSSED = "two-way cluster-robust (sandwich) over workers and conversations, t on min(G)-1 df"
#: From this many workers the worker interval is the sandwich (its cost does not grow with resamples).
SANDWICH_FROM = 200


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


def worker_interval(bootstrap: int, workers: int, min_clusters: int) -> tuple[str, str]:
    """Which interval over workers a ranking gets, the one rule of this module, Davidson's and the
    style-controlled fits: ("sandwich", "") from :data:`SANDWICH_FROM` workers on, ("bootstrap", "")
    below, or ("", why) when there is none (no resamples asked, fewer than ``min_clusters`` workers)."""
    if bootstrap <= 0:
        return "", "no bootstrap asked (0 resamples)"
    if workers < min_clusters:
        return "", f"no interval over workers: only {workers} workers (fewer than {min_clusters})"
    return ("sandwich" if workers >= SANDWICH_FROM else "bootstrap"), ""


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


def separated(wins: np.ndarray) -> bool:
    """Whether some group of models beat every model outside it whenever they met (no
    finite maximum-likelihood strengths exist): the directed graph "i beat j at least
    once" is not strongly connected (Ford 1957)."""
    wins = np.asarray(wins)
    if len(wins) < 2:
        return False
    count, _ = connected_components(wins > 0, directed=True, connection="strong")
    return count > 1


def penalised_loglik(wins: np.ndarray, theta: np.ndarray, alpha: float) -> float:
    """Bradley-Terry log-likelihood of ``theta`` minus ``alpha * sum(theta**2)``."""
    diff = theta[:, None] - theta[None, :]
    return float(-(np.asarray(wins, float) * np.logaddexp(0.0, -diff)).sum() - alpha * (theta ** 2).sum())


def _sum_zero_basis(size: int) -> np.ndarray:
    """Orthonormal columns spanning the vectors of length ``size`` that sum to zero."""
    if size < 2:
        return np.zeros((size, 0))
    q, _ = np.linalg.qr(np.eye(size) - 1.0 / size)
    return q[:, : size - 1]


def profile_loglik(wins: np.ndarray, i: int, t: float, alpha: float, max_iter: int = 100) -> float:
    """Maximum penalised log-likelihood over strengths (sum zero) with ``theta[i] = t``."""
    wins = np.asarray(wins, dtype=float)
    k = len(wins)
    others = np.array([j for j in range(k) if j != i])
    basis = _sum_zero_basis(k - 1)
    z = np.zeros(basis.shape[1])
    total = wins + wins.T

    def theta_of(z):
        theta = np.empty(k)
        theta[i] = t
        theta[others] = -t / (k - 1) + basis @ z
        return theta

    for _ in range(max_iter if basis.shape[1] else 0):
        theta = theta_of(z)
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = (wins.sum(axis=1) - (total * p).sum(axis=1) - 2 * alpha * theta)[others]
        weight = total * p * (1 - p)
        info = (np.diag(weight.sum(axis=1)) - weight + 2 * alpha * np.eye(k))[np.ix_(others, others)]
        step = np.linalg.lstsq(basis.T @ info @ basis, basis.T @ grad, rcond=None)[0]
        largest = np.abs(step).max()
        z = z + step * min(1.0, 2.0 / max(largest, 1e-300))
        if largest < 1e-9:
            break
    return penalised_loglik(wins, theta_of(z), alpha)


def profile_intervals(wins: np.ndarray, theta: np.ndarray, alpha: float = DEFAULT_ALPHA,
                      confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Profile-likelihood interval of each strength: the values whose profile penalised
    log-likelihood is within ``chi2_1(confidence) / 2`` of the maximum. A bound not
    reached within :data:`PROFILE_SPAN` is NaN (the data and the penalty set none)."""
    wins = np.asarray(wins, dtype=float)
    top = penalised_loglik(wins, np.asarray(theta, float), alpha)
    drop = stats.chi2.ppf(confidence, 1) / 2
    low, high = np.full(len(wins), np.nan), np.full(len(wins), np.nan)
    for i, estimate in enumerate(theta):
        def gap(t):
            return top - profile_loglik(wins, i, t, alpha) - drop

        for direction, out in ((-1, low), (1, high)):
            near, distance = estimate, 0.5
            while distance <= PROFILE_SPAN:
                far = estimate + direction * distance
                if gap(far) > 0:
                    out[i] = optimize.brentq(gap, min(near, far), max(near, far), xtol=1e-6)
                    break
                near, distance = far, distance * 2
    return low, high


def _judgments(count) -> str:
    return f"{int(count)} judgment" + ("" if count == 1 else "s")


def _notes(wins: np.ndarray, alpha: float) -> list[str]:
    notes = []
    for i in range(len(wins)):
        won, lost = wins[i].sum(), wins[:, i].sum()
        if lost == 0:
            notes.append(f"never lost in {_judgments(won)}: no interval can be given (one end would be set by "
                         f"the regularisation, bt_alpha={alpha:g}, the other by a likelihood that overstates so "
                         f"few all-or-nothing judgments); read the exact win-rate intervals")
        elif won == 0:
            notes.append(f"never won in {_judgments(lost)}: no interval can be given (one end would be set by "
                         f"the regularisation, bt_alpha={alpha:g}, the other by a likelihood that overstates so "
                         f"few all-or-nothing judgments); read the exact win-rate intervals")
        else:
            notes.append("")
    return notes


def _drop_separated(wins: np.ndarray, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """No interval for a model that never lost (or never won): its data-side profile bound is
    anti-conservative (3 wins of 3 gave a lower bound above zero while the exact binomial p is
    0.25) and its other bound is only the penalty's. Said plainly in the note instead."""
    low, high = np.array(low, dtype=float), np.array(high, dtype=float)
    for i in range(len(wins)):
        if wins[:, i].sum() == 0 or wins[i].sum() == 0:
            low[i] = high[i] = np.nan
    return low, high


def bootstrap_outcomes(wins: np.ndarray, ties: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`bootstrap_counts` of judgments some of which are ties: a tie is drawn as one
    judgment and adds half a win to each side. Without ties exactly :func:`bootstrap_counts`."""
    if not np.asarray(ties).any():
        return bootstrap_counts(wins, resamples, rng)
    k = len(wins)
    i, j = np.triu_indices(k, 1)
    cells = np.concatenate([np.asarray(wins, float).ravel(), np.asarray(ties, float)[i, j]])
    draws = rng.multinomial(int(cells.sum()), cells / cells.sum(), size=resamples).astype(float)
    out = draws[:, : k * k].reshape(resamples, k, k)
    half = draws[:, k * k:] / 2
    out[:, i, j] += half
    out[:, j, i] += half
    return out


def cluster_bootstrap_counts(df: pd.DataFrame, cluster: str, models: list[str], resamples: int,
                             rng: np.random.Generator) -> np.ndarray:
    """``(resamples, K, K)`` win matrices, each from a resample of whole clusters (workers)
    with replacement: every judgment counts as often as its worker was drawn (a tie as half a
    win for each side)."""
    index = {m: i for i, m in enumerate(models)}
    first, second, score = scored(df)
    f, s = pd.Series(first).map(index).to_numpy(), pd.Series(second).map(index).to_numpy()
    codes, uniques = pd.factorize(df[cluster])
    weights = resample_weights(len(uniques), resamples, rng)
    if (score == 1).all():
        sums = cluster_sums(weights, codes, f * len(models) + s, score, len(models) ** 2)
    else:
        sums = cluster_sums(weights, np.concatenate([codes, codes]),
                            np.concatenate([f * len(models) + s, s * len(models) + f]),
                            np.concatenate([score, 1 - score]), len(models) ** 2)
    return sums.reshape(resamples, len(models), len(models))


def sandwich_intervals(df: pd.DataFrame, cluster: str, models: list[str], theta: np.ndarray, wins: np.ndarray,
                       alpha: float, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Wald intervals of the (mean-zero) strengths with a cluster-robust covariance."""
    index = pd.Index(models)
    k = len(models)
    first, second, score = scored(df)
    w, l = index.get_indexer(first), index.get_indexer(second)
    codes, uniques = pd.factorize(df[cluster])
    g = len(uniques)
    residual = score - 1.0 / (1.0 + np.exp(theta[l] - theta[w]))  # score - P(first beats second): the score
    scores = (np.bincount(codes * k + w, weights=residual, minlength=g * k)
              - np.bincount(codes * k + l, weights=residual, minlength=g * k)).reshape(g, k)
    meat = scores.T @ scores * g / max(g - 1, 1)
    total = wins + wins.T
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    weight = total * p * (1 - p)
    info = np.diag(weight.sum(axis=1)) - weight + 2 * alpha * np.eye(k)
    centre = np.eye(k) - 1.0 / k
    bread = centre @ np.linalg.pinv(info)
    se = np.sqrt(np.maximum(np.diag(bread @ meat @ bread.T), 0))
    t = stats.t.ppf(0.5 + confidence / 2, max(g - 1, 1))
    return theta - t * se, theta + t * se


def _sides(df: pd.DataFrame, conversations: tuple[str, str], models: list[str], coded_sides: tuple | None = None):
    """(first, second, score, conversation of first, conversation of second, model of each
    conversation): conversations coded 0..C-1, each within its model (integer keys throughout:
    a million judgments cost a second, not ten). ``coded_sides``: (first, second, score) already
    coded as positions in ``models``, so the names are not hashed again."""
    index = pd.Index(models)
    if coded_sides is None:
        first, second, score = scored(df)
        f, s = index.get_indexer(first), index.get_indexer(second)
    else:
        f, s, score = coded_sides
    left = index.get_indexer(df["model_left"].to_numpy(dtype=object))
    dialogue, count = conversation_codes(np.concatenate([df[conversations[0]].to_numpy(dtype=object),
                                                         df[conversations[1]].to_numpy(dtype=object)]))
    n = len(df)
    dl, dr = dialogue[:n], dialogue[n:]
    first_is_left = f == left
    conv_f, conv_s = np.where(first_is_left, dl, dr), np.where(first_is_left, dr, dl)
    size = max(count, 1)
    codes, uniques = pd.factorize(np.concatenate([f * size + conv_f, s * size + conv_s]))
    owner = (np.asarray(uniques) // size).astype(np.int64)
    return f, s, score, codes[:n], codes[n:], owner


def conversations_reused(df: pd.DataFrame, conversations: tuple[str, str] | None,
                         models: list[str] | None = None, coded_sides: tuple | None = None):
    """The coded sides (:func:`_sides`) when some conversation (per model) serves more than one
    judgment, else None."""
    if conversations is None or not set(conversations) <= set(df.columns) or not len(df):
        return None
    sides = _sides(df, conversations, models or models_of(df), coded_sides)
    return sides if len(sides[5]) < 2 * len(df) else None


def pigeonhole_counts(df: pd.DataFrame, cluster: str, conversations: tuple[str, str], models: list[str],
                      resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(resamples, K, K)`` win matrices of the pigeonhole bootstrap: workers drawn with
    replacement, each model's conversations drawn with replacement within the model, and every
    judgment counted worker multiplicity x first conversation's x second's times."""
    k = len(models)
    f, s, score, cf, cs, owner = _sides(df, conversations, models)
    workers, g = pd.factorize(df[cluster])
    w = resample_weights(len(g), resamples, rng).astype(float)
    c = np.empty((resamples, len(owner)))
    for m in np.unique(owner):  # stratified: each model keeps its number of conversations
        mine = np.flatnonzero(owner == m)
        c[:, mine] = resample_weights(len(mine), resamples, rng)
    weight = w[:, workers] * c[:, cf] * c[:, cs]  # (resamples, judgments)
    cells = np.concatenate([f * k + s, s * k + f])
    values = np.concatenate([score, 1 - score])
    table = sparse.coo_matrix((values, (np.concatenate([np.arange(len(df))] * 2), cells)),
                              shape=(len(df), k * k)).tocsr()
    return np.asarray((table.T @ weight.T).T).reshape(resamples, k, k)


#: Cells x models up to which a part of the multiway meat sums its cells densely (32 MB).
_DENSE_CELLS = 2 ** 22
#: Buckets of the repeated-cell filter (:func:`_repeated`, 40 MB).
_BUCKETS = 2 ** 23


def _repeated(cells: np.ndarray, levels: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    """(which entries share their cell with another entry, those entries' cells coded 0..m-1,
    m). Cells are integers 0..levels-1 (any non-negative integers if ``levels`` is None); an
    entry alone in its bucket (the cell modulo 2**23) is alone in its cell, so only the few
    entries of shared buckets are hashed exactly."""
    exact = levels is not None and levels <= _BUCKETS
    size = levels if exact else _BUCKETS
    bucket = cells if exact else cells % _BUCKETS
    index = np.arange(len(cells), dtype=np.int32 if len(cells) < 2 ** 31 else np.int64)
    last = np.empty(size, dtype=index.dtype)
    last[bucket] = index  # one entry's index per bucket: the others of that bucket differ from it
    shared = np.zeros(size, dtype=bool)
    shared[bucket[last[bucket] != index]] = True
    candidate = shared[bucket]
    if exact:  # the shared cells in order, without hashing
        return candidate, (np.cumsum(shared, dtype=index.dtype) - 1)[cells[candidate]], int(shared.sum())
    codes, uniques = pd.factorize(cells[candidate])
    several = np.bincount(codes)[codes] > 1
    out = np.zeros(len(cells), dtype=bool)
    out[np.flatnonzero(candidate)[several]] = True
    codes, uniques = pd.factorize(codes[several])
    return out, codes, len(uniques)


def _own_outer(f: np.ndarray, s: np.ndarray, r: np.ndarray, k: int) -> np.ndarray:
    """sum of each entry's r (e_f - e_s) outer itself: what the cells of one entry add."""
    sq = r ** 2
    return np.bincount(np.concatenate([f * k + f, s * k + s, f * k + s, s * k + f]),
                       weights=np.concatenate([sq, sq, -sq, -sq]), minlength=k * k).reshape(k, k)


def _cell_outer(cells: np.ndarray, f: np.ndarray, s: np.ndarray, r: np.ndarray, k: int, levels: int) -> np.ndarray:
    """sum over cells 0..levels-1 of (the cell's total of r (e_f - e_s)) outer itself."""
    if levels * k > _DENSE_CELLS:  # many cells: sparse totals
        totals = sparse.coo_matrix((np.concatenate([r, -r]), (np.concatenate([cells, cells]), np.concatenate([f, s]))),
                                   shape=(levels, k)).tocsr()
        return np.asarray((totals.T @ totals).todense())
    totals = np.bincount(np.concatenate([cells * k + f, cells * k + s]), weights=np.concatenate([r, -r]),
                         minlength=levels * k).reshape(levels, k)
    return totals.T @ totals


def _outer_sums(cells: np.ndarray, f: np.ndarray, s: np.ndarray, r: np.ndarray, k: int, correct: bool,
                levels: int | None = None, own: np.ndarray | None = None) -> np.ndarray:
    """sum over cells of (the cell's total score vector) outer itself, times G/(G-1) when
    ``correct``: one part of the multiway meat. Each entry (a judgment's membership of a cell)
    adds the vector r (e_f - e_s) to its cell; ``levels``: the cells are already coded
    0..levels-1 (G = levels); ``own``: :func:`_own_outer` of all the entries. Few cells are
    summed densely (bincount, one k x k product); of many, mostly of one entry each (worker x
    conversation), a cell of one entry adds its own outer product, so only the entries that
    share a cell are summed as vectors: no sparse matrix of a million rows to sort."""
    if levels is not None and levels * k <= _DENSE_CELLS:
        out, g = _cell_outer(cells, f, s, r, k, levels), levels
    else:
        several, codes, m = _repeated(cells, levels)
        f2, s2, r2 = f[several], s[several], r[several]
        own = _own_outer(f, s, r, k) if own is None else own
        out = own - _own_outer(f2, s2, r2, k) + _cell_outer(codes.astype(np.int64), f2, s2, r2, k, m)
        g = levels if levels is not None else int(len(cells) - several.sum()) + m
    return out * g / max(g - 1, 1) if correct else out


def crossed_sandwich_intervals(df: pd.DataFrame, cluster: str, conversations: tuple[str, str], models: list[str],
                               theta: np.ndarray, wins: np.ndarray, alpha: float, confidence: float,
                               sides: tuple | None = None, workers: np.ndarray | None = None
                               ) -> tuple[np.ndarray, np.ndarray]:
    """Wald intervals of the (mean-zero) strengths with the multiway (workers x conversations)
    cluster-robust covariance: a judgment belongs to one worker and two conversations, so the meat
    is V_W + V_C - V_WxC - V_P + V_WxP (C: each judgment's score vector in both its conversations'
    cells; P: the pair of conversations), which counts every two judgments that share a worker or
    a conversation exactly once; each part times G/(G-1), a t on min(workers, conversations per
    model) - 1 df (module docstring). ``sides`` (:func:`_sides`) and ``workers`` (the cluster's
    codes 0..G-1): the table already coded, so a million judgments are not hashed again."""
    k = len(models)
    f, s, score, cf, cs, owner = sides or _sides(df, conversations, models)
    if workers is None:
        workers = pd.factorize(df[cluster])[0]
    w = np.asarray(workers, dtype=np.int64)
    g_w, g_c = int(w.max()) + 1 if len(w) else 0, len(owner)
    r = score - 1.0 / (1.0 + np.exp(theta[s] - theta[f]))  # each judgment's score vector r (e_f - e_s)
    f, s, cf, cs = (np.asarray(a, dtype=np.int64) for a in (f, s, cf, cs))
    both = (np.concatenate([f, f]), np.concatenate([s, s]), np.concatenate([r, r]))  # in two conversations
    own = _own_outer(f, s, r, k)  # each judgment's vector outer itself, summed: the cells of one judgment

    def part(cell, correct=True, levels=None):  # cell: one code per judgment
        return _outer_sums(cell, f, s, r, k, correct, levels, own)

    def member(cell_f, cell_s, correct=True, levels=None):  # each judgment's vector in two cells
        return _outer_sums(np.concatenate([cell_f, cell_s]), *both, k, correct, levels, 2 * own)

    lo, hi = np.minimum(cf, cs), np.maximum(cf, cs)
    pair = lo * g_c + hi
    worker_part = part(w, levels=g_w)
    meat = worker_part + member(cf, cs, levels=g_c) - member(w * g_c + cf, w * g_c + cs, False)
    if _repeated(pair, g_c * g_c)[0].any():  # a pair of conversations judged twice; else its cells and the worker's are the same singletons
        meat += part(w * g_c * g_c + pair, False) - part(pair, False, levels=g_c * g_c)
    total = wins + wins.T
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    weight = total * p * (1 - p)
    info = np.diag(weight.sum(axis=1)) - weight + 2 * alpha * np.eye(k)
    bread = (np.eye(k) - 1.0 / k) @ np.linalg.pinv(info)
    var = np.diag(bread @ meat @ bread.T)
    if (var <= 0).any():  # the inclusion-exclusion sum is not positive: the workers' part alone
        var = np.diag(bread @ worker_part @ bread.T)
    per_model = np.bincount(owner, minlength=k)
    t = stats.t.ppf(0.5 + confidence / 2, max(min(g_w, int(per_model[per_model > 0].min())) - 1, 1))
    se = np.sqrt(np.maximum(var, 0))
    return theta - t * se, theta + t * se


def bradley_terry(df: pd.DataFrame, bootstrap: int = 1000, seed: int = 0, alpha: float = DEFAULT_ALPHA,
                  confidence: float = 0.95, models: list[str] | None = None, cluster: str | None = None,
                  min_judgments: int = MIN_JUDGMENTS_FOR_BOOTSTRAP, min_clusters: int = 5,
                  conversations: tuple[str, str] | None = None) -> pd.DataFrame:
    """Rank the models of a judgments table (``winner``/``loser`` columns; a tie, ``outcome``
    "tie" or "both_bad", counts as half a win for each side: Davidson's model in
    :mod:`parlai_acute.stats.davidson` fits ties as ties).

    Returns one row per model, best first: model, strength (log-strength, mean zero),
    ci_low, ci_high, interval (the method of that interval), note (why a bound is not
    the data's), rank (1 = best), wins, n, and p_beats_average (sigmoid of the strength:
    chance of beating a model of strength 0). The interval is the percentile bootstrap
    unless the data are separated, some model has fewer than ``min_judgments``
    judgments, or the bootstrap interval has no width; then it is the penalised profile
    likelihood interval (see the module docstring). With ``cluster`` (a column, e.g.
    "worker") also: workers (distinct clusters per model) and ci_low_workers /
    ci_high_workers, a percentile bootstrap over clusters, given only where the
    judgment bootstrap is. ``conversations`` (the columns of the left and right conversation):
    where some conversation serves more than one judgment, that interval treats workers and
    conversations both as sampled (module docstring), and ``interval`` says so.
    """
    if alpha < 0:
        raise UserError(f"the penalty alpha must be 0 or more, got {alpha}", param="alpha")
    i, j, tie, models = coded(df, models)  # coded once: the counts and the intervals over workers share them
    decisive, ties = counts_of_codes(i, j, tie, len(models))
    wins = decisive + ties / 2 if ties.any() else decisive  # a tie is half a win for each side
    if len(models) < 2:
        raise UserError(f"a ranking needs judgments between at least two models, got {models}; "
                        f"check the judgments after exclusions")
    if not connected(wins):
        raise UserError("some models are never compared, directly or through other models, so their "
                        "strengths cannot be put on one scale; add pairings that link the groups")
    split = separated(wins)
    if split and alpha == 0:
        raise UserError("some models won (or lost) every comparison, so unpenalised Bradley-Terry strengths "
                        "do not exist; use a penalty greater than 0 (bt_alpha)", param="bt_alpha")
    theta = fit_counts(wins, alpha=alpha)
    judged = wins.sum(axis=1) + wins.sum(axis=0)
    nan = np.full(len(models), np.nan)
    low, high, method = nan, nan, ""
    rng = np.random.default_rng(seed)
    trust_bootstrap = not split and judged.min() >= min_judgments
    if bootstrap > 0 and trust_bootstrap:
        samples = fit_counts(bootstrap_outcomes(decisive, ties, bootstrap, rng), alpha=alpha, init=theta)
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(samples, [tail, 100 - tail], axis=0)
        method = BOOTSTRAP
        if np.any(high - low < 1e-9):
            trust_bootstrap = False
    if bootstrap > 0 and not trust_bootstrap:
        low, high = _drop_separated(wins, *profile_intervals(wins, theta, alpha, confidence))
        method = PROFILE
    order = np.argsort(-theta, kind="stable")
    rank = np.empty(len(models), dtype=int)
    rank[order] = np.arange(1, len(models) + 1)
    table = pd.DataFrame({
        "model": models, "strength": theta, "ci_low": low, "ci_high": high, "interval": method,
        "note": _notes(wins, alpha), "rank": rank, "wins": wins.sum(axis=1), "n": judged,
        "p_beats_average": 1 / (1 + np.exp(-theta)),
    })
    if cluster is not None:
        codes, names = pd.factorize(df[cluster])  # coded once: the counts and the intervals share them
        codes = codes.astype(np.int64)
        size = int(codes.max()) + 1
        if len(models) * size <= 2 ** 26:  # a flag per (model, worker): no sort of two million keys
            seen = np.zeros(len(models) * size, dtype=bool)
            seen[i * size + codes] = seen[j * size + codes] = True
            table["workers"] = seen.reshape(len(models), size).sum(axis=1)
        else:
            seen = np.unique(np.concatenate([i * size + codes, j * size + codes]))
            table["workers"] = np.bincount(seen // size, minlength=len(models))
        table = table.rename(columns={"ci_low": "ci_low_judgments", "ci_high": "ci_high_judgments",
                                      "interval": "interval_judgments"})
        c_low, c_high, why = nan, nan, ""
        workers = len(names)
        crossed = conversations_reused(df, conversations, models, (i, j, np.where(tie, 0.5, 1.0)))
        kind, why = worker_interval(bootstrap, workers, min_clusters)
        if bootstrap > 0 and method != BOOTSTRAP:
            kind, why = "", "no interval over workers: the data are separated or small (see the judgment interval)"
        if kind and crossed is not None:
            c_low, c_high = crossed_sandwich_intervals(df, cluster, conversations, models, theta, wins, alpha,
                                                       confidence, sides=crossed,
                                                       workers=codes)
        elif kind == "sandwich":
            c_low, c_high = sandwich_intervals(df, cluster, models, theta, wins, alpha, confidence)
        elif kind == "bootstrap":
            counts = cluster_bootstrap_counts(df, cluster, models, bootstrap, rng)
            c_low, c_high = percentile_interval(fit_counts(counts, alpha=alpha, init=theta), confidence)
            if np.isnan(c_low).any():
                c_low, c_high = nan, nan
                why = "no interval over workers: the worker resamples do not vary or are too often undefined"
        table["ci_low"], table["ci_high"] = c_low, c_high
        named = SANDWICH_CROSSED if crossed is not None else SANDWICH if workers >= SANDWICH_FROM else WORKERS
        table["interval"] = named if np.isfinite(c_low).all() else ""
        table["note"] = [n or why for n in table["note"]]
    return table.sort_values("rank").reset_index(drop=True)
