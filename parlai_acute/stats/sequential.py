"""Anytime-valid inference: confidence sequences and sequential decisions for bounded means.

A fixed-sample test is valid only if the sample size is fixed in advance and the data are
looked at once. A *confidence sequence* (CS) is a sequence of intervals C_1, C_2, ... with
P(the true mean is in every C_t at once) >= 1 - alpha, so a researcher may look after every
judgment, stop as soon as an interval excludes "no difference", or keep going, and the
error rate stays alpha. Three constructions, written on numpy/scipy (``confseq`` does not
build here):

* :func:`log_capital` / :func:`confidence_sequence`, betting (Waudby-Smith & Ramdas,
  "Estimating means of bounded random variables by betting", JRSS-B 2024): for each
  candidate mean m on a grid, a gambler bets on x - m; the wealth is a nonnegative
  martingale when m is the mean, so by Ville's inequality it ever exceeds 1/alpha with
  probability <= alpha. The CS is the set of m whose wealth has stayed below 1/alpha
  (running intersection). Valid for any distribution on [0, 1]. Two bettors
  (:func:`bets_for` picks by design):
  ``bets="mixture"`` spreads the wealth over constant bets, one per alternative mean q from
  a Beta(5, 5) prior: on 0/1 outcomes exactly the beta-binomial mixture of Howard et al.
  (below), deciding a 0.6 vs 0.5 win rate in a median 182 judgments where the fixed exact
  test needs 210; ``bets="plugin"`` (:func:`betting_log_capital`) is their hedged capital
  process with predictable plug-in bets (Thm. 3, eq. 26), which adapts to the variance
  and so suits cluster means.
* :func:`normal_mixture_halfwidth` -- the two-sided normal-mixture boundary of Howard,
  Ramdas, McAuliffe & Sekhon ("Time-uniform, nonparametric, nonasymptotic confidence
  sequences", Ann. Statist. 2021, eq. 14) for sub-Gaussian sums: |S_t| < sqrt((V_t + rho)
  log((V_t + rho) / (rho alpha^2))), with V_t = t (b - a)^2 / 4 for outcomes in [a, b].
  Closed form: used to project how many more judgments an undecided comparison needs.
* :func:`beta_mixture_log_factor` -- for 0/1 outcomes, the Beta(a, b)-mixture likelihood
  ratio against p0 (Howard et al. 2021, Sec. 3.2, the conjugate-mixture case): an exact
  Bayes factor, a test martingale under p0.

**Clustered judgments.** Turns of one dialogue, judgments of one worker, items of one
conversation are not independent, and a CS over judgments would be anti-conservative (see
issue 15). The observations fed to these functions are therefore the *sampled units*: one
value per completed cluster (its mean outcome, in [0, 1]), in the order the clusters
completed (:func:`cluster_stream`). Independent clusters make those values independent
whatever the within-cluster correlation, so the guarantee holds with cluster random effects
of any strength; the estimand is the mean over clusters of the cluster's win share.
Independent judgments are the special case of clusters of size one.

**Two sampled facets** (issue 23). When the same conversations serve the judgments of many
workers (an ACUTE pool of conversation pairs), the worker means are independent *given the
conversations* only: a sequence over them is valid for "these conversations" and, peeked at
after every 4 of 80 workers judging a pool of 20 pairs (quality sd 1 on the log-odds), declares
equal models different in 31.5 % of 2,000 seeded runs (benchmarks/bench_sequential.py). For such
comparisons status and the stop rule use :func:`crossed_sequence`: at each look, the pooled mean
(the protocol's estimate) +/- :func:`crossed_multiplier` times its two-way cluster-robust
standard error over the worker and both sides' conversations -- the analysis' own CR3 sandwich
(:func:`parlai_acute.stats.inference.multiway_tests`), so every facet the study sampled is in
the error bar. The multiplier is the Gaussian-mixture boundary of the asymptotic confidence
sequences of Waudby-Smith, Arnold, Wu, Wang and Ramdas (Ann. Statist. 2024), written as a number
of standard errors on the worker clock (3.0-3.4 from 10 to 200 workers at alpha 0.05, against
1.96 for one look), its tail read on a t with min(levels) - 1 df like the fixed two-way test.
The decision also needs the one-facet betting sequence to agree (valid at any size; it guards
the first looks, where the sandwich rests on few levels); a comparison is then decided for the
models, not only for these conversations. Measured on the design above (2,000 A/A runs): 0.65 %
false stops (the two-facet sequence alone: the same; the fixed two-way test once at the end:
4.2 %). The price of looking at every step with a persistent conversation effect: at a log-odds
difference of 0.8 the rule stops 25 % of runs where the fixed analysis of all 80 workers marks
59 %; at 1.5, 89 % against 98 %, in a median 20 of the 80 workers (docs/benchmarks.md).
Candidates measured and not taken: a betting sequence over a coarser independent unit (connected
components of the worker-conversation graph) has none -- the graph is one component from the
first looks on, every worker meeting the pool; the fixed two-way test at alpha / (number of
looks) beside the one-facet sequence holds its level too, with about the same power (0.8 % false
stops; 26 % and 90 % power), but needs the number of looks fixed in advance, which a live run's
looks (every unit, then every 5 % growth) are not. The asymptotic sequence is valid as the
levels of both facets grow; at 20 conversations per model it is conservative (0.65 %), and with
fewer than :func:`parlai_acute.stats.inference.min_clusters` levels of a facet it says nothing.
Static SSA, where workers label replies to several contexts, gets the same procedure on the context
clock, :func:`split_sequence`, with the standard error of the SSA analysis' own split variance
(:func:`parlai_acute.stats.inference.difference_split_tests`; an item's majority is not one cell of
a worker, so the sandwich of ``multiway_tests`` does not apply): peeking after every 10 of 200
contexts labelled by a pool of 6 workers, the disjoint rates over contexts stop 17 % of A/A runs,
the rule 0.0 % (docs/anytime.md).

Every function is pure (arrays or tidy tables in, arrays or dicts out) and vectorised over
leading axes so that simulations of thousands of runs looked at after every observation
stay fast.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from parlai_acute.errors import UserError

__all__ = ["BET_CAP", "GRID", "PRIOR", "POINTS", "BINS", "plugin_bets", "betting_log_capital", "mixture_bets",
           "log_capital", "confidence_sequence", "crossing_index", "sequential_test", "normal_mixture_rho",
           "normal_mixture_halfwidth", "normal_mixture_log_martingale", "beta_mixture_log_factor",
           "cluster_stream", "judgments_needed", "bets_for", "decide", "simulate_cluster_means", "CROSSED_TIGHTEST",
           "crossed_multiplier", "crossed_looks", "crossed_sequence", "split_sequence", "crossed_decide"]

#: largest bet as a share of the wealth that may be lost (Waudby-Smith & Ramdas use 1/2 or 3/4)
BET_CAP = 0.5
#: default grid of candidate means for the betting CS (the interval ends are exact to 1/GRID)
GRID = 400
#: the mixture bettor: Beta prior over the alternative mean and how many bets it mixes
PRIOR = (5.0, 5.0)
POINTS = 32
#: distinct outcome values beyond which the mixture CS bins them (conservatively)
BINS = 512


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise UserError(f"alpha={alpha} must be strictly between 0 and 1; 0.05 is usual")


def _unit(x, lo: float, hi: float) -> np.ndarray:
    """Outcomes rescaled from [lo, hi] to [0, 1]; refuses values outside the range."""
    x = np.asarray(x, dtype=float)
    if not hi > lo:
        raise UserError(f"the outcome range [{lo}, {hi}] is empty; give lo < hi")
    if x.size and (np.nanmin(x) < lo - 1e-12 or np.nanmax(x) > hi + 1e-12 or np.isnan(x).any()):
        raise UserError(f"outcomes must lie in [{lo}, {hi}] with no missing values; clean or rescale them")
    return np.clip((x - lo) / (hi - lo), 0.0, 1.0)


def plugin_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """Predictable plug-in bet sizes (Waudby-Smith & Ramdas eq. 26), along the last axis.

    lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1 + t))) uses only x_1..x_{t-1}
    (sigma2 is a regularised running variance starting at 1/4), so the wealth stays a
    martingale; the t log t scaling makes the CS width shrink like sqrt(log t / t).
    """
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    sq = np.cumsum((x - mu) ** 2, axis=-1)
    sigma2 = (0.25 + sq) / (t + 1)
    prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sigma2[..., :-1]], axis=-1)
    return np.sqrt(2 * math.log(2 / alpha) / (prev * t * np.log1p(t)))


def betting_log_capital(x, m, alpha: float = 0.05, theta: float = 0.5) -> np.ndarray:
    """log wealth of the hedged bettor after each observation, for candidate mean(s) ``m``.

    ``x``: outcomes in [0, 1], shape (..., T). ``m``: a scalar, or an array broadcasting
    against (..., T) after a trailing axis (e.g. shape (G,) gives (..., T, G)). The wealth
    is theta K+ + (1 - theta) K- where K+ bets that the mean exceeds m and K- that it is
    below; each bet is capped at BET_CAP of what could be lost, so wealth stays positive.
    """
    _check_alpha(alpha)
    x = np.asarray(x, dtype=float)
    lam = plugin_bets(x, alpha)
    m = np.asarray(m, dtype=float)
    if m.ndim:
        x, lam = x[..., None], lam[..., None]
    lam_up = np.minimum(lam, BET_CAP / np.maximum(m, 1e-12))
    lam_down = np.minimum(lam, BET_CAP / np.maximum(1 - m, 1e-12))
    axis = -2 if m.ndim else -1
    up = np.cumsum(np.log1p(lam_up * (x - m)), axis=axis)
    down = np.cumsum(np.log1p(-lam_down * (x - m)), axis=axis)
    return np.logaddexp(math.log(theta) + up, math.log(1 - theta) + down)


def mixture_bets(m, prior: tuple[float, float] = PRIOR, points: int = POINTS) -> np.ndarray:
    """Constant bet sizes mixed by the ``mixture`` bettor, shape m.shape + (points,).

    Bet lambda_q = (q - m) / (m (1 - m)) for q at the ``points`` quantile midpoints of a
    Beta(prior) distribution (equal weights). On 0/1 outcomes the wealth of bet lambda_q is
    the likelihood ratio of rate q against m, so the mixture is Howard et al.'s beta-binomial
    mixture; on any other outcome in [0, 1] each constant bet keeps the wealth a nonnegative
    martingale, so the mixture is valid there too (and never needs a variance estimate).
    """
    q = stats.beta.ppf((np.arange(points) + 0.5) / points, *prior)
    m = np.clip(np.asarray(m, dtype=float), 1e-9, 1 - 1e-9)[..., None]
    return (q - m) / (m * (1 - m))


def log_capital(x, m: float, alpha: float = 0.05, bets: str = "mixture") -> np.ndarray:
    """log wealth after each observation against the single mean ``m``, along the last axis of
    ``x`` (outcomes in [0, 1]; any leading axes, e.g. simulated runs). ``bets``: "mixture"
    (:func:`mixture_bets`; best for deciding early) or "plugin" (:func:`betting_log_capital`;
    narrowest intervals around a planned sample size)."""
    _check_alpha(alpha)
    if bets == "plugin":
        return betting_log_capital(x, m, alpha)
    if bets != "mixture":
        raise UserError(f"bets must be 'mixture' or 'plugin', got {bets!r}")
    x = np.asarray(x, dtype=float)
    lam = mixture_bets(m)
    out = np.empty(x.shape)
    chunk = max(1, 4_000_000 // max(x.shape[-1] * lam.size, 1))  # bound memory over leading axes
    flat, flat_out = x.reshape(-1, x.shape[-1]), out.reshape(-1, x.shape[-1])
    for i in range(0, flat.shape[0], chunk):
        wealth = np.cumsum(np.log1p(lam * (flat[i:i + chunk, :, None] - m)), axis=1)
        flat_out[i:i + chunk] = special.logsumexp(wealth, axis=-1) - math.log(lam.size)
    return out


def _looks(n: int, must: list[int], most: int = 400) -> np.ndarray:
    """Indices at which the running intersection is formed: every observation for short
    streams, else ``most`` geometrically spaced ones plus ``must`` and the last. Any subset
    of looks gives a valid CS (each look's set is valid at once for all times)."""
    if n <= most:
        return np.arange(n)
    idx = np.unique(np.geomspace(1, n, most).astype(int) - 1)
    return np.unique(np.concatenate([idx, [i for i in must if 0 <= i < n], [n - 1]]).astype(int))


def _mixture_inside(u: np.ndarray, looks: np.ndarray, ms: np.ndarray, alpha: float) -> np.ndarray:
    """Boolean (looks, grid): is m still inside the mixture CS at each look.

    Wealth depends on the outcomes only through how often each value occurred, so the cost
    is (looks x distinct values x grid x points) in one matrix product. Past BINS distinct
    values (cluster means of varied sizes), outcomes are binned and each bet is charged its
    bin's worst edge (the lower edge for bets on "above m", the upper for "below"): that
    wealth is never more than the true one, so the CS only gets wider, never invalid.
    """
    values, inverse = np.unique(u, return_inverse=True)
    if values.size > BINS:
        inverse = np.minimum((u * BINS).astype(int), BINS - 1)
        values = np.arange(BINS + 1) / BINS  # edges: bin i spans [values[i], values[i+1]]
        low, high = values[:-1], values[1:]
    else:
        low = high = values
    lam = mixture_bets(ms)  # (G, Q)
    total = np.zeros((looks.size,) + lam.shape)
    for start in range(0, low.size, 128):
        part = slice(start, start + 128)
        onehot = (inverse[:, None] == np.arange(low.size)[part][None, :]).astype(float)
        counts = np.cumsum(onehot, axis=0)[looks]  # (L, V_part)
        edge = np.where(lam[None] > 0, low[part][:, None, None], high[part][:, None, None])
        logs = np.log1p(lam[None] * (edge - ms[None, :, None]))  # (V_part, G, Q)
        total += (counts @ logs.reshape(logs.shape[0], -1)).reshape(total.shape)
    wealth = special.logsumexp(total, axis=-1) - math.log(lam.shape[-1])
    return np.logical_and.accumulate(wealth < math.log(1 / alpha), axis=0)


def confidence_sequence(x, alpha: float = 0.05, lo: float = 0.0, hi: float = 1.0, bets: str = "mixture",
                        grid: int = GRID, must_look: tuple[int, ...] = ()) -> dict:
    """Betting confidence sequence for the mean of outcomes in [lo, hi].

    Returns ``lower``/``upper`` at the looks ``looks`` (0-based observation indices; every
    observation for streams up to 400 long, and the indices in ``must_look``), on the outcomes' scale, as a running
    intersection (they never widen), and ``estimate`` (running mean, every observation).
    Grid points are cell centres; intervals are widened by half a cell so the grid never
    makes them miss a mean they cover.
    """
    u = _unit(x, lo, hi)
    if u.ndim != 1:
        raise UserError("confidence_sequence takes one sequence of outcomes; simulate many with log_capital")
    n = u.size
    est = np.cumsum(u) / np.arange(1, n + 1) if n else np.array([])
    if n == 0:
        return {"lower": np.array([]), "upper": np.array([]), "estimate": est, "looks": np.array([], int)}
    ms = (np.arange(grid) + 0.5) / grid
    if bets == "mixture":
        looks = _looks(n, list(must_look))
        inside = _mixture_inside(u, looks, ms, alpha)
    else:
        looks = np.arange(n)
        inside = np.logical_and.accumulate(log_capital(u, ms, alpha, bets=bets) < math.log(1 / alpha), axis=0)
    any_in = inside.any(axis=1)
    first = np.argmax(inside, axis=1)
    last = grid - 1 - np.argmax(inside[:, ::-1], axis=1)
    half = 0.5 / grid
    at = est[looks]
    # an empty set (an event of probability <= alpha) is shown as a cell around the mean, never zero-width
    lower = np.where(any_in, np.maximum(ms[first] - half, 0.0), np.maximum(at - half, 0.0))
    upper = np.where(any_in, np.minimum(ms[last] + half, 1.0), np.minimum(at + half, 1.0))
    scale = hi - lo
    return {"lower": lo + scale * lower, "upper": lo + scale * upper, "estimate": lo + scale * est, "looks": looks}


def crossing_index(log_capital: np.ndarray, alpha: float) -> np.ndarray:
    """0-based index of the first observation at which the wealth reached 1/alpha, along the
    last axis; -1 where it never did (the null is never rejected)."""
    hit = log_capital >= math.log(1 / alpha)
    return np.where(hit.any(axis=-1), np.argmax(hit, axis=-1), -1)


def sequential_test(x, m0: float = 0.5, alpha: float = 0.05, bets: str = "mixture") -> np.ndarray:
    """First observation (0-based) after which the betting test rejects mean = m0, for each
    sequence along the last axis of ``x`` (outcomes in [0, 1]); -1 where it never does.
    Rejecting at the first crossing is the same as the confidence sequence first excluding m0."""
    return crossing_index(log_capital(x, m0, alpha, bets), alpha)


def normal_mixture_rho(v_opt: float, alpha: float = 0.05) -> float:
    """Mixture precision rho that makes the two-sided normal-mixture boundary tightest at
    intrinsic time ``v_opt`` (Howard et al. 2021, Sec. 3.5: tune rho to the sample size
    where the interval matters most), found numerically."""
    _check_alpha(alpha)

    def bound(log_rho):
        rho = math.exp(log_rho)
        return (v_opt + rho) * math.log((v_opt + rho) / (rho * alpha ** 2))

    res = optimize.minimize_scalar(bound, bounds=(math.log(v_opt) - 12, math.log(v_opt) + 12), method="bounded")
    return float(math.exp(res.x))


def normal_mixture_halfwidth(t, alpha: float = 0.05, sigma: float = 0.5, rho: float | None = None,
                             v_opt: float = 100.0) -> np.ndarray:
    """Half-width of the two-sided normal-mixture CS for a mean after ``t`` observations
    with sub-Gaussian scale ``sigma`` (0.5 for outcomes in [0, 1]); rho defaults to the value
    tightest at v_opt = ``v_opt`` sigma^2 observations' worth of variance."""
    _check_alpha(alpha)
    t = np.asarray(t, dtype=float)
    v = sigma ** 2 * t
    if rho is None:
        rho = normal_mixture_rho(sigma ** 2 * v_opt, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((v + rho) * np.log((v + rho) / (rho * alpha ** 2))) / t


def normal_mixture_log_martingale(s, v, rho: float) -> np.ndarray:
    """log of the normal-mixture martingale sqrt(rho/(v+rho)) exp(s^2 / (2 (v+rho))):
    the boundary is where it equals log(1/alpha)."""
    s, v = np.asarray(s, dtype=float), np.asarray(v, dtype=float)
    return 0.5 * np.log(rho / (v + rho)) + s ** 2 / (2 * (v + rho))


def beta_mixture_log_factor(k, n, p0: float = 0.5, a: float = 1.0, b: float = 1.0) -> np.ndarray:
    """log Bayes factor of a Beta(a, b) mixture of Bernoulli rates against rate p0 after
    ``k`` successes in ``n`` trials: log B(a + k, b + n - k) - log B(a, b) - k log p0 -
    (n - k) log(1 - p0). A nonnegative martingale under p0, so reaching log(1/alpha) at any
    time has probability <= alpha."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    return (special.betaln(a + k, b + n - k) - special.betaln(a, b)
            - k * math.log(p0) - (n - k) * math.log1p(-p0))


# ----------------------------------------------------------------------------- tidy tables

def cluster_stream(df: pd.DataFrame, value: str, cluster: str, order: str | None = None) -> pd.DataFrame:
    """One row per cluster, in the order the clusters completed: its mean ``value`` and size.

    ``order`` (e.g. ``timestamp``) decides when a cluster completed (its last row); without
    it the table's row order is used. Columns: cluster, mean, judgments, judgments_so_far
    (the judgments collected when this cluster's mean became available).
    """
    if df.empty:
        return pd.DataFrame({"cluster": [], "mean": [], "judgments": [], "judgments_so_far": []})
    # numpy, not a pandas group-by: status and top k build hundreds of these per look
    codes, names = pd.factorize(df[cluster].to_numpy(), sort=False)  # clusters in order of first row
    values = df[value].to_numpy(dtype=float)
    at = df[order].to_numpy(dtype=float) if order and order in df else np.arange(len(df), dtype=float)
    at = np.where(np.isnan(at), -np.inf, at)
    keep = codes >= 0  # a row without a cluster belongs to none (as a group-by drops it)
    c, v = codes[keep], values[keep]
    size = np.bincount(c, minlength=len(names))
    seen = ~np.isnan(v)  # the mean skips a missing value; the size counts its row
    with np.errstate(invalid="ignore", divide="ignore"):  # a cluster of missing values only: NaN, as pandas
        mean = np.bincount(c[seen], weights=v[seen], minlength=len(names)) / np.bincount(c[seen], minlength=len(names))
    done = np.full(len(names), -np.inf)
    np.maximum.at(done, c, at[keep])
    first = np.argsort(done, kind="stable")  # in the order the clusters completed (their last row)
    # judgments collected when each cluster completed: every row stamped at or before that time
    so_far = np.searchsorted(np.sort(at), done[first], side="right")
    return pd.DataFrame({"cluster": names[first], "mean": mean[first], "judgments": size[first],
                         "judgments_so_far": so_far})


def judgments_needed(estimate: float, halfwidth: float, clusters: int, mean_cluster_size: float,
                     m0: float = 0.5, alpha: float = 0.05, budget: int = 1_000_000) -> int | None:
    """Projected judgments still to collect before the interval around ``estimate`` would
    exclude m0, if the estimate held: the current ``halfwidth`` (estimate to the bound on m0's
    side, of the CS actually used) shrunk
    at the known rate of a confidence sequence, sqrt(log n / n) (the shape of the normal-mixture
    boundary, :func:`normal_mixture_halfwidth`), until it is below |estimate - m0|; clusters
    are turned into judgments by the mean cluster size. None when the estimate sits at m0 or
    the projection passes ``budget`` judgments (no decision in sight)."""
    gap = abs(estimate - m0)
    if gap <= 0 or not math.isfinite(gap) or clusters < 1:
        return None
    rho = normal_mixture_rho(max(clusters, 10), alpha)
    limit = max(int(budget / max(mean_cluster_size, 1.0)), clusters + 1)
    ns = np.unique(np.geomspace(clusters, limit, 400).astype(int))
    shape = normal_mixture_halfwidth(ns, alpha, 1.0, rho) / normal_mixture_halfwidth(clusters, alpha, 1.0, rho)
    ok = halfwidth * shape < gap
    if not ok.any():
        return None
    more = max(int(ns[np.argmax(ok)]) - clusters, 1)
    return int(math.ceil(more * mean_cluster_size))


def bets_for(sizes) -> str:
    """The bettor for a design: "mixture" when every cluster is one judgment (0/1 outcomes,
    where it is the beta-binomial mixture and decides soonest), "plugin" when clusters hold
    several judgments (their means vary less than 0/1 outcomes, and the plug-in bets adapt
    to the variance: a median 770 vs 890 judgments at a 0.6 win rate in dialogues of 10).
    Chosen from the cluster sizes, which the design fixes, never from the outcomes."""
    return "mixture" if int(np.max(sizes, initial=1)) <= 1 else "plugin"


def first_crossing(x: np.ndarray, sizes: np.ndarray, alpha: float, m0: float = 0.5,
                   bets: str | None = None) -> tuple[int, str, str]:
    """The cluster (0-based) at which the test of mean = m0 first rejected (-1 if never), the
    decision then ("above" / "below" / "undecided") and the bettor used (:func:`bets_for` the
    cluster sizes unless given): :func:`decide`'s decision without the interval, for callers
    that need many comparisons' decisions fast."""
    bets = bets or bets_for(sizes)
    crossed = int(crossing_index(log_capital(x, m0, alpha, bets), alpha))
    if crossed < 0:
        return crossed, "undecided", bets
    return crossed, "above" if x[: crossed + 1].mean() > m0 else "below", bets


def decide(stream: pd.DataFrame, alpha: float = 0.05, m0: float = 0.5, grid: int = GRID,
           budget: int = 1_000_000, bets: str | None = None) -> dict:
    """Anytime-valid summary of one comparison from its :func:`cluster_stream` (means in [0, 1]).

    ``decided`` is ``"above"`` / ``"below"`` once the betting CS excluded m0 (it stays
    decided: the running intersection never widens), else ``"undecided"``; ``more`` projects
    the judgments still needed (None: no decision in sight within ``budget``); ``bets``
    defaults to :func:`bets_for` the cluster sizes.
    """
    x = stream["mean"].to_numpy(dtype=float)
    n = x.size
    out = {"clusters": int(n), "judgments": int(stream["judgments"].sum()) if n else 0, "alpha": alpha, "m0": m0}
    if n == 0:
        return {**out, "estimate": None, "lower": None, "upper": None, "decided": "undecided", "more": None,
                "decided_at_judgments": None, "note": "no completed clusters yet"}
    crossed, decided, bets = first_crossing(x, stream["judgments"].to_numpy(), alpha, m0, bets)
    cs = confidence_sequence(x, alpha, bets=bets, grid=grid, must_look=(int(crossed),) if crossed >= 0 else ())
    lower, upper = float(cs["lower"][-1]), float(cs["upper"][-1])
    estimate = float(x.mean())
    at, more = None, None
    if crossed >= 0:
        at = int(stream["judgments_so_far"].iloc[int(crossed)])
    else:
        near = estimate - lower if estimate > m0 else upper - estimate  # the bound on m0's side
        more = judgments_needed(estimate, near, n, out["judgments"] / n, m0, alpha, budget)
    return {**out, "estimate": estimate, "lower": lower, "upper": upper, "decided": decided, "more": more,
            "decided_at_judgments": at, "bets": bets, "note": ""}


# ----------------------------------------------------------------- two sampled facets

#: the cluster count at which the two-facet boundary is tightest: its multiplier is within 10 %
#: of that minimum (3.04 at alpha 0.05) from 10 to 200 clusters, the sizes live runs stop at
CROSSED_TIGHTEST = 50


def crossed_multiplier(clusters, df, alpha: float, tightest: int = CROSSED_TIGHTEST) -> np.ndarray:
    """How many standard errors the two-facet confidence sequence reaches either side of the
    estimate after ``clusters`` clusters: the two-sided normal-mixture boundary of
    :func:`normal_mixture_halfwidth` on the standardised clock (unit variance per cluster, rho
    tightest at ``tightest`` clusters) -- the Gaussian-mixture asymptotic confidence sequence of
    Waudby-Smith, Arnold, Wu, Wang and Ramdas (Ann. Statist. 2024, Thm. 2.2) with the standard
    error written out -- its tail then read off a t on ``df`` degrees of freedom (as the fixed
    two-way test reads its statistic), so a look with few conversations or workers is no bolder
    than the fixed test at the same tail. Infinite where df < 1 (no interval)."""
    _check_alpha(alpha)
    n = np.maximum(np.asarray(clusters, dtype=float), 1.0)
    rho = normal_mixture_rho(tightest, alpha)
    z = normal_mixture_halfwidth(n, alpha, 1.0, rho) * np.sqrt(n)
    df = np.asarray(df, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(df >= 1, stats.t.isf(stats.norm.sf(z), np.maximum(df, 1.0)), np.inf)


def crossed_looks(clusters: int, need: int, most: int = 16) -> np.ndarray:
    """Cluster counts at which :func:`status <parlai_acute.monitoring.status.status>` forms the
    two-facet sequence's running intersection: every count from ``need`` for short runs, else
    ``most`` geometrically spaced ones and the last (any schedule of looks is valid, as for the
    betting sequence; fewer looks keep a 100,000-judgment status under its 2 s)."""
    start = max(int(need), 1)
    if clusters < start:
        return np.array([], dtype=int)
    if clusters - start + 1 <= most:
        return np.arange(start, clusters + 1)
    return np.unique(np.concatenate([np.geomspace(start, clusters, most).astype(int), [clusters]]))


def crossed_sequence(values, rank, facets, looks, alpha: float = 0.05, need: int = 2, lo: float = 0.0,
                     hi: float = 1.0, study=None, studies: int = 1) -> dict:
    """The two-facet confidence sequence of a mean at each look, for ``studies`` studies at once.

    ``values``: one per observation (on [lo, hi]); ``rank``: the 0-based order in which the
    observation's cluster (the worker) completed; ``facets``: integer codes of the other sampled
    facets (ACUTE: model A's and model B's conversation); ``looks``: cluster counts (increasing):
    look l holds the observations whose cluster is among the first ``looks[l]``; ``study``: which
    study each observation belongs to (None: one). At each look the mean's variance is the
    multiway cluster-robust one over the worker and ``facets`` (CR3;
    :func:`parlai_acute.stats.inference.multiway_tests`, the analysis' own), and the interval is
    the mean +/- :func:`crossed_multiplier` standard errors, inside [lo, hi]; the variance is never
    below n independent judgments' at the mean shrunk to (sum + 1/2) / (n + 1), so a run whose
    judgments all agree is not given a variance of 0 (the plug-in's artefact at the ends). A look
    where some facet has fewer than ``need`` levels says nothing: [lo, hi].
    Arrays (studies, looks): estimate, se, df, lower, upper, informative, levels (facets + 1,
    studies, looks)."""
    from parlai_acute.stats.inference import multiway_tests

    values = np.asarray(values, dtype=float)
    rank = np.asarray(rank, dtype=np.int64)
    looks = np.asarray(looks, dtype=np.int64)
    study = np.zeros(len(values), dtype=np.int64) if study is None else np.asarray(study, dtype=np.int64)
    facets = [np.asarray(f, dtype=np.int64) for f in facets]
    n_looks = len(looks)
    shape = (studies, n_looks)
    if not n_looks or not len(values):
        empty = np.full(shape, np.nan)
        return {"estimate": empty, "se": empty, "df": empty, "lower": np.full(shape, lo), "upper": np.full(shape, hi),
                "informative": np.zeros(shape, bool), "levels": np.zeros((len(facets) + 1,) + shape, int)}
    order = np.argsort(rank, kind="stable")
    ends = np.searchsorted(rank[order], looks, side="left")  # observations of the first looks[l] clusters
    rows = np.concatenate([order[:e] for e in ends])
    look = np.repeat(np.arange(n_looks), ends)
    column = study[rows] * n_looks + look
    res = multiway_tests(column, values[rows], [rank[rows]] + [f[rows] for f in facets], studies * n_looks)
    levels = res["levels"].reshape((len(facets) + 1,) + shape)
    estimate, se, df, n = (res[k].reshape(shape) for k in ("estimate", "se", "df", "n"))
    # never below the variance of n independent judgments at the mean shrunk off the ends: a two-way
    # variance of 0 (every judgment alike) is the plug-in's artefact at 0 or 1, not certainty
    shrunk = ((estimate - lo) / (hi - lo) * n + 0.5) / (n + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.fmax(se, (hi - lo) * np.sqrt(shrunk * (1 - shrunk) / n))
    informative = (levels.min(axis=0) >= need) & (df >= 1) & np.isfinite(se) & (se > 0)
    half = crossed_multiplier(np.broadcast_to(looks, shape), np.where(informative, df, 0), alpha) * se
    lower = np.where(informative, np.maximum(estimate - half, lo), lo)
    upper = np.where(informative, np.minimum(estimate + half, hi), hi)
    return {"estimate": estimate, "se": se, "df": df, "lower": lower, "upper": upper, "informative": informative,
            "levels": levels}


def split_sequence(rank, is_b, value, context, label_item, label_worker, vote, pivot, looks, alpha: float = 0.05,
                   need: int = 2, study=None, studies: int = 1, single: bool = False) -> dict:
    """The two-facet confidence sequence of B's mean item value minus A's (on [-1, 1]) where items
    are labelled by workers crossed with the items' contexts (static SSA: an item's value is its
    majority label), for ``studies`` studies at once: :func:`crossed_sequence` with the standard
    error of the SSA analysis' own split variance
    (:func:`parlai_acute.stats.inference.difference_split_tests`: CR2 on contexts, each majority's
    linear part in its labels over workers, the contexts that carry the variance as df).

    Items: ``rank`` (the 0-based order in which the item's cluster, its context, completed),
    ``is_b``, ``value`` (0/1), ``context`` (codes); labels: ``label_item``, ``label_worker``,
    ``vote`` (0/1) and ``pivot`` (:func:`parlai_acute.stats.inference.pivotal`); ``looks``: cluster
    counts. At each look the labels' linear parts are the analysis' (:func:`~parlai_acute.stats.
    inference.scaled_votes`, its model's share of pivotal labels among the look's labels). The same
    guard as :func:`crossed_sequence`: a model whose items are all alike (its split variance 0,
    the plug-in's artefact at the ends) adds its rate's binomial variance at the rate shrunk off the
    end, and a look with fewer than ``need`` levels of a facet (or no
    item of a model) says nothing: [-1, 1]. Arrays (studies, looks): estimate, se, df, lower,
    upper, informative, levels (2, studies, looks). ``single``: every item is one model's (``is_b``
    all true) and the sequence is of its mean on [0, 1] (status' per-model rates): the same split
    variance, B's half of it."""
    from parlai_acute.stats.inference import difference_split_tests, scaled_votes

    rank = np.asarray(rank, dtype=np.int64)
    is_b, value = np.asarray(is_b, dtype=bool), np.asarray(value, dtype=float)
    context = np.asarray(context, dtype=np.int64)
    label_item = np.asarray(label_item, dtype=np.int64)
    looks = np.asarray(looks, dtype=np.int64)
    study = np.zeros(len(rank), dtype=np.int64) if study is None else np.asarray(study, dtype=np.int64)
    n_looks, shape = len(looks), (studies, len(looks))
    if not n_looks or not len(rank):
        empty = np.full(shape, np.nan)
        return {"estimate": empty, "se": empty, "df": empty, "lower": np.full(shape, 0.0 if single else -1.0),
                "upper": np.full(shape, 1.0), "informative": np.zeros(shape, bool), "levels": np.zeros((2,) + shape, int)}
    order = np.argsort(rank, kind="stable")
    position = np.empty(len(rank), dtype=np.int64)
    position[order] = np.arange(len(rank))  # the item's place in completion order
    ends = np.searchsorted(rank[order], looks, side="left")  # items of the first looks[l] clusters
    starts = np.concatenate([[0], np.cumsum(ends)[:-1]])
    rows = np.concatenate([order[:e] for e in ends])
    look = np.repeat(np.arange(n_looks), ends)
    column = study[rows] * n_looks + look
    label_order = np.argsort(position[label_item], kind="stable")
    label_ends = np.searchsorted(position[label_item][label_order], ends, side="left")
    labels = np.concatenate([label_order[:e] for e in label_ends])
    label_look = np.repeat(np.arange(n_looks), label_ends)
    rep_item = starts[label_look] + position[label_item[labels]]  # the label's item among the replicated ones
    columns = studies * n_looks
    part = scaled_votes(2 * column[rep_item] + is_b[rows][rep_item], np.asarray(vote, float)[labels],
                        np.asarray(pivot, float)[labels])
    res = difference_split_tests(column, is_b[rows], value[rows], context[rows], rep_item,
                                 np.asarray(label_worker, dtype=np.int64)[labels], part, columns)
    estimate, se, df = (np.asarray(res[k], float).reshape(shape) for k in ("estimate", "se", "df"))
    n_a, n_b = res["n_a"].reshape(shape), res["n_b"].reshape(shape)
    levels = res["levels"].reshape((2,) + shape)
    # a model whose items are all alike adds nothing to the split variance: the plug-in's artefact at 0 or 1, not
    # certainty; its rate's binomial variance at the rate shrunk off the end is added (crossed_sequence's guard)
    sums_b = np.bincount(column[is_b[rows]], weights=value[rows][is_b[rows]], minlength=columns).reshape(shape)
    sums_a = np.bincount(column[~is_b[rows]], weights=value[rows][~is_b[rows]], minlength=columns).reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_a, p_b = (sums_a + 0.5) / (n_a + 1), (sums_b + 0.5) / (n_b + 1)
        alike_a = (n_a > 0) & ((sums_a == 0) | (sums_a == n_a))
        alike_b = (n_b > 0) & ((sums_b == 0) | (sums_b == n_b))
        floor = np.where(alike_a, p_a * (1 - p_a) / n_a, 0.0) + np.where(alike_b, p_b * (1 - p_b) / n_b, 0.0)
        se = np.sqrt(np.where(np.isfinite(se), se, 0.0) ** 2 + floor)
        se = np.where(np.isfinite(se) & (se > 0), se, np.nan)
    if single:  # B's mean alone: A has no items (its half of the variance is empty)
        with np.errstate(invalid="ignore", divide="ignore"):
            estimate = sums_b / n_b
        n_a = np.ones(shape)
    informative = ((levels.min(axis=0) >= need) & (df >= 1) & np.isfinite(se) & (se > 0) & (n_a > 0) & (n_b > 0))
    half = crossed_multiplier(np.broadcast_to(looks, shape), np.where(informative, df, 0), alpha) * se
    low_end = 0.0 if single else -1.0
    lower = np.where(informative, np.maximum(estimate - half, low_end), low_end)
    upper = np.where(informative, np.minimum(estimate + half, 1.0), 1.0)
    return {"estimate": estimate, "se": se, "df": df, "lower": lower, "upper": upper, "informative": informative,
            "levels": levels}


def crossed_decide(sequence: dict, m0: float) -> dict:
    """The running intersection of :func:`crossed_sequence` over its looks (last axis) and the
    decision: ``first`` (the look at which m0 was first excluded, -1 never), ``decided``
    ("above" / "below" / "undecided", per study), ``lower``/``upper`` now. An empty intersection
    (possible when the data moved more than the sequence allowed) is shown as the last look's
    interval, never as a point."""
    lower = np.maximum.accumulate(sequence["lower"], axis=-1)
    upper = np.minimum.accumulate(sequence["upper"], axis=-1)
    out_of = (lower > m0) | (upper < m0)
    first = np.where(out_of.any(axis=-1), np.argmax(out_of, axis=-1), -1)
    side = np.take_along_axis(lower, np.maximum(first, 0)[..., None], axis=-1)[..., 0] > m0
    decided = np.where(first < 0, "undecided", np.where(side, "above", "below"))
    low, high = lower[..., -1], upper[..., -1]
    empty = low >= high
    low = np.where(empty, sequence["lower"][..., -1], low)
    high = np.where(empty, sequence["upper"][..., -1], high)
    return {"first": first, "decided": decided, "lower": low, "upper": high}


# ----------------------------------------------------------------------------- simulation

def simulate_cluster_means(rng: np.random.Generator, runs: int, clusters: int, size, rate: float,
                           cluster_sd: float = 0.0, outcome: str = "binary") -> np.ndarray:
    """Seeded stream of per-cluster mean outcomes in [0, 1], shape (runs, clusters).

    Each cluster (a dialogue, a worker, a conversation) has its own log-odds shift
    N(0, cluster_sd^2) around logit(``rate``) and ``size`` judgments (an int, or an array of
    per-cluster sizes). ``outcome``: "binary" (a win: 1, a loss: 0) or "difference" (SATA
    pick difference pick_A - pick_B in {-1, 0, 1}, shifted to [0, 1] as (d + 1) / 2, each
    side picked independently with its own rate). Under rate 0.5 and symmetric effects the
    mean of every cluster is 1/2: the null of equal models.
    """
    sizes = np.broadcast_to(np.asarray(size, dtype=int), (clusters,))
    top = int(sizes.max())
    shift = rng.normal(0.0, cluster_sd, (runs, clusters, 1))
    p = special.expit(special.logit(rate) + shift)
    mask = np.arange(top)[None, None, :] < sizes[None, :, None]
    if outcome == "binary":
        y = rng.random((runs, clusters, top)) < p
    elif outcome == "difference":
        base = special.expit(rng.normal(0.0, cluster_sd, (runs, clusters, 1)))  # the cluster's taste for picking
        a = rng.random((runs, clusters, top)) < (base + p) / 2
        b = rng.random((runs, clusters, top)) < (base + 1 - p) / 2
        y = (a.astype(float) - b + 1) / 2
    else:
        raise UserError(f"outcome must be 'binary' or 'difference', got {outcome!r}")
    return (y * mask).sum(axis=-1) / sizes
