"""stats/inference.py against brute force: the randomisation p-values equal a plain loop
over every sign pattern / arrangement, the interval is the inverted test (it excludes 0
exactly when p < 1 - confidence), and no p-value or interval is given where none can be
true -- the reason and the clusters still needed are said instead."""
import itertools
import math

import numpy as np
import pytest

from parlai_acute.stats import inference
from parlai_acute.stats.inference import (legend, mark, min_clusters, min_clusters_two_sample, omnibus_cluster_test,
                                          paired_cluster_test, shortfall, two_sample_cluster_test)


def brute_sign_flip(sums):
    """Mid-p over every sign pattern; the observed pattern and its negation (the same outcome
    seen twice) count fully, other ties half."""
    observed = abs(sums.sum())
    stats = np.array([abs(np.dot(signs, sums)) for signs in itertools.product([1, -1], repeat=len(sums))])
    return ((stats > observed + 1e-9).sum() + 0.5 * (np.abs(stats - observed) <= 1e-9).sum() + 1.0) / len(stats)


def test_sign_flip_equals_a_loop_over_every_pattern_and_diffs_cluster_as_given():
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(9), rng.integers(1, 8, 9))
    diffs = rng.choice([-1.0, 0.0, 1.0], size=len(clusters), p=[0.3, 0.2, 0.5])
    test = paired_cluster_test(diffs, [f"d{c}" for c in clusters], unit="dialogue")
    sums = np.bincount(clusters, weights=diffs)
    assert test.p_value == pytest.approx(brute_sign_flip(sums))
    assert test.estimate == pytest.approx(diffs.mean())
    assert (test.n_clusters, test.n_judgments, test.unit) == (9, len(diffs), "dialogue")
    assert "exact, 512 sign patterns" in test.method
    # Monte Carlo beyond n_resamples patterns: close to the exact value, seeded, never zero
    mc = paired_cluster_test(diffs, clusters, unit="dialogue", n_resamples=400, seed=3)
    assert "Monte Carlo" in mc.method and mc.p_value == pytest.approx(test.p_value, abs=0.05)
    assert mc == paired_cluster_test(diffs, clusters, unit="dialogue", n_resamples=400, seed=3)


@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_interval_is_the_inverted_test(confidence):
    rng = np.random.default_rng(1)
    clusters = np.repeat(np.arange(12), 6)
    diffs = np.where(rng.random(72) < 0.5 + 0.3 * (clusters % 3 == 0), 1.0, -1.0)
    test = paired_cluster_test(diffs, clusters, unit="dialogue", confidence=confidence)
    assert test.low < test.estimate < test.high
    sums, counts = np.bincount(clusters, weights=diffs), np.bincount(clusters).astype(float)
    inside = [test.low + 1e-6, test.high - 1e-6]
    outside = [test.low - 1e-3, test.high + 1e-3]
    for delta in inside:
        assert brute_sign_flip(sums - delta * counts) >= 1 - confidence
    for delta in outside:
        assert brute_sign_flip(sums - delta * counts) < 1 - confidence
    # the interval excludes 0 exactly when the test rejects at 1 - confidence
    assert (test.p_value < 1 - confidence) == (not test.low <= 0 <= test.high)


def test_too_few_clusters_give_no_p_no_interval_and_say_how_many_more():
    test = paired_cluster_test([1.0] * 10, ["d1"] * 10, unit="dialogue")
    assert test.p_value is None and test.low is None and test.high is None
    assert test.clusters_needed == 6 and test.estimate == 1.0
    assert shortfall(test) == "only 1 dialogue: a calibrated test needs at least 6 (5 more)"
    assert mark(test, 0.05) == ""
    # every dialogue the same mean: a p-value, but no interval of zero width
    same = paired_cluster_test([1.0] * 24, np.repeat(np.arange(8), 3), unit="dialogue")
    assert same.p_value == pytest.approx(2 / 256) and same.low is None and "same mean" in same.reason
    assert mark(same, 0.05) == "**"


def test_min_clusters_and_marks_follow_alpha():
    assert min_clusters(0.05) == 6 and min_clusters(0.01) == 8 and min_clusters(0.1) == 5
    for alpha in (0.1, 0.05, 0.01):
        g = min_clusters(alpha)
        assert 2 / 2 ** g < alpha <= 2 / 2 ** (g - 1)
    assert min_clusters_two_sample(0.05) == 7 and 1 / math.comb(7, 3) < 0.05 <= 2 / math.comb(6, 3)
    assert [mark(p, 0.05) for p in (0.009, 0.03, 0.05, None, float("nan"))] == ["**", "*", "", "", ""]
    assert [mark(p, 0.1) for p in (0.015, 0.07, 0.2)] == ["**", "*", ""]
    assert "* p < 0.1, ** p < 0.02" in legend(0.1)


def test_two_sample_equals_a_loop_over_every_split_of_the_clusters():
    rng = np.random.default_rng(2)
    sizes = rng.integers(2, 6, 9)
    clusters = np.repeat(np.arange(9), sizes)
    group = np.where(clusters < 4, "alpha", "beta")
    values = (rng.random(len(clusters)) < np.where(group == "beta", 0.7, 0.4)).astype(float)
    test = two_sample_cluster_test(values, group, clusters, unit="conversation")
    sums, counts = np.bincount(clusters, weights=values), np.bincount(clusters).astype(float)

    def stat(second):
        z = np.zeros(9, bool)
        z[list(second)] = True
        return sums[z].sum() / counts[z].sum() - sums[~z].sum() / counts[~z].sum()

    observed = abs(stat(range(4, 9)))
    all_ = np.array([abs(stat(c)) for c in itertools.combinations(range(9), 5)])
    # 5 of 9 in the second group: no mirror split, the observed one alone counts fully
    expected = ((all_ > observed + 1e-12).sum() + 0.5 * (np.abs(all_ - observed) <= 1e-12).sum() + 0.5) / len(all_)
    assert test.p_value == pytest.approx(expected) and "exact, 126 arrangements" in test.method
    assert test.estimate == pytest.approx(values[group == "beta"].mean() - values[group == "alpha"].mean())
    assert test.low < test.estimate < test.high
    with pytest.raises(ValueError, match="both groups"):
        two_sample_cluster_test(values, group, np.zeros(len(values)), unit="conversation")


def test_omnibus_equals_a_loop_over_every_arrangement():
    rng = np.random.default_rng(4)
    clusters = np.repeat(np.arange(4), 5)
    picks = np.zeros((20, 3))
    picks[np.arange(20), rng.choice(3, 20, p=[0.6, 0.2, 0.2])] = 1
    test = omnibus_cluster_test(picks, clusters, unit="dialogue")
    per = np.array([picks[clusters == g].sum(axis=0) for g in range(4)])
    spread = lambda t: ((t - t.mean()) ** 2).sum()  # noqa: E731
    observed = spread(per.sum(axis=0))
    perms = list(itertools.permutations(range(3)))
    stats = np.array([spread(sum(per[g][list(p)] for g, p in enumerate(choice)))
                      for choice in itertools.product(perms, repeat=4)])
    # the 3! global relabellings tie with the data by construction: counted fully
    expected = ((stats > observed + 1e-9).sum() + 0.5 * (np.abs(stats - observed) <= 1e-9).sum() + 3.0) / len(stats)
    assert test.p_value == pytest.approx(expected) and "exact, 1296 arrangements" in test.method
    assert test.low is None and test.reason
    assert omnibus_cluster_test(picks[:5], clusters[:5], unit="dialogue").p_value is None


def test_normal_limits_agree_with_the_randomisation_tests_at_many_clusters():
    """From NORMAL_FROM clusters the tests take their normal limits (cost); there the
    randomisation distributions they replace give nearly the same p-values and intervals."""
    from parlai_acute.stats.inference import NORMAL_FROM, omnibus_pvalues, permutation_pvalues, sign_flip_pvalues

    rng = np.random.default_rng(3)
    g, size = NORMAL_FROM + 50, 6
    clusters = np.repeat(np.arange(g), size)
    taste = rng.normal(0, 1.0, g)[clusters]
    diffs = np.where(rng.random(g * size) < 1 / (1 + np.exp(-(0.12 + taste))), 1.0, -1.0)
    test = paired_cluster_test(diffs, clusters, unit="dialogue")
    assert "normal limit" in test.method and test.low < test.estimate < test.high
    sums = np.bincount(clusters, weights=diffs)
    assert abs(test.p_value - sign_flip_pvalues(sums, n_resamples=20_000, seed=1)[0]) < 0.02

    group = (np.arange(g) % 2 == 1)[clusters]
    values = (rng.random(g * size) < 1 / (1 + np.exp(-(0.2 * group + taste)))).astype(float)
    two = two_sample_cluster_test(values, np.where(group, "b", "a"), clusters, unit="conversation")
    assert "normal limit" in two.method and two.low < two.estimate < two.high
    p_perm = permutation_pvalues(np.bincount(clusters, weights=values), np.full(g, size), np.arange(g) % 2 == 1,
                                 n_resamples=20_000, seed=1)[0]
    assert abs(two.p_value - p_perm) < 0.03

    k = 3
    picks = rng.multinomial(size, [0.36, 0.33, 0.31], size=g)  # (G, k) picks per dialogue
    rows = np.repeat(np.tile(np.eye(k), (g, 1)), picks.ravel(), axis=0)
    row_clusters = np.repeat(np.repeat(np.arange(g), k), picks.ravel())
    omni = omnibus_cluster_test(rows, row_clusters, unit="dialogue")
    assert "normal limit" in omni.method
    assert abs(omni.p_value - omnibus_pvalues(picks, n_resamples=5_000, seed=1)[0][0]) < 0.05


def test_paired_test_from_totals_is_the_same_test():
    rng = np.random.default_rng(8)
    clusters = np.repeat(np.arange(30), rng.integers(1, 9, 30))
    diffs = rng.choice([-1.0, 1.0], size=len(clusters))
    direct = paired_cluster_test(diffs, clusters, unit="worker", seed=4)
    totals = inference.paired_test_from_totals(np.bincount(clusters, weights=diffs), np.bincount(clusters),
                                               unit="worker", seed=4)
    assert totals == direct


# a dense table; buckets with only the shared ones hashed; few entries among many combinations, all hashed
@pytest.mark.parametrize("bound, entries", [(50, 5000), (2 ** 40, 200_000), (2 ** 40, 5000), (10 ** 6, 5000)])
def test_cells_are_the_groups_of_equal_keys_in_the_order_they_first_appear(bound, entries):
    """multiway_components' cells (stats.inference.cell_totals) equal grouping every entry by hashing:
    first entries, totals summed in entry order and counts, to the bit."""
    import pandas as pd

    from parlai_acute.stats.inference import cell_totals

    rng = np.random.default_rng(3)
    key = rng.integers(0, 50, entries) * (bound // 50) + rng.integers(0, 2, entries)  # repeats, collisions mod 2**23
    key[::7] = rng.integers(0, bound, len(key[::7]))  # and cells of one entry
    key = key % bound
    values = rng.normal(size=len(key))
    first, total, count = cell_totals(key, bound, values)
    codes, uniques = pd.factorize(key)
    assert np.array_equal(first, np.unique(codes, return_index=True)[1])
    assert np.array_equal(total, np.bincount(codes, weights=values))
    assert np.array_equal(count, np.bincount(codes))
