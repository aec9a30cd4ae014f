"""Power of the exact binomial test, and clustered plans: the primitives every protocol's sample size uses.

A protocol's headline comparison is a two-sided exact binomial test of a rate against ``p0``
(``scipy.stats.binomtest``; ACUTE-Eval: a win rate against 0.5; per-turn: the share of turns a
model wins). Its power is a saw-tooth in n (the rejection region moves in whole steps), so "the
n with power >= 0.8" is ambiguous: a larger n can have *less* power. :func:`required_n_exact`
reports the smallest n from which power stays at or above the target over the scanned range,
and the first n that reaches it. The statsmodels normal approximation (Cohen's arcsine effect
size h, one-sample ``NormalIndPower`` with ``ratio=0``) is given for comparison; it ignores
discreteness.

All functions take and return plain numbers and raise :class:`~parlai_acute.errors.UserError`
on parameters out of range. The tables a protocol prints are its own (``acute/power.py``,
``per_turn/power.py``).

Planning from a pilot. Observations of one cluster (a worker, a dialogue) are correlated, and
the marks come from a test over whole clusters: m observations per cluster with intra-cluster
correlation ICC carry the information of n / (1 + (m - 1) ICC) independent ones (Kish's design
effect). :func:`pilot_icc` estimates the ICC from a pilot's outcomes with the one-way ANOVA
estimator (unequal cluster sizes: Donner's n0), and a percentile interval resampling whole
clusters; plans are given at the estimate and at the interval's upper end, because a pilot of a
few clusters pins the ICC down poorly. Whatever the ICC, the cluster test needs at least
``min_clusters(alpha)`` clusters before it can give a mark at all; plans never go below it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize, stats

from parlai_acute.errors import UserError

__all__ = ["pvalues", "rejection_region", "exact_power", "power_curve", "required_n_normal", "required_n_exact",
           "detectable_delta_normal", "detectable_delta_exact", "simulate_power", "icc_anova", "pilot_icc",
           "clustered_plan", "pilot_components", "crossed_plan", "nested_components", "nested_plan", "split_plan"]

# scipy.stats.binomtest counts outcomes "as extreme" with this relative tolerance.
_RERR = 1 + 1e-7
# the general (p0 != 0.5) path is O(n) per n; beyond this the scan is refused.
_GENERAL_SCAN_LIMIT = 20_000
_FAST_SCAN_LIMIT = 5_000_000


def _check(p0: float, alpha: float, power: float | None = None, p1: float | None = None) -> None:
    if not 0 < p0 < 1:
        raise UserError(f"null rate p0={p0} must be strictly between 0 and 1; use 0.5 for no difference", param="p0")
    if not 0 < alpha < 1:
        raise UserError(f"alpha={alpha} must be strictly between 0 and 1; 0.05 is usual", param="alpha")
    if power is not None and not 0 < power < 1:
        raise UserError(f"power={power} must be strictly between 0 and 1; 0.8 is usual", param="power")
    if p1 is not None and (not 0 < p1 < 1 or p1 == p0):
        raise UserError(f"alternative rate p1={p1} must be in (0, 1) and differ from the null rate {p0}; give a "
                        f"non-zero delta with the null rate plus it inside (0, 1)", param="delta")


def pvalues(n: int, p0: float = 0.5) -> np.ndarray:
    """Two-sided exact binomial p-value of every outcome k = 0..n (as scipy's binomtest)."""
    k = np.arange(n + 1)
    pmf = stats.binom.pmf(k, n, p0)
    order = np.argsort(pmf, kind="stable")
    sorted_pmf = pmf[order]
    cum = np.cumsum(sorted_pmf)
    # p(k) = sum of pmf(j) over all j with pmf(j) <= pmf(k) * (1 + 1e-7)
    idx = np.searchsorted(sorted_pmf, pmf * _RERR, side="right") - 1
    return np.minimum(1.0, cum[idx])


def rejection_region(n: int, p0: float = 0.5, alpha: float = 0.05) -> np.ndarray:
    """Boolean mask over k = 0..n: outcomes where the two-sided exact test rejects p = p0."""
    _check(p0, alpha)
    return pvalues(n, p0) <= alpha


def exact_power(n: int, p1: float, p0: float = 0.5, alpha: float = 0.05) -> float:
    """Probability that the exact two-sided test rejects p0 when the true win rate is p1."""
    _check(p0, alpha, p1=p1)
    if n < 1:
        return 0.0
    k = np.arange(n + 1)
    return float(stats.binom.pmf(k, n, p1)[rejection_region(n, p0, alpha)].sum())


def power_curve(n_max: int, p1: float, p0: float = 0.5, alpha: float = 0.05) -> np.ndarray:
    """Exact power for n = 0..n_max (index = n)."""
    _check(p0, alpha, p1=p1)
    ns = np.arange(n_max + 1)
    if p0 != 0.5:
        if n_max > _GENERAL_SCAN_LIMIT:
            raise UserError(f"exact scan to n={n_max} with p0 != 0.5 is too slow; use p0=0.5 or a larger effect")
        return np.array([exact_power(int(n), p1, p0, alpha) for n in ns])
    # p0 = 0.5: the region is {k <= c} U {k >= n - c}, p(k) = 2 cdf(k) for k < n/2.
    # c(n) = largest k with 2 cdf(k) <= alpha (within binomtest's tolerance), -1 if none.
    c = stats.binom.ppf(alpha / 2, ns, 0.5)  # smallest k with cdf(k) >= alpha/2
    c = np.where(2 * stats.binom.cdf(c, ns, 0.5) <= alpha * _RERR, c, c - 1)
    c = np.minimum(c, (ns - 1) // 2)  # the lower tail must stay below the middle
    lower = np.where(c >= 0, stats.binom.cdf(c, ns, p1), 0.0)
    upper = np.where(c >= 0, stats.binom.sf(ns - c - 1, ns, p1), 0.0)
    return lower + upper


def required_n_normal(p1: float, p0: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> float:
    """statsmodels' normal-approximation n (not rounded): one-sample arcsine test."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    _check(p0, alpha, power, p1)
    h = proportion_effectsize(p1, p0)
    return float(NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=power, ratio=0,
                                              alternative="two-sided"))


def required_n_exact(p1: float, p0: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> dict:
    """Smallest n for the exact test, scanning to well past the normal-approximation answer.

    Returns ``n`` (smallest n with power >= target for every n up to ``scanned_to``),
    ``n_first`` (first n reaching the target; power may dip below it again after it),
    ``power_at_n`` and ``scanned_to`` (2 x the normal n + 100; by then the saw-tooth
    is far above any target < 1).
    """
    _check(p0, alpha, power, p1)
    n_normal = required_n_normal(p1, p0, alpha, power)
    scan = int(math.ceil(2 * n_normal)) + 100
    if scan > _FAST_SCAN_LIMIT:
        raise UserError(f"a difference of {abs(p1 - p0):g} needs about {n_normal:.0f} observations, beyond what "
                        "this tool scans; ask for a larger difference")
    curve = power_curve(scan, p1, p0, alpha)
    ok = curve >= power
    if not ok[-1]:
        raise UserError(f"exact power did not reach {power} by n={scan}; check p0, p1 and alpha")
    below = np.flatnonzero(~ok)
    n = int(below[-1]) + 1
    return {"n": n, "n_first": int(np.argmax(ok)), "power_at_n": float(curve[n]), "scanned_to": scan,
            "n_normal": n_normal}


def detectable_delta_normal(n: int, p0: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest p1 - p0 > 0 the normal approximation detects with ``n`` observations."""
    from statsmodels.stats.power import NormalIndPower

    _check(p0, alpha, power)
    h = float(NormalIndPower().solve_power(effect_size=None, nobs1=n, alpha=alpha, power=power, ratio=0,
                                           alternative="two-sided"))
    angle = 2 * math.asin(math.sqrt(p0)) + h  # invert Cohen's h = 2 asin sqrt(p1) - 2 asin sqrt(p0)
    return math.sin(min(angle, math.pi) / 2) ** 2 - p0


def detectable_delta_exact(n: int, p0: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest p1 - p0 > 0 with exact power >= target at exactly ``n`` observations.

    For a fixed rejection region the power grows with p1 above p0, so a root search is
    exact. Raises UserError if even p1 -> 1 is not enough (n too small for any rejection).
    """
    _check(p0, alpha, power)
    if n < 1:
        raise UserError(f"the budget n={n} must be at least 1 observation")
    region = rejection_region(n, p0, alpha)
    k = np.arange(n + 1)

    def gap(delta: float) -> float:
        return float(stats.binom.pmf(k, n, p0 + delta)[region].sum()) - power

    top = (1 - p0) * (1 - 1e-12)
    if gap(top) < 0:
        raise UserError(f"with n={n} observations the exact test at alpha={alpha} cannot reach power {power}; "
                        "collect more observations")
    return float(optimize.brentq(gap, 1e-12, top, xtol=1e-10))


def simulate_power(n: int, p1: float, p0: float = 0.5, alpha: float = 0.05, reps: int = 20_000,
                   seed: int = 0) -> float:
    """Monte Carlo power: draw win counts, test each with scipy.stats.binomtest."""
    _check(p0, alpha, p1=p1)
    wins = np.random.default_rng(seed).binomial(n, p1, size=reps)
    values, counts = np.unique(wins, return_counts=True)
    rejected = sum(c for v, c in zip(values, counts) if stats.binomtest(int(v), n, p0).pvalue <= alpha)
    return rejected / reps


# ---------------------------------------------------------------- planning from a pilot

def icc_anova(values, clusters) -> float:
    """One-way ANOVA estimate of the intra-cluster correlation of ``values`` (Donner's n0 for
    unequal cluster sizes), clipped at 0; NaN with fewer than two clusters or no variation."""
    y = np.asarray(values, dtype=float)
    codes, uniques = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)))
    k, n = len(uniques), len(y)
    if k < 2 or n <= k:
        return float("nan")
    sizes = np.bincount(codes, minlength=k).astype(float)
    means = np.bincount(codes, weights=y, minlength=k) / sizes
    grand = y.mean()
    between = float((sizes * (means - grand) ** 2).sum()) / (k - 1)
    within = float(((y - means[codes]) ** 2).sum()) / (n - k)
    n0 = (n - (sizes ** 2).sum() / n) / (k - 1)
    denominator = between + (n0 - 1) * within
    if denominator <= 0:
        return float("nan")
    return float(max(0.0, (between - within) / denominator))


def pilot_icc(values, clusters, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """ICC of a pilot's outcomes within clusters, with a cluster-bootstrap interval, the mean
    cluster size and the number of clusters (what a plan from this pilot rests on)."""
    from parlai_acute.stats.intervals import percentile_interval

    y = np.asarray(values, dtype=float)
    labels = np.asarray(clusters, dtype=object)
    codes, uniques = pd.factorize(pd.Series(labels))
    k = len(uniques)
    icc = icc_anova(y, codes)
    low = high = float("nan")
    if k >= 2 and np.isfinite(icc) and resamples > 0:
        rng = np.random.default_rng(seed)
        members = pd.Series(np.arange(len(y))).groupby(codes).apply(np.asarray).to_list()
        draws = np.empty(resamples)
        for b in range(resamples):
            chosen = rng.integers(0, k, k)
            rows = np.concatenate([members[c] for c in chosen])
            relabel = np.repeat(np.arange(k), [len(members[c]) for c in chosen])
            draws[b] = icc_anova(y[rows], relabel)
        low, high = percentile_interval(draws[:, None], confidence)
        low, high = float(low[0]), float(high[0])
        if not np.isfinite(high):  # every resample gave 0: the data show no clustering at all
            low, high = 0.0, float(np.nanmax(draws)) if np.isfinite(draws).any() else float("nan")
    return {"icc": icc, "icc_low": low, "icc_high": high, "clusters": int(k),
            "per_cluster": float(len(y) / k) if k else float("nan"), "judgments": int(len(y)),
            "estimator": "one-way ANOVA (Donner's n0), clipped at 0; interval: percentile bootstrap of clusters"}


def clustered_plan(n_independent: int, per_cluster: float, icc: float, alpha: float) -> dict:
    """Independent observations -> clustered ones: design effect 1 + (m - 1) ICC, the observations
    and clusters that gives, never fewer clusters than the cluster test needs to mark."""
    from parlai_acute.stats.inference import min_clusters

    if per_cluster < 1:
        raise UserError(f"observations per cluster must be at least 1, got {per_cluster}")
    if not 0 <= icc <= 1:
        raise UserError(f"the intra-cluster correlation must be between 0 and 1, got {icc}")
    effect = 1 + (per_cluster - 1) * icc
    judgments = math.ceil(n_independent * effect - 1e-9)
    clusters = max(math.ceil(judgments / per_cluster - 1e-9), min_clusters(alpha))
    return {"design_effect": effect, "judgments": max(judgments, math.ceil(clusters * per_cluster - 1e-9)),
            "clusters": clusters, "min_clusters": min_clusters(alpha)}


def pilot_components(values, worker, conversations) -> dict:
    """Variance components of a pilot's per-judgment outcomes (centred per comparison) whose
    judgments share workers and conversations (crossed facets): each facet's component is the
    mean product of two different judgments that share a level of it (a moment estimator: the
    covariance that facet induces), the residual what is left of the total variance.
    ``conversations``: one array of codes per conversation facet (ACUTE: A's and B's
    conversation; SSA: the context); their components are summed into ``conversation``. With two
    conversation facets, each one's covariance is read from the judgments that share *only* that
    conversation (two judgments of one reused pair share both, and their product holds both
    covariances); where no judgments share only one (a pool of fixed pairs), the pair is the unit
    and its covariance is the component. Taking the pair's covariance off the sum of the two
    instead (an earlier version) cancelled the conversations of recombined designs altogether:
    measured by the planned-power simulation, a plan with 20 conversations per model reached 15 %
    power, not 80 % (:mod:`parlai_acute.stats.planned_power`). Returns total, worker,
    conversation, residual (variances, each at least 0), workers and conversations (levels: the
    fewer of the conversation facets)."""
    d = np.asarray(values, dtype=float)
    if len(d) < 3:
        raise UserError(f"a pilot needs at least 3 judgments to estimate variance components, got {len(d)}")

    def products(codes) -> tuple[float, float, int]:
        """(sum of the products of two different judgments sharing a level, number of such pairs, levels)"""
        codes = pd.factorize(pd.Series(np.asarray(codes).astype(str)))[0]
        sums = np.bincount(codes, weights=d)
        squares = np.bincount(codes, weights=d * d)
        sizes = np.bincount(codes).astype(float)
        return float((sums ** 2 - squares).sum()), float((sizes * (sizes - 1)).sum()), len(sizes)

    def shared(codes) -> tuple[float, int]:
        total_products, pairs, levels = products(codes)
        return (total_products / pairs if pairs else 0.0), levels

    total = float(d.var())
    worker_part, workers = shared(worker)
    parts = [products(c) for c in conversations]
    if len(conversations) == 2:
        joint = pd.Series(np.asarray(conversations[0]).astype(str)) + "\x1f" + np.asarray(conversations[1]).astype(str)
        both, both_pairs, _ = products(joint.to_numpy())
        only = [(s - both) / (n - both_pairs) for s, n, _ in parts if n - both_pairs > 0]
        conv_part = sum(only) if only else (both / both_pairs if both_pairs else 0.0)
    else:
        conv_part = sum(s / n for s, n, _ in parts if n)
    conv_part = max(conv_part, 0.0)
    worker_part = max(worker_part, 0.0)
    return {"total": total, "worker": worker_part, "conversation": conv_part,
            "residual": max(total - worker_part - conv_part, 0.0), "workers": workers,
            "conversations": min(g for _, _, g in parts) if parts else 0, "judgments": len(d)}


def crossed_plan(delta: float, components: dict, per_worker: float, conversations: list[int], alpha: float = 0.05,
                 power: float = 0.8, facet: str = "conversations per model") -> dict:
    """Workers needed to detect a mean difference ``delta`` (on the outcome's scale, e.g. +1/-1
    judgments: twice the win-rate difference) for each number of conversations per model, when
    workers and conversations are both sampled: Var(mean) = s_w^2 / W + s_c^2 / C + s_e^2 / (W m)
    (m = ``per_worker`` judgments per worker), a test at ``alpha`` with ``power`` whose
    reference is the mark's own: a t on min(W, C) - 1 df (the normal plan first, then iterated at
    the df it gives: the normal plan alone reached 64-74 % where 80 % was planned at 16-60
    workers, :mod:`parlai_acute.stats.planned_power`). The conversations alone cap what any
    number of workers can reach: with C below ``conversations_min`` (s_c^2 / Var* at C - 1 df) no
    number of workers is enough. ``variance_target`` is the normal one; each row has its ``df``. Neither facet ever goes
    below what the test over it needs to mark (:func:`~parlai_acute.stats.inference.min_clusters`).
    ``facet``: what the second facet's levels are called in the reasons (SSA: "contexts"), so one
    plan serves every protocol whose judgments cross workers with a sampled stimulus."""
    from parlai_acute.stats.inference import min_clusters

    if delta == 0:
        raise UserError("a difference of 0 cannot be detected; give a non-zero delta", param="delta")
    if per_worker < 1:
        raise UserError(f"per_worker (judgments per worker) must be at least 1, got {per_worker}", param="per_worker")
    target = _variance_target(delta, alpha, power, None)
    floor = min_clusters(alpha)
    s_w, s_c, s_e = components["worker"], components["conversation"], components["residual"]
    need_c = floor
    while s_c > 0 and s_c / need_c >= _variance_target(delta, alpha, power, need_c - 1):
        need_c += 1  # with workers unlimited the t has C - 1 df: the fewest C whose own variance fits
    rows = []
    for c in conversations:
        if c < floor or s_c / c >= _variance_target(delta, alpha, power, c - 1):
            rows.append({"conversations": c, "workers": None, "judgments": None,
                         "why": (f"fewer than {floor} {facet}: no mark at all" if c < floor else
                                 f"the {facet.split()[0]} alone leave more variance than the difference allows: at "
                                 f"least {need_c} {facet} are needed")})
            continue

        def workers_for(df):
            left = _variance_target(delta, alpha, power, df) - s_c / c
            return max(math.ceil((s_w + s_e / per_worker) / left - 1e-9), floor) if left > 0 else None

        workers = _iterate_df(workers_for, lambda w: min(w, c) - 1)
        rows.append({"conversations": c, "workers": workers, "judgments": math.ceil(workers * per_worker - 1e-9),
                     "df": min(workers, c) - 1, "why": ""})
    return {"delta": delta, "variance_target": target, "conversations_min": need_c, "rows": rows}


def _variance_target(delta: float, alpha: float, power: float, df: float | None) -> float:
    """The largest variance of the estimate at which a two-sided test at ``alpha`` finds ``delta``
    with ``power``: (delta / (q_{1-alpha/2} + q_power))^2, q the t quantile on ``df`` degrees of
    freedom (the test's own reference), the normal one when ``df`` is None."""
    if df is None:
        q = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    else:
        df = max(df, 1)
        q = stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)
    return (abs(delta) / float(q)) ** 2


def _iterate_df(size_for, df_of, start: int | None = None) -> int:
    """The size the t-reference plan converges to: the normal plan first, then the plan at the df
    that size gives, until it stands still (the size only grows, as the t quantiles shrink with
    df; bounded)."""
    size = size_for(None) if start is None else start
    for _ in range(10_000):
        nxt = size_for(df_of(size))
        if nxt is None:  # at this size's df no number is enough: one more and ask again
            nxt = size + 1
        if nxt <= size:
            return size
        size = nxt
    return size


def nested_components(values, outer, inner) -> dict:
    """Variance components of a pilot's outcomes whose ``inner`` units (dialogues) are nested in
    ``outer`` ones (workers who did several dialogues): outer = the mean product of two outcomes of
    one worker in *different* dialogues, inner = that of two outcomes of one dialogue less the
    outer part, residual = what is left of the total. Returns total, outer, inner, residual (each
    at least 0), outers, inners."""
    d = np.asarray(values, dtype=float)
    if len(d) < 3:
        raise UserError(f"a pilot needs at least 3 outcomes to estimate variance components, got {len(d)}")

    def pair_sums(codes) -> tuple[float, float, int]:
        codes = pd.factorize(pd.Series(np.asarray(codes).astype(str)))[0]
        sums, squares = np.bincount(codes, weights=d), np.bincount(codes, weights=d * d)
        sizes = np.bincount(codes).astype(float)
        return float((sums ** 2 - squares).sum()), float((sizes * (sizes - 1)).sum()), len(sizes)

    o_sum, o_pairs, n_outer = pair_sums(outer)
    i_sum, i_pairs, n_inner = pair_sums(pd.Series(np.asarray(outer).astype(str)) + "\x1f"
                                        + np.asarray(inner).astype(str))
    cov_inner = i_sum / i_pairs if i_pairs else 0.0
    cov_outer = (o_sum - i_sum) / (o_pairs - i_pairs) if o_pairs > i_pairs else 0.0
    total = float(d.var())
    outer_part = max(cov_outer, 0.0)
    inner_part = max(cov_inner - outer_part, 0.0)
    return {"total": total, "outer": outer_part, "inner": inner_part,
            "residual": max(total - outer_part - inner_part, 0.0), "outers": n_outer, "inners": n_inner}


def nested_plan(delta: float, components: dict, inner_per_outer: list[int], per_inner: float, alpha: float = 0.05,
                power: float = 0.8, two_sample: bool = False) -> dict:
    """Workers (outer units) needed to detect a mean difference ``delta`` when each does
    q = ``inner_per_outer`` dialogues of ``per_inner`` outcomes: Var(mean) = s_o / W + s_i / (W q)
    + s_e / (W q m), a test whose reference is a t on W - 1 df (the sign-flip test over workers,
    iterated as :func:`crossed_plan`); never fewer than the test over workers needs to mark.
    ``two_sample``: each worker's dialogues show one model (per-turn SM: the permutation test of
    whole workers between two models' runs): W workers *per model*, Var(difference) twice one
    model's, a t on 2W - 2 df, and never fewer than half of what that test needs to mark."""
    from parlai_acute.stats.inference import min_clusters, min_clusters_two_sample

    if delta == 0:
        raise UserError("a difference of 0 cannot be detected; give a non-zero delta", param="delta")
    target = _variance_target(delta, alpha, power, None)
    groups = 2 if two_sample else 1
    floor = math.ceil(min_clusters_two_sample(alpha) / 2) if two_sample else min_clusters(alpha)
    rows = []
    for q in inner_per_outer:
        per_worker = groups * (components["outer"] + components["inner"] / q + components["residual"] / (q * per_inner))

        def workers_for(df):
            return max(math.ceil(per_worker / _variance_target(delta, alpha, power, df) - 1e-9), floor)

        workers = _iterate_df(workers_for, lambda w: groups * (w - 1))
        rows.append({"dialogues_per_worker": q, "workers": workers, "dialogues": workers * q,
                     "df": groups * (workers - 1)})
    return {"delta": delta, "variance_target": target, "two_sample": two_sample, "rows": rows}


def split_plan(delta: float, context_var: float, worker_cov: float, labels_per_reply: float, contexts: list[int],
               alpha: float = 0.05, power: float = 0.8) -> dict:
    """Workers a static design needs to detect a difference ``delta`` of two models' yes-majority
    rates, at each number of contexts C, with k = ``labels_per_reply`` labels per reply (the pilot's:
    the majority of k labels is the measure, so k is held): the variance of the analysis'
    influence split (:func:`parlai_acute.stats.inference.split_facet_tests`) scaled from a pilot,
    Var = s_C / C + tau (4 k^2 / W - 2 k / C), where s_C (``context_var``) is one context's
    variance of the majority difference and tau (``worker_cov``) the covariance of one worker's
    labels' linear parts in two different contexts (W workers share the 2 C k labels evenly:
    W n (n - 1) such pairs, n = 2 C k / W, each weighted 1 / C^2). A t on min(W, C) - 1 df,
    iterated; W at least k (distinct labellers per reply) and the floor the test needs, at most
    2 C k (one label each). Rows: contexts, workers, labels, labels_per_worker, df, why."""
    from parlai_acute.stats.inference import min_clusters

    if delta == 0:
        raise UserError("a difference of 0 cannot be detected; give a non-zero delta", param="delta")
    k, tau, s_c = float(labels_per_reply), max(float(worker_cov), 0.0), max(float(context_var), 0.0)
    floor = min_clusters(alpha)
    low = max(floor, math.ceil(k - 1e-9))

    def context_part(c):
        return (s_c - 2 * k * tau) / c

    need_c = floor
    while context_part(need_c) + 4 * k * k * tau / (2 * need_c * k) >= _variance_target(delta, alpha, power, need_c - 1):
        need_c += 1  # the most workers (one label each) leave the least: the fewest contexts that can do
        if need_c > 10 ** 6:
            break
    rows = []
    for c in contexts:
        most = math.floor(2 * c * k + 1e-9)
        if c < floor or c < need_c:
            rows.append({"contexts": c, "workers": None, "labels": None, "labels_per_worker": None, "df": None,
                         "why": (f"fewer than {floor} contexts: no mark at all" if c < floor else
                                 f"the contexts alone leave more variance than the difference allows: at least "
                                 f"{need_c} contexts are needed")})
            continue

        def workers_for(df, c=c):
            left = _variance_target(delta, alpha, power, df) - context_part(c)
            if left <= 0:
                return None
            return max(math.ceil(4 * k * k * tau / left - 1e-9), low)

        workers = min(_iterate_df(workers_for, lambda w, c=c: min(w, c) - 1, start=workers_for(None) or low), most)
        labels = math.ceil(2 * c * k - 1e-9)
        rows.append({"contexts": c, "workers": workers, "labels": labels, "labels_per_worker": labels / workers,
                     "df": min(workers, c) - 1, "why": ""})
    return {"delta": delta, "labels_per_reply": k, "contexts_min": need_c, "rows": rows}
