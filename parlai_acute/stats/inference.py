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

All three report a **mid-p-value**: arrangements more extreme than the data count
fully, arrangements that tie with the data *by chance* count half. Judgments are 0/1, so
with 8 dialogues the statistic ties often and the plain randomisation p-value fires 2-4 %
at a nominal 5 % (as conservative as Fisher's exact test). The arrangements that tie with
the observed one *by construction* -- the observed one itself and its mirror image (all
signs negated; the complementary split of a balanced two-sample design; the k! global
relabellings of the omnibus test) -- count fully: they are the same outcome seen twice,
not a tie of the data. Counting them half (the textbook mid-p) let the test fire above
its level whenever the cluster totals are all distinct: 6.25 % at 5 and 6 clusters,
5.08 % at 9 and 10 (and 1.56 % at 7 for alpha 0.01) -- measured 6.1 % at 5 workers. With
the observed class counted fully the rejection rate is at most ``alpha`` at every size
(exactly the plain p-value when totals are distinct; tested at 5 to 10 clusters in
tests/stats/test_inference_calibration.py), and a tie of the data still counts half, so
the SATA designs keep their power (3.4-5.0 % at 6 to 60 clusters, docs/inference.md).

Why these. Measured on seeded A/A simulations with dialogue random effects (sd 1 and 2
on the logit scale) at 8, 20 and 60 dialogues (docs/inference.md): the percentile cluster
bootstrap fires 10-13 % at 8 dialogues and 7-8 % at 20; the CR2 sandwich with a t on G-1
degrees of freedom fires 6.6-7.1 % at 8 dialogues for PM-SOBA and would need a model fit
per comparison for anything beyond a mean; GEE with robust errors is a sandwich too, with
the same small-sample problem. The randomisation tests hold their level at every size,
cost one matrix product, and say plainly when the data cannot reach ``alpha``: with G
clusters the smallest sign-flip p-value is 2 / 2^G, so fewer than
:func:`min_clusters` ``(alpha)`` clusters (6 at 0.05, 8 at 0.01) can never give a mark,
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

**Two sampled facets** (issue 23). When the same conversations serve many ACUTE judgments,
a test over workers treats the sampled conversations as fixed: its verdict is about *these*
conversations, and it fires 19-27 % when the models are equal (conversation quality sd 1,
docs/inference.md). There the analyses treat every sampled facet as random with
:func:`multiway_tests`: the multiway cluster-robust variance of the mean (Cameron, Gelbach and
Miller 2011) -- the sum over the facets (worker, A's conversation, B's conversation) of the
one-facet variances, minus those of their intersections, plus the triple intersection -- with
the CR3 small-sample correction (each cell's residual total divided by 1 - its share of the
judgments, the jackknife's leverage) and a t on min(levels) - 1 degrees of freedom. Why this:
measured side by side on seeded A/A studies (docs/inference.md, benchmarks/
bench_crossed_calibration.py), the CR1 correction (G / (G - 1)) fires 6.1-8.6 % at 8 levels,
the sum of one-facet variances without the intersection 1-3.5 % (it counts the judgment noise
twice), while CR3 with the min-levels t holds 3.7-5.9 % and covers 94.1-96.3 % at 8, 20 and 60
levels, with the power of a Wald test that knows the true standard deviation. The pigeonhole
bootstrap and randomisation tests that respect both facets were not adopted: resampling two
facets at once over-counts the judgment noise (Owen 2007), the percentile bootstrap already
fired 10-13 % with one facet at 8 clusters, and negating one worker's judgments is not a
symmetry of the null once conversations are shared. A facet with too few levels for a verdict
about the models (fewer than :func:`min_clusters`) gives no mark; the analysis says what the
one-facet test shows about these conversations and how many are needed. Static SSA's replies are
labelled by several workers each, so a worker is not one cell of a partition of the replies:
:func:`split_facet_tests` splits the statistic's residual instead (module function docstring).
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
           "shortfall", "multiway_components", "multiway_tests", "split_facet_tests", "pivotal", "scaled_votes", "difference_split_tests"]

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
    its smallest p-value is 2 / 2^G (the observed signs and their negation, counted fully)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    g = 1
    while 2.0 / 2 ** g >= alpha:
        g += 1
    return g


def min_clusters_two_sample(alpha: float) -> int:
    """Fewest clusters (split evenly between the two models) for which the two-sample
    permutation test can reach p < ``alpha``: its smallest p-value is 1 / C(G, G/2) for odd G and
    2 / C(G, G/2) for even G (the observed split and its mirror image, counted fully)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    g = 2
    while (1.0 if g % 2 else 2.0) / math.comb(g, g // 2) >= alpha:
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


def _midp(stat: np.ndarray, observed, tol: float, total: int, exact: bool, axis: int = 0,
          structural: int = 1) -> np.ndarray:
    """Mid-p-value: arrangements more extreme than the observed statistic count fully, ties
    of the data half, and the ``structural`` arrangements that tie with the observed one by
    construction (itself, its mirror image: module docstring) fully, so the test never
    fires above its level. Exact enumeration includes those arrangements among ``stat``;
    Monte Carlo adds the observed one (fully) to the B random ones, so p is never zero."""
    greater = (stat > observed + tol).sum(axis=axis)
    ties = (np.abs(stat - observed) <= tol).sum(axis=axis)
    if exact:
        return (greater + 0.5 * ties + 0.5 * structural) / total
    return (greater + 0.5 * ties + 1.0) / (total + 1.0)


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
    return _midp(np.abs(a), np.abs(sums.sum(axis=0)), _tol(sums), total, exact, structural=2)


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
                 int(valid.sum()) if exact else total, exact, structural=2 if 2 * int(z.sum()) == len(z) else 1)


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
        return float(_midp(np.abs(a - delta * c), stat, tol, total, exact, structural=2))

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
        return float(_midp(np.abs(a - delta * b), stat, tol, len(a) if exact else total, exact,
                           structural=2 if g0 == g1 else 1))

    # smallest p-value the data allow: the observed arrangement (and its mirror when balanced) alone
    smallest = (2.0 if g0 == g1 else 1.0) / len(a) if exact else 1.0 / (total + 1)
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
    # smallest p: the k! global relabellings of an aligned data set (counted fully) out of (k!)^G
    need = 1
    while math.factorial(k) ** (need - 1) * alpha <= 1.0:
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
    # the k! global relabellings tie with the observed arrangement by construction: counted fully
    structural = len(perms)
    p = ((greater + 0.5 * ties + 0.5 * structural) / total if exact
         else (greater + 0.5 * ties + 1.0) / (total + 1.0))
    return p, exact, total


# ---------------------------------------------------------------- two (or more) sampled facets


def _combined(column: np.ndarray, codes: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """(key, bound): one integer 0..bound-1 per (column, codes...) combination, equal where the
    combination is; re-coded only when the product would overflow."""
    key, bound = column.astype(np.int64), int(column.max()) + 1 if len(column) else 1
    for code in codes:
        size = int(code.max()) + 1 if len(code) else 1
        if bound * size >= 2 ** 62:
            key = pd.factorize(key)[0].astype(np.int64)
            bound = int(key.max()) + 1 if len(key) else 1
        key, bound = key * size + code, bound * size
    return key, bound


def _group(column: np.ndarray, codes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(key, column of each key): one integer per distinct (column, codes...) combination."""
    key = pd.factorize(_combined(column, codes)[0])[0].astype(np.int64)
    first = np.zeros(int(key.max()) + 1 if len(key) else 0, dtype=np.int64)
    first[key] = column
    return key, first


#: Combinations up to which :func:`cell_totals` finds each cell's first entry in a dense table (64 MB)
_DENSE_KEYS = 2 ** 23
#: Fewer entries than the table's slots / this: they are hashed instead (allocating and filling a
#: table of millions of slots for a few hundred entries cost most of a two-facet look)
_HASH_BELOW = 64


def cell_totals(key: np.ndarray, bound: int, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, total, count) of the cells of equal ``key`` (integers 0..bound-1): the index of each
    cell's first entry (ascending: the cells in the order they first appear, as ``pd.factorize``
    numbers them), the cell's total of ``values`` (summed in entry order) and its number of entries.
    Few combinations: a dense table; many (worker x conversation, mostly one entry per cell): an entry
    alone in its bucket (the key modulo 2**23) is alone in its cell and is its own total, so only the
    entries of shared buckets are hashed. The same numbers as grouping every entry by hashing, in a
    fraction of the time."""
    n = len(key)
    if n * _HASH_BELOW < min(bound, _DENSE_KEYS):  # few entries (a look at one pair): hashing them beats
        codes = pd.factorize(key)[0]                # touching a table of the combinations
        seen = np.maximum.accumulate(codes)
        first = np.flatnonzero(codes > np.concatenate([[-1], seen[:-1]]))  # a code's first entry
        return first, np.bincount(codes, weights=values), np.bincount(codes)
    index = np.arange(n, dtype=np.int64)
    if bound <= _DENSE_KEYS:
        first_of = np.full(bound, n, dtype=np.int64)
        np.minimum.at(first_of, key, index)
        first = np.flatnonzero(first_of[key] == index)
        return (first, np.bincount(key, weights=values, minlength=bound)[key[first]],
                np.bincount(key, minlength=bound)[key[first]])
    bucket = key % _DENSE_KEYS
    small = index.astype(np.int32) if n < 2 ** 31 else index  # half the table: fewer cache misses
    last = np.empty(_DENSE_KEYS, dtype=small.dtype)
    last[bucket] = small  # one entry's index per bucket: the others of that bucket differ from it
    shared = np.zeros(_DENSE_KEYS, dtype=bool)
    shared[bucket[last[bucket] != small]] = True
    candidate = shared[bucket]
    total, count = np.asarray(values, dtype=float).copy(), np.ones(n, dtype=np.int64)
    is_first = ~candidate
    several = np.flatnonzero(candidate)
    if several.size:
        codes = pd.factorize(key[several])[0]
        seen = np.maximum.accumulate(codes)
        leads = codes > np.concatenate([[-1], seen[:-1]])  # a code's first entry: it exceeds every code before it
        is_first[several[leads]] = True
        total[several[leads]] = np.bincount(codes, weights=total[several])
        count[several[leads]] = np.bincount(codes)
    first = np.flatnonzero(is_first)
    return first, total[first], count[first]


def multiway_components(column, values, facets, columns: int, small_sample: str = "cr3") -> dict:
    """The pieces of the multiway cluster-robust variance of each column's mean of ``values``
    (Cameron, Gelbach and Miller 2011): for every non-empty subset S of the ``facets`` (integer
    codes, e.g. worker and conversation), V_S = sum over the S-cells of (cell total of the
    residuals, small-sample corrected)^2 / n^2. ``small_sample``: "cr3" (the default: each cell's
    total divided by 1 - its share of the judgments, the jackknife's leverage correction) or
    "cr1" (V_S times G_S / (G_S - 1)). Returns estimate (m,), n (m,), levels (facets, m) and
    parts: list of (sign, V_S (m,)) with sign (-1)^(|S|+1)."""
    if small_sample not in ("cr1", "cr3"):
        raise ValueError(f"small_sample must be 'cr1' or 'cr3', got {small_sample!r}")
    column = np.asarray(column, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    facets = [np.asarray(f, dtype=np.int64) for f in facets]
    n = np.bincount(column, minlength=columns).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.bincount(column, weights=values, minlength=columns) / n
    resid = values - np.nan_to_num(estimate)[column]
    levels = np.zeros((len(facets), columns), dtype=np.int64)
    parts = []
    for size in range(1, len(facets) + 1):
        for subset in itertools.combinations(range(len(facets)), size):
            first, totals, count = cell_totals(*_combined(column, [facets[f] for f in subset]), resid)
            owner = column[first]
            g = np.bincount(owner, minlength=columns).astype(float)
            if size == 1:
                levels[subset[0]] = g
            with np.errstate(invalid="ignore", divide="ignore"):
                if small_sample == "cr3":
                    lev = count / n[owner]
                    totals = totals / np.where(lev < 1, 1 - lev, np.inf)
                    v = np.bincount(owner, weights=totals ** 2, minlength=columns) / n ** 2
                else:
                    v = np.bincount(owner, weights=totals ** 2, minlength=columns) / n ** 2 * np.where(g > 1, g / (g - 1), 0)
            parts.append((1.0 if size % 2 else -1.0, np.nan_to_num(v)))
    return {"estimate": estimate, "n": n, "levels": levels, "parts": parts}


def multiway_tests(column, values, facets, columns: int, confidence: float = 0.95, small_sample: str = "cr3") -> dict:
    """Two-sided test of "mean 0" and interval of the mean of ``values`` for every column, every
    facet random (module section "two sampled facets"): the multiway cluster-robust variance of
    :func:`multiway_components` (if the inclusion-exclusion sum is not positive, the largest
    one-facet variance), a t on min(levels) - 1 df. Arrays (m,): estimate, se, df, p, low, high
    (NaN where no test exists: fewer than 2 levels of a facet, or no variation), levels (facets, m)."""
    from scipy import stats

    parts = multiway_components(column, values, facets, columns, small_sample)
    var = sum(sign * v for sign, v in parts["parts"])
    one_facet = np.max([v for (sign, v), size in zip(parts["parts"], _subset_sizes(len(facets))) if size == 1], axis=0)
    var = np.where(var > 0, var, one_facet)
    df = parts["levels"].min(axis=0) - 1.0
    ok = (df >= 1) & (var > 0) & (parts["n"] > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(ok, np.sqrt(var), np.nan)
        t = np.abs(parts["estimate"]) / se
        p = np.where(ok, 2 * stats.t.sf(t, np.maximum(df, 1)), np.nan)
        half = stats.t.ppf(0.5 + confidence / 2, np.maximum(df, 1)) * se
    return {"estimate": parts["estimate"], "se": se, "df": df, "p": p, "low": parts["estimate"] - half,
            "high": parts["estimate"] + half, "levels": parts["levels"], "n": parts["n"]}


def _subset_sizes(k: int) -> list[int]:
    return [size for size in range(1, k + 1) for _ in itertools.combinations(range(k), size)]


def split_facet_tests(column, estimate, item_score, item_context, label_item, label_worker, label_score,
                      columns: int, confidence: float = 0.95, small_sample: str = "cr2") -> dict:
    """Two-sided test of "0" and interval for a statistic built from *items* that each belong to
    one context and were labelled by several workers (static SSA: a majority label per item), both
    facets random (module section "two sampled facets").

    A worker is not one cell of an item, so the items cannot be the observations of
    :func:`multiway_tests`. The statistic's residual is split instead (an influence-function
    split): ``item_score`` (per item, summing to the statistic minus its estimate) carries
    everything that moves with a context; ``label_score`` (per label, its linear part: the label's
    residual times the chance that it decides its item's majority) carries what moves with a
    worker. The variance is V_C(items) + V_W(labels) - V_{WxC}(labels): the context totals'
    squares, each divided by 1 - the context's share of the items (CR2's leverage correction,
    ``small_sample="cr2"``, the default; "cr3" divides by its square, as :func:`multiway_tests`
    does), plus the
    cross-products of one worker's labels in *different* contexts (the worker total's square minus
    its within-context squares). The leverage correction is for the squared terms; the worker part
    has none, and correcting its two sums separately made the test conservative (2.5 % at 8
    levels, against 3.6 % without; docs/inference.md). CR3 on the context part was conservative
    at 8 levels too: on 2,000 seeded A/A studies per size, CR3 fires 3.4 % at 8 levels (5.3 % and
    5.4 % at 20 and 60), CR2 (with a t on min(contexts, workers) - 1 df) 4.35 %, 5.9 % and 5.65 %, covering 94.8 %, 94.1 % and 94.35 % (CR3
    95.75 %, 94.75 %, 94.6 %): CR2 holds 3-7 % and 93-97 % at every size, CR3 not at 8. The ACUTE
    test keeps CR3 (its facets are partitions of the judgments, where CR3 measured 3.7-5.9 %). A split that put the whole item residual into every one of its workers' cells would
    count the other labellers' tastes once per shared worker, (k - 1)^2 / (W - 1) too much
    (k labels per item, W workers): 2.3 times at 8 workers and 5 labels per item. If the sum is not
    positive, the larger one-facet variance, V_C or V_W (as :func:`multiway_tests`; V_C alone left
    studies whose contexts all had the same difference with no interval, 1.8 % of them at 8 levels
    and a strong effect).

    The t has the number of contexts that carry the context part as its df: with a_c the CR2
    contributions of the contexts, (sum a_c)^2 / sum a_c^2 (Satterthwaite's df with each
    contribution's square standing for its variance; the Kish effective number of contexts), at most
    min(contexts, workers) - 1, which it equals when every context contributes alike. Why: a t on
    min(contexts, workers) - 1 df held the null (4.15-5.9 %) but covered only 90.65 % at 8 levels
    and a strong effect (logit 0.8): the shares move toward 1, most contexts' majorities then agree,
    and the variance rests on the few contexts whose models differ, so it is noisy exactly there
    (the misses were on one side, 5.45 % against 2.1 %, the estimate not biased: the Wald test with
    the true sd covered 94.85 %). Measured side by side on the benchmark's 2,000 seeded studies per
    row (docs/inference.md): this df gives null 3.55-4.75 %, coverage 95.25-96.45 % (models equal)
    and 95.0-96.8 % at the effect at 8, 20 and 60 levels; the normal-theory Satterthwaite df (each
    contribution's variance a_c^2 / 3, so three times that number) covers 92.9 % at 8 levels and the
    strong effect, 1.5 times it 93.85 %: a context's difference of two majorities is -1, 0 or 1, far
    from normal, so its own square is the honest estimate of its variance. CR3 covers 93.4 % there
    but fires 2.9-3.4 % at 8 levels; the same Satterthwaite df over the context and worker
    contributions together fires 2.2-2.6 % at 8; a Tango-type score variance of the paired context
    differences (the variance under the hypothesised value) fires under 1 % at 8. Bell-McCaffrey's
    df from a working model (Imbens and Kolesar 2016; Pustejovsky and Tipton 2018) is one less
    than the contexts here, since every context holds one reply per model: it cannot see which
    contexts carry the variance. The price is power, since the df is estimated: at the strong effect 0.19 against 0.23
    with 19 df at 20 levels, 0.546 against 0.578 at 60 (the reference that knows the true sd: 0.246
    and 0.594). ``small_sample="cr3"`` keeps min(contexts, workers) - 1.

    ``column`` maps items to columns,
    ``label_item`` labels to items. Several statistics over the same items and labels at once:
    scores of shape (items, q) and (labels, q), estimate (m, q). Arrays (m,) (or (m, q)): estimate,
    se, df, p, low, high; levels (2, m); v_context and v_workers, the two parts of the variance
    (what a plan from a pilot scales: ``ssa power``)."""
    from scipy import stats

    column = np.asarray(column, dtype=np.int64)
    label_item = np.asarray(label_item, dtype=np.int64)
    label_column = column[label_item]
    items = np.bincount(column, minlength=columns).astype(float)

    def part(col, codes, score, size=None):
        """Per column: the sum of the cells' squared totals, the sum of their fourth powers (the
        spread of the cells' contributions, for the Satterthwaite df) and the number of cells."""
        key, owner = _group(col, codes)
        score = np.asarray(score, float)
        totals = np.stack([np.bincount(key, weights=x) for x in score.reshape(len(key), -1).T], axis=-1)
        if size is not None:  # CR3 (CR2: the square root of its divisor)
            with np.errstate(invalid="ignore", divide="ignore"):
                lev = np.bincount(key) / size[owner]
                divisor = np.where(lev < 1, 1 - lev, np.inf)
                totals = totals / (np.sqrt(divisor) if small_sample == "cr2" else divisor)[:, None]
        shape = (columns,) + score.shape[1:]
        v = np.stack([np.bincount(owner, weights=t ** 2, minlength=columns) for t in totals.T], axis=-1)
        v4 = np.stack([np.bincount(owner, weights=t ** 4, minlength=columns) for t in totals.T], axis=-1)
        return v.reshape(shape), v4.reshape(shape), np.bincount(owner, minlength=columns)

    context = np.asarray(item_context, dtype=np.int64)
    worker = np.asarray(label_worker, dtype=np.int64)
    v_c, v4_c, g_c = part(column, [context], item_score, items)
    v_w, _, g_w = part(label_column, [worker], label_score)
    v_cw, _, _ = part(label_column, [context[label_item], worker], label_score)
    var = v_c + v_w - v_cw
    var = np.where(var > 0, var, np.maximum(v_c, v_w))
    if var.ndim > 1:
        g_c, g_w, items = g_c[:, None], g_w[:, None], items[:, None]
    df = np.minimum(g_c, g_w) - 1.0
    if small_sample == "cr2":  # fewer df where few contexts carry the context part (docstring)
        with np.errstate(invalid="ignore", divide="ignore"):
            carrying = v_c ** 2 / v4_c
        df = np.where(v4_c > 0, np.minimum(df, np.maximum(carrying, 1.0)), df)
    estimate = np.asarray(estimate, dtype=float)
    ok = (df >= 1) & (var > 0) & (items > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(ok, np.sqrt(var), np.nan)
        p = np.where(ok, 2 * stats.t.sf(np.abs(estimate) / se, np.maximum(df, 1)), np.nan)
        half = stats.t.ppf(0.5 + confidence / 2, np.maximum(df, 1)) * se
    return {"estimate": estimate, "se": se, "df": df, "p": p, "low": estimate - half, "high": estimate + half,
            "levels": np.vstack([np.ravel(g_c), np.ravel(g_w)]), "v_context": v_c, "v_workers": v_w - v_cw}


def pivotal(others_yes, labels) -> np.ndarray:
    """Per label: 1.0 when its vote decides its item's majority (more than half of ``labels`` say
    yes), given how many of the *other* labels of the item say yes: the label's exact influence
    on the majority, whose mean is the slope of the majority in one label (pivot probability)."""
    o, k = np.asarray(others_yes, float), np.asarray(labels, float)
    return ((2 * (o + 1) > k) != (2 * o > k)).astype(float)


def scaled_votes(key, vote, pivot) -> np.ndarray:
    """Each label's vote times the share of pivotal labels (:func:`pivotal`) among the labels with
    its ``key`` (e.g. its model): the linear part of an item majority in that label, to second
    order the label's contribution to the majority share (``label_part`` of
    :func:`difference_split_tests`)."""
    key = np.asarray(key, dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.bincount(key, weights=np.asarray(pivot, float)) / np.bincount(key)
    return np.asarray(vote, float) * np.nan_to_num(slope)[key]


def difference_split_tests(column, is_b, item_value, item_context, label_item, label_worker, label_part,
                           columns: int, confidence: float = 0.95, small_sample: str = "cr2") -> dict:
    """:func:`split_facet_tests` of B's mean item value minus A's in each column (items with
    ``is_b`` are B's): item scores (value - its model's mean) / n_model with the sign of the model,
    label scores (``label_part`` - its model's mean part) with the same weight. ``item_value`` and
    ``label_part`` may have a second axis (several measures over the same items and labels).
    Returns the dict of :func:`split_facet_tests` plus ``n_a``, ``n_b`` (items per model and column)."""
    column = np.asarray(column, dtype=np.int64)
    is_b = np.asarray(is_b, dtype=bool)
    value = np.asarray(item_value, dtype=float)
    part = np.asarray(label_part, dtype=float)
    label_item = np.asarray(label_item, dtype=np.int64)
    group = 2 * column + is_b
    label_group = group[label_item]
    n = np.bincount(group, minlength=2 * columns).astype(float)
    n_label = np.bincount(label_group, minlength=2 * columns).astype(float)

    def means(key, x, count):
        return np.stack([np.bincount(key, weights=c, minlength=2 * columns) / count
                         for c in x.reshape(len(key), -1).T], axis=-1).reshape((2 * columns,) + x.shape[1:])

    with np.errstate(invalid="ignore", divide="ignore"):
        mean = means(group, value, n)
        centre = means(label_group, part, n_label)
        weight = np.where(is_b, 1.0, -1.0) / n[group]
    shape = (-1,) + (1,) * (value.ndim - 1)
    estimate = mean[1::2] - mean[0::2]
    item_score = weight.reshape(shape) * (value - mean[group])
    label_score = weight[label_item].reshape(shape) * (part - centre[label_group])
    out = split_facet_tests(column, estimate, item_score, item_context, label_item, label_worker, label_score,
                            columns, confidence, small_sample)
    out["n_a"], out["n_b"] = n[0::2], n[1::2]
    return out
