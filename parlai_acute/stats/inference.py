"""Cluster-aware tests behind every headline mark: the unit that was sampled is resampled.

Judgments are not independent: the turns of one dialogue share a worker and a
conversation, the SSA items of one chat share a conversation, the ACUTE judgments of one
worker share that worker's taste. A test that treats them as independent fires far more
often than its nominal level when two models are equal (17 % for per-turn PM-SOBA at a
nominal 5 %, 32 % for ACUTE with 20 workers). Every mark of this package therefore comes
from a test over *clusters* (dialogues, conversations, workers):

* **paired** comparisons (both models judged inside each cluster: per-turn PM and MM,
  ACUTE per worker, static SSA per context): a **sign-flip test** of the cluster totals of
  the per-judgment differences (+1 A won, -1 B won, 0 tie). Under "no difference" the two
  models are exchangeable inside a cluster, so each cluster's total is as likely to be
  negated, whatever the dependence inside the cluster. All 2^G sign patterns are
  enumerated when 2^G <= ``n_resamples``, otherwise ``n_resamples`` seeded random patterns.
* **two-sample** comparisons (each cluster saw one model: interactive SSA, per-turn SM):
  a **permutation test** of the model labels of whole clusters, the difference of the
  pooled means as statistic; exact enumeration or seeded Monte Carlo as above.
* **omnibus** (per-turn MM: are the k models equal?): the per-dialogue pick counts are
  permuted across the k models independently in each dialogue, statistic = spread of the
  models' totals (Cochran's Q / Pearson's chi-squared up to constants that the
  permutation keeps).

All three report the **mid-p-value**: arrangements more extreme than the data count
fully, arrangements exactly as extreme count half. Judgments are 0/1, so with 8 dialogues
the statistic ties often and the plain randomisation p-value fires 2-4 % at a nominal 5 %
(as conservative as Fisher's exact test); the mid-p-value measured 3.3-5.5 % from 6 to
60 clusters for every protocol (docs/inference.md), never above 5.5 %.

Why these. Measured on seeded A/A simulations with dialogue random effects (sd 1 and 2
on the logit scale) at 8, 20 and 60 dialogues (docs/inference.md): the percentile cluster
bootstrap fires 10-13 % at 8 dialogues and 7-8 % at 20; the CR2 sandwich with a t on G-1
degrees of freedom fires 6.6-7.1 % at 8 dialogues for PM-SOBA and would need a model fit
per comparison for anything beyond a mean; GEE with robust errors is a sandwich too, with
the same small-sample problem. The randomisation tests hold their level at every size,
cost one matrix product, and say plainly when the data cannot reach ``alpha``: with G
clusters the smallest sign-flip mid-p-value is 1 / 2^G, so fewer than
:func:`min_clusters` ``(alpha)`` clusters (5 at 0.05, 7 at 0.01) can never give a mark,
and the result says how many are needed.

Intervals are the **inverted test**: every shift ``delta`` of the effect that the same
test (same sign patterns or permutations, same seed) does not reject at
``1 - confidence``, so the interval excludes 0 exactly when the mark fires at
``alpha = 1 - confidence``. It is never a point: when every cluster has the same mean
(all differences +1, say) the inverted set collapses and ``None`` is returned with the
reason in words; with too few clusters for the confidence asked, likewise.

**Many clusters.** From :data:`NORMAL_FROM` clusters on, each randomisation distribution is
replaced by its normal limit, which is what makes 10,000 dialogues or 20,000 workers
affordable (a Monte Carlo test over them costs patterns x clusters for every comparison
and every step of the interval's bisection): the sign-flip test becomes the cluster-robust
score test (variance = sum of squared cluster totals) with a t on G - 1 df, inverted in
closed form; the two-sample permutation test the cluster-robust difference of the groups'
ratio means with a t on G - 2 df; the omnibus permutation test the cluster-robust Wald
test of the models' totals against their within-cluster expectation, chi-squared on k - 1
df. With that many clusters the randomisation tests and their limits agree (tested).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

__all__ = ["ClusterTest", "paired_cluster_test", "paired_cluster_tests", "paired_test_from_totals",
           "two_sample_cluster_test",
           "omnibus_cluster_test", "normal_sign_flip", "NORMAL_FROM", "sign_flip_pvalues", "permutation_pvalues", "omnibus_pvalues", "min_clusters", "min_clusters_two_sample", "mark", "legend",
           "shortfall"]

_BISECT_STEPS = 60
#: Clusters from which every test is taken in its normal (t / chi-squared) limit.
NORMAL_FROM = 200
_CHUNK_CELLS = 4_000_000  # patterns x clusters per block: bounds memory for any number of clusters


@dataclass(frozen=True)
class ClusterTest:
    """One headline verdict: effect, cluster-aware p-value and interval, what was assumed."""

    estimate: float  # effect in the caller's units (e.g. win-rate difference)
    p_value: float | None  # None when no calibrated test exists at this size (reason says why)
    low: float | None  # interval at `confidence`; None (with reason) when none can be true
    high: float | None
    method: str  # words, e.g. "sign-flip test over dialogues (exact, 256 sign patterns)"
    unit: str  # "dialogue" | "worker" | "conversation" | ...
    n_clusters: int
    n_judgments: int
    reason: str | None  # why p/interval are absent
    clusters_needed: int | None  # how many clusters a calibrated mark needs, when too few
    confidence: float = 0.95
    interval_method: str = ""

    def as_dict(self, prefix: str = "") -> dict:
        """Flat record for a tidy table (keys optionally prefixed)."""
        return {f"{prefix}{k}": v for k, v in asdict(self).items()}


def _plural(unit: str, n: int) -> str:
    return unit if n == 1 else unit + "s"


def min_clusters(alpha: float) -> int:
    """Fewest clusters for which the (two-sided) sign-flip test can reach p < ``alpha``:
    its smallest (mid-)p-value is 1 / 2^G (the observed signs and their negation)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    g = 1
    while 1.0 / 2 ** g >= alpha:
        g += 1
    return g


def min_clusters_two_sample(alpha: float) -> int:
    """Fewest clusters (split evenly between the two models) for which the two-sample
    permutation test can reach p < ``alpha``: its smallest (mid-)p-value is 1 / C(G, G/2)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    g = 2
    while 1.0 / math.comb(g, g // 2) >= alpha:
        g += 1
    return g


def shortfall(test: ClusterTest) -> str:
    """'' or the sentence a reader needs: how many more clusters a calibrated mark needs."""
    if test.clusters_needed is None or test.n_clusters >= test.clusters_needed:
        return ""
    more = test.clusters_needed - test.n_clusters
    return (f"only {test.n_clusters} {_plural(test.unit, test.n_clusters)}: a calibrated test needs at least "
            f"{test.clusters_needed} ({more} more)")


def mark(test_or_p, alpha: float) -> str:
    """'**' for p < alpha / 5, '*' for p < alpha, '' otherwise or when no calibrated test
    exists (a :class:`ClusterTest` without p-value, None or NaN)."""
    p = test_or_p.p_value if isinstance(test_or_p, ClusterTest) else test_or_p
    if p is None or not np.isfinite(p):
        return ""
    return "**" if p < alpha / 5 else "*" if p < alpha else ""


def legend(alpha: float) -> str:
    """The one legend of the marks, printed by every command and shown in every report."""
    return (f"* p < {alpha:g}, ** p < {alpha / 5:g}: cluster-aware randomisation test (whole dialogues, "
            f"conversations or workers), Holm-adjusted within each family of comparisons; no mark: not "
            f"significant, or too few clusters for a calibrated test (the row says how many more are needed). "
            f"Exact tests named '... independent' are secondary columns and ignore the clustering.")


# ---------------------------------------------------------------- machinery


def _codes(clusters) -> tuple[np.ndarray, int]:
    values = np.asarray(clusters)
    codes, uniques = pd.factorize(values if values.dtype.kind in "iub" else pd.Series(values.astype(object)))
    if (codes < 0).any():
        raise ValueError("cluster labels must not be missing")
    return codes, len(uniques)


def _midp(stat: np.ndarray, observed, tol: float, total: int, exact: bool, axis: int = 0) -> np.ndarray:
    """Mid-p-value: arrangements more extreme than the observed statistic count fully, ties
    half. Exact enumeration includes the observed arrangement; Monte Carlo adds it (as a
    tie) to the B random ones, so p is never zero."""
    greater = (stat > observed + tol).sum(axis=axis)
    ties = (np.abs(stat - observed) <= tol).sum(axis=axis)
    if exact:
        return (greater + 0.5 * ties) / total
    return (greater + 0.5 * ties + 0.5) / (total + 1.0)


def _tol(*scales) -> float:
    return 1e-9 * (1.0 + sum(float(np.abs(s).sum()) for s in scales))


def _invert(pvalue_at, estimate: float, spread: float, confidence: float):
    """The interval {delta: p(delta) >= 1 - confidence} around ``estimate``: on each side an
    outer value the test rejects is found by doubling the distance (up to 2^10 spreads),
    then the boundary by bisection. None when some side has no rejected value (the data
    set no bound)."""
    level = 1.0 - confidence
    bounds = []
    for direction in (-1.0, 1.0):
        outer = None
        for factor in 2.0 ** np.arange(-1, 11):
            if pvalue_at(estimate + direction * factor * spread) < level:
                outer = estimate + direction * factor * spread
                break
        if outer is None:
            return None
        inside = estimate
        for _ in range(_BISECT_STEPS):
            middle = (inside + outer) / 2
            if pvalue_at(middle) >= level:
                inside = middle
            else:
                outer = middle
            if abs(outer - inside) <= 1e-10 * spread:
                break
        bounds.append(inside)
    return bounds[0], bounds[1]


def _inverted_interval(pvalue_at, estimate: float, spread: float, confidence: float, unit: str):
    """(low, high, None) from :func:`_invert`, or (None, None, reason) when the data set no bound."""
    bounds = _invert(pvalue_at, estimate, spread, confidence)
    if bounds is None or not bounds[1] > bounds[0]:
        return None, None, f"the {unit}s set no {100 * confidence:g}% bound"
    return float(bounds[0]), float(bounds[1]), None


def _sign_projections(sums: np.ndarray, counts: np.ndarray, n_resamples: int, seed: int):
    """(A (B, m), C (B,), exact, B): every (or ``n_resamples`` random) sign pattern e applied
    to the cluster totals: A = e @ sums, C = e @ counts. The statistic at any shift delta is
    then A - delta * C, so inverting the test costs no further pass over the clusters."""
    g = len(counts)
    if g <= 30 and 2 ** g <= n_resamples:
        signs = 1.0 - 2.0 * ((np.arange(2 ** g)[:, None] >> np.arange(g)[None, :]) & 1)
        return signs @ sums, signs @ counts, True, 2 ** g
    rng = np.random.default_rng(seed)
    a, c = np.empty((n_resamples, sums.shape[1])), np.empty(n_resamples)
    step = max(1, _CHUNK_CELLS // max(g, 1))
    for start in range(0, n_resamples, step):
        b = min(step, n_resamples - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(b, g), dtype=np.int8)
        a[start:start + b] = signs @ sums
        c[start:start + b] = signs @ counts
    return a, c, False, n_resamples


def sign_flip_pvalues(sums, *, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """Two-sided sign-flip p-values of H0 "mean difference 0" for m comparisons at once:
    ``sums`` is (clusters, m), each cluster's total of the per-judgment differences. The
    same patterns serve every column (the analyses' and the calibration tests' one path)."""
    sums = np.asarray(sums, dtype=float)
    if sums.ndim == 1:
        sums = sums[:, None]
    a, _, exact, total = _sign_projections(sums, np.zeros(len(sums)), n_resamples, seed)
    return _midp(np.abs(a), np.abs(sums.sum(axis=0)), _tol(sums), total, exact)


def permutation_pvalues(sums, counts, second, *, n_resamples: int = 10_000, seed: int = 0) -> np.ndarray:
    """Two-sided two-sample permutation p-values for m outcomes at once: ``sums`` (clusters,
    m) and ``counts`` (clusters,) per cluster, ``second`` (clusters,) True for the clusters
    of the second group; whole clusters change group."""
    sums = np.asarray(sums, dtype=float)
    if sums.ndim == 1:
        sums = sums[:, None]
    counts, z = np.asarray(counts, dtype=float), np.asarray(second, dtype=bool)
    assign, exact, total = _arrangements(len(counts), int(z.sum()), n_resamples, seed)
    n1, n0 = assign @ counts, (1 - assign) @ counts
    valid = (n1 > 0) & (n0 > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (assign @ sums) / n1[:, None] - ((1 - assign) @ sums) / n0[:, None]
    observed = sums[z].sum(axis=0) / counts[z].sum() - sums[~z].sum(axis=0) / counts[~z].sum()
    return _midp(np.abs(a[valid]), np.abs(observed), _tol(sums) / max(counts.sum(), 1),
                 int(valid.sum()) if exact else total, exact)


def _arrangements(g: int, g1: int, n_resamples: int, seed: int):
    """(assignments (R, g) of 0/1 with g1 ones, exact, R): every way to give g1 of g clusters to
    the second group, or ``n_resamples`` seeded random ones."""
    arrangements = math.comb(g, g1)
    if arrangements <= n_resamples:
        assign = np.zeros((arrangements, g))
        for row, chosen in enumerate(itertools.combinations(range(g), g1)):
            assign[row, list(chosen)] = 1.0
        return assign, True, arrangements
    rng = np.random.default_rng(seed)
    assign = np.zeros((n_resamples, g))
    np.put_along_axis(assign, rng.random((n_resamples, g)).argsort(axis=1)[:, :g1], 1.0, axis=1)
    return assign, False, n_resamples


def _sign_method(unit: str, g: int, exact: bool, total: int, seed: int) -> str:
    plural = _plural(unit, 2)
    if exact:
        return f"sign-flip test over {plural} (exact, {total} sign patterns, mid-p)"
    return f"sign-flip test over {plural} (Monte Carlo, {total} random sign patterns, seed {seed}, mid-p)"


def paired_cluster_tests(diffs, clusters, *, unit: str, alpha: float = 0.05, confidence: float = 0.95,
                         seed: int = 0, n_resamples: int = 10_000) -> list[ClusterTest]:
    """:func:`paired_cluster_test` for several columns of differences over the same judgments
    and clusters at once (``diffs`` of shape (judgments, m)); the sign patterns are drawn
    once and shared, so m comparisons cost about one. NaN differences are left out of
    their column (a judgment that does not compare the pair)."""
    diffs = np.asarray(diffs, dtype=float)
    if diffs.ndim == 1:
        diffs = diffs[:, None]
    codes, g = _codes(clusters)
    if len(codes) != len(diffs):
        raise ValueError(f"{len(diffs)} differences but {len(codes)} cluster labels")
    m = diffs.shape[1]
    present = np.isfinite(diffs)
    sums = np.zeros((g, m))
    counts = np.zeros((g, m))
    for j in range(m):
        sums[:, j] = np.bincount(codes, weights=np.where(present[:, j], diffs[:, j], 0.0), minlength=g)
        counts[:, j] = np.bincount(codes, weights=present[:, j].astype(float), minlength=g)
    return [_paired_from_sums(sums[:, j], counts[:, j], unit, alpha, confidence, seed, n_resamples)
            for j in range(m)]


def paired_cluster_test(diffs, clusters, *, unit: str, alpha: float = 0.05, confidence: float = 0.95,
                        seed: int = 0, n_resamples: int = 10_000) -> ClusterTest:
    """H0: the mean of the per-judgment differences (e.g. +1 A won, -1 B won, 0 tie) is 0,
    judgments clustered in ``clusters``; sign-flip test of the cluster totals and its
    inverted interval (see the module docstring)."""
    return paired_cluster_tests(diffs, clusters, unit=unit, alpha=alpha, confidence=confidence, seed=seed,
                                n_resamples=n_resamples)[0]


def paired_test_from_totals(sums, counts, *, unit: str, alpha: float = 0.05, confidence: float = 0.95,
                            seed: int = 0, n_resamples: int = 10_000) -> ClusterTest:
    """:func:`paired_cluster_test` from each cluster's total difference and number of
    judgments (e.g. per worker of one ACUTE matchup, from one ``np.bincount``): the fast
    path when many comparisons each have their own clusters."""
    return _paired_from_sums(np.asarray(sums, dtype=float), np.asarray(counts, dtype=float), unit, alpha,
                             confidence, seed, n_resamples)


def _paired_from_sums(sums, counts, unit, alpha, confidence, seed, n_resamples) -> ClusterTest:
    keep = counts > 0
    sums, counts = sums[keep], counts[keep]
    g, n = int(len(counts)), int(counts.sum())
    estimate = float(sums.sum() / n) if n else float("nan")
    need = max(min_clusters(alpha), min_clusters(1 - confidence))
    base = dict(estimate=estimate, unit=unit, n_clusters=g, n_judgments=n, confidence=confidence,
                interval_method="inverted sign-flip test")
    if n == 0:
        return ClusterTest(p_value=None, low=None, high=None, method="sign-flip test", reason="no judgments compare "
                           "this pair", clusters_needed=need, **base)
    if g >= NORMAL_FROM:
        return _paired_normal(sums, counts, alpha, confidence, need, base)
    a, c, exact, total = _sign_projections(sums[:, None], counts, n_resamples, seed)
    a = a[:, 0]
    tol = _tol(sums, counts)
    observed_sum, observed_count = float(sums.sum()), float(counts.sum())

    def pvalue_at(delta: float) -> float:
        stat = abs(observed_sum - delta * observed_count)
        return float(_midp(np.abs(a - delta * c), stat, tol, total, exact))

    method = _sign_method(unit, g, exact, total, seed)
    if g < min_clusters(alpha):
        return ClusterTest(p_value=None, low=None, high=None, method=method,
                           reason=f"only {g} {_plural(unit, g)}: the sign-flip test cannot reach p < {alpha:g} "
                                  f"with fewer than {min_clusters(alpha)}", clusters_needed=need, **base)
    p = pvalue_at(0.0)
    means = sums / counts
    reason, low, high = None, None, None
    if g < min_clusters(1 - confidence):
        reason = (f"only {g} {_plural(unit, g)}: no {100 * confidence:g}% interval can be given with fewer than "
                  f"{min_clusters(1 - confidence)}")
    elif np.ptp(means) <= 1e-12 * (1 + np.abs(means).max()):
        reason = (f"every {unit} has the same mean difference ({means[0]:+.3g}), so no interval of non-zero "
                  f"width follows from the {unit}s")
    else:
        low, high, reason = _inverted_interval(pvalue_at, estimate, float(np.ptp(means)), confidence, unit)
    return ClusterTest(p_value=p, low=low, high=high, method=method, reason=reason,
                       clusters_needed=need if g < need else None, **base)


def normal_sign_flip(column: np.ndarray, sums: np.ndarray, sizes: np.ndarray, columns: int,
                     confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sign-flip test in its normal limit for many comparisons at once: rows are
    (comparison ``column``, cluster total ``sums``, cluster size ``sizes``). Per column the
    two-sided p-value of |S| / sqrt(sum s^2) on a t with G - 1 df, and the interval of the
    mean difference that inverts it (the deltas with |S - delta C| <= t sqrt(sum (s - delta c)^2),
    a quadratic). NaN bounds where no interval of non-zero width exists."""
    from scipy import stats

    def total(v):
        return np.bincount(column, weights=v, minlength=columns)

    g = np.bincount(column, minlength=columns).astype(float)
    s_, c_ = total(sums), total(sizes)
    q_, p_, r_ = total(sums ** 2), total(sums * sizes), total(sizes ** 2)
    df_ = np.maximum(g - 1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.abs(s_) / np.sqrt(q_)
        pvalue = np.where(q_ > 0, 2 * stats.t.sf(z, df_), 1.0)
        t2 = stats.t.ppf(0.5 + confidence / 2, df_) ** 2
        a = c_ ** 2 - t2 * r_
        b = s_ * c_ - t2 * p_
        c = s_ ** 2 - t2 * q_
        disc = b ** 2 - a * c
        root = np.sqrt(np.maximum(disc, 0))
        low, high = (b - root) / a, (b + root) / a
    means_equal = (q_ * c_ ** 2 - s_ ** 2 * r_) <= 1e-9 * np.maximum(q_ * c_ ** 2, 1)  # Cauchy-Schwarz: equality
    bad = (a <= 0) | (disc <= 0) | means_equal | (g < 2)
    return pvalue, np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def _paired_normal(sums, counts, alpha, confidence, need, base) -> ClusterTest:
    g = len(counts)
    p, low, high = normal_sign_flip(np.zeros(g, dtype=int), sums, counts, 1, confidence)
    reason = None
    if not np.isfinite(low[0]):
        reason = f"every {base['unit']} has the same mean difference, so no interval of non-zero width follows"
    return ClusterTest(p_value=float(p[0]), low=None if reason else float(low[0]),
                       high=None if reason else float(high[0]), reason=reason, clusters_needed=None,
                       method=f"sign-flip test over {_plural(base['unit'], 2)} (normal limit, t on {g - 1} df)",
                       **base)


def _two_sample_normal(sums, counts, z, estimate, confidence, base) -> ClusterTest:
    """Cluster-robust difference of the two groups' ratio means, t on G - 2 df; the interval
    is symmetric because shifting one group's values leaves its residuals unchanged."""
    from scipy import stats

    g = len(counts)
    var = 0.0
    for side in (z, ~z):
        mean = sums[side].sum() / counts[side].sum()
        var += float(((sums[side] - mean * counts[side]) ** 2).sum()) / counts[side].sum() ** 2
    var *= g / (g - 2)  # the small-sample factor of the cluster-robust variance (CR1)
    unit = base["unit"]
    method = f"permutation test of the model of whole {_plural(unit, 2)} (normal limit, t on {g - 2} df)"
    if var <= 0:
        return ClusterTest(p_value=None, low=None, high=None, method=method, clusters_needed=None,
                           reason=f"every {unit} of each group has the same mean, so no test or interval follows",
                           **base)
    se = math.sqrt(var)
    half = float(stats.t.ppf(0.5 + confidence / 2, g - 2)) * se
    p = float(2 * stats.t.sf(abs(estimate) / se, g - 2))
    return ClusterTest(p_value=p, low=estimate - half, high=estimate + half, method=method, reason=None,
                       clusters_needed=None, **base)


def two_sample_cluster_test(values, groups, clusters, *, unit: str, alpha: float = 0.05, confidence: float = 0.95,
                            seed: int = 0, n_resamples: int = 10_000) -> ClusterTest:
    """H0: the two groups (e.g. models) have the same mean, where each cluster (e.g. an
    interactive conversation) belongs to one group; the estimate is mean(second group) -
    mean(first group), groups ordered as sorted labels. Permutation test of the group
    labels of whole clusters and its inverted interval (module docstring)."""
    values = np.asarray(values, dtype=float)
    codes, g = _codes(clusters)
    group_labels = pd.Series(np.asarray(groups, dtype=object))
    names = sorted(group_labels.unique())
    if len(names) != 2:
        raise ValueError(f"two_sample_cluster_test needs exactly two groups, got {len(names)}")
    if len(values) != len(codes) or len(group_labels) != len(codes):
        raise ValueError("values, groups and clusters must have the same length")
    second = (group_labels == names[1]).to_numpy()
    per_cluster = pd.DataFrame({"c": codes, "z": second}).groupby("c")["z"].agg(["min", "max"])
    if (per_cluster["min"] != per_cluster["max"]).any():
        raise ValueError(f"a {unit} holds judgments of both groups; use paired_cluster_test for paired designs")
    ok = np.isfinite(values)
    sums = np.bincount(codes, weights=np.where(ok, values, 0.0), minlength=g)
    counts = np.bincount(codes, weights=ok.astype(float), minlength=g)
    z = per_cluster["max"].to_numpy().astype(bool)
    keep = counts > 0
    sums, counts, z = sums[keep], counts[keep], z[keep]
    g1, g0 = int(z.sum()), int((~z).sum())
    g, n = g0 + g1, int(counts.sum())
    need_alpha, need_conf = min_clusters_two_sample(alpha), min_clusters_two_sample(1 - confidence)
    need = max(need_alpha, need_conf)
    estimate = (float(sums[z].sum() / counts[z].sum() - sums[~z].sum() / counts[~z].sum())
                if g0 and g1 else float("nan"))
    base = dict(estimate=estimate, unit=unit, n_clusters=g, n_judgments=n, confidence=confidence,
                interval_method="inverted permutation test")
    if g0 == 0 or g1 == 0:
        return ClusterTest(p_value=None, low=None, high=None, method="permutation test", clusters_needed=need,
                           reason=f"one of the groups has no {unit}s", **base)
    if g0 >= 2 and g1 >= 2 and g >= NORMAL_FROM:
        return _two_sample_normal(sums, counts, z, estimate, confidence, base)
    assign, exact, total = _arrangements(g, g1, n_resamples, seed)
    method = (f"permutation test of the model of whole {_plural(unit, 2)} (exact, {total} arrangements, mid-p)" if exact
              else f"permutation test of the model of whole {_plural(unit, 2)} (Monte Carlo, {total} random "
                   f"arrangements, seed {seed}, mid-p)")
    # statistic at shift delta (group 2 values minus delta): a - delta * b per arrangement
    n1, n0 = assign @ counts, (1 - assign) @ counts
    with np.errstate(invalid="ignore", divide="ignore"):
        a = assign @ sums / n1 - (1 - assign) @ sums / n0
        moved = counts * z
        b = assign @ moved / n1 - (1 - assign) @ moved / n0
    valid = (n1 > 0) & (n0 > 0)
    a, b = a[valid], b[valid]
    tol = _tol(sums, counts) / max(n, 1)

    def pvalue_at(delta: float) -> float:
        stat = abs(estimate - delta)
        return float(_midp(np.abs(a - delta * b), stat, tol, len(a) if exact else total, exact))

    # smallest p-value the data allow: the observed arrangement (and its mirror when balanced) alone
    smallest = (1.0 if g0 == g1 else 0.5) / len(a) if exact else 0.5 / (total + 1)
    if smallest >= alpha:
        return ClusterTest(p_value=None, low=None, high=None, method=method, clusters_needed=need,
                           reason=f"only {g} {_plural(unit, g)} ({g0} and {g1}): the permutation test cannot reach "
                                  f"p < {alpha:g} with fewer than {need_alpha} split evenly", **base)
    p = pvalue_at(0.0)
    means = sums / counts
    reason, low, high = None, None, None
    if smallest >= 1 - confidence:
        reason = (f"only {g} {_plural(unit, g)}: no {100 * confidence:g}% interval can be given with fewer than "
                  f"{need_conf} split evenly")
    elif np.ptp(means[z]) <= 1e-12 and np.ptp(means[~z]) <= 1e-12:
        reason = f"every {unit} of each group has the same mean, so no interval of non-zero width follows"
    else:
        low, high, reason = _inverted_interval(pvalue_at, estimate, float(np.ptp(means)), confidence, unit)
    return ClusterTest(p_value=p, low=low, high=high, method=method, reason=reason,
                       clusters_needed=need if smallest >= min(alpha, 1 - confidence) else None, **base)


def omnibus_cluster_test(counts, clusters, *, unit: str, alpha: float = 0.05, seed: int = 0,
                         n_resamples: int = 10_000) -> ClusterTest:
    """H0: the k models are exchangeable inside every cluster (all equal). ``counts`` is a
    (judgments, k) array (e.g. per-turn picks, one column per model); the statistic is the
    spread of the models' totals, sum_m (T_m - mean T)^2, and its null distribution comes
    from permuting the k columns independently in every cluster. ``estimate`` is the
    largest minus the smallest model share of the picks; there is no interval."""
    counts = np.asarray(counts, dtype=float)
    codes, g = _codes(clusters)
    k = counts.shape[1]
    per = np.zeros((g, k))
    for j in range(k):
        per[:, j] = np.bincount(codes, weights=counts[:, j], minlength=g)
    per = per[per.sum(axis=1) > 0]
    g = len(per)
    totals = per.sum(axis=0)
    share = totals / totals.sum() if totals.sum() > 0 else np.full(k, np.nan)
    estimate = float(np.nanmax(share) - np.nanmin(share)) if totals.sum() > 0 else float("nan")
    # smallest p: the k! arrangements of an aligned data set out of (k!)^G
    need = 1
    while math.factorial(k) ** (need - 1) * alpha <= 0.5:
        need += 1
    need = max(need, 2)
    base = dict(estimate=estimate, unit=unit, n_clusters=g, n_judgments=int(len(counts)), low=None, high=None,
                confidence=1 - alpha, interval_method="none (omnibus test)")
    method_base = f"permutation of the {k} models within each {unit}"
    if g < need or totals.sum() == 0:
        return ClusterTest(p_value=None, method=method_base, clusters_needed=need,
                           reason=(f"only {g} {_plural(unit, g)}: the permutation test cannot reach p < {alpha:g} "
                                   f"with fewer than {need}") if g < need else "nothing was picked", **base)

    if g >= NORMAL_FROM:
        p = _omnibus_wald(per)
        return ClusterTest(p_value=p, method=f"{method_base} (normal limit: cluster-robust Wald test, chi-squared on "
                                             f"{k - 1} df)", reason="an omnibus test has no interval",
                           clusters_needed=None, **base)
    p, exact, total = omnibus_pvalues(per, n_resamples=n_resamples, seed=seed)
    method = (f"{method_base} (exact, {total} arrangements, mid-p)" if exact else
              f"{method_base} (Monte Carlo, {total} random arrangements, seed {seed}, mid-p)")
    p = float(p[0])
    return ClusterTest(p_value=p, method=method, reason="an omnibus test has no interval", clusters_needed=None,
                       **base)


def _omnibus_wald(per: np.ndarray) -> float:
    """Large-G limit of the within-cluster permutation test: each cluster's deviation of its
    counts from an equal split, d_g, summed; W = D' V^+ D with V = sum d_g d_g' (cluster-robust),
    chi-squared on rank(V) <= k - 1 df."""
    from scipy import stats

    d = per - per.sum(axis=1, keepdims=True) / per.shape[1]
    total = d.sum(axis=0)
    v = d.T @ d
    rank = int(np.linalg.matrix_rank(v))
    if rank == 0:
        return 1.0
    w = float(total @ np.linalg.pinv(v) @ total)
    return float(stats.chi2.sf(w, rank))


def _spread(totals: np.ndarray) -> np.ndarray:
    return ((totals - totals.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)


def omnibus_pvalues(per, *, n_resamples: int = 10_000, seed: int = 0) -> tuple[np.ndarray, bool, int]:
    """Mid-p-values of the within-cluster permutation test of :func:`omnibus_cluster_test`
    for R studies at once: ``per`` is (R, G, k) (or (G, k)), each cluster's counts per model.
    The same arrangements serve every study. Returns (p (R,), exact, arrangements)."""
    per = np.asarray(per, dtype=float)
    if per.ndim == 2:
        per = per[None]
    r, g, k = per.shape
    totals = per.sum(axis=1)
    observed = _spread(totals)
    tol = 1e-9 * (1.0 + np.abs(totals).sum(axis=1)) * np.maximum(1.0, observed)
    perms = np.array(list(itertools.permutations(range(k))))
    exact = len(perms) ** g <= n_resamples
    rng = np.random.default_rng(seed)
    total = len(perms) ** g if exact else n_resamples
    greater, ties = np.zeros(r), np.zeros(r)
    step = max(1, _CHUNK_CELLS // max(r * g * k, 1))
    for start in range(0, total, step):
        b = min(step, total - start)
        if exact:
            index = np.arange(start, start + b)[:, None] // len(perms) ** np.arange(g)[None, :] % len(perms)
            order = perms[index]  # (b, G, k)
        else:
            order = rng.random((b, g, k)).argsort(axis=2)
        permuted = np.take_along_axis(per[:, None], np.broadcast_to(order[None], (r, b, g, k)), axis=3).sum(axis=2)
        spread = _spread(permuted)  # (R, b)
        greater += (spread > observed[:, None] + tol[:, None]).sum(axis=1)
        ties += (np.abs(spread - observed[:, None]) <= tol[:, None]).sum(axis=1)
    p = (greater + 0.5 * ties) / total if exact else (greater + 0.5 * ties + 0.5) / (total + 1.0)
    return p, exact, total
