"""stats/paired.py against scipy/statsmodels called directly, and the cluster bootstrap
against a plain loop over resampled dialogues."""
import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q, mcnemar

from parlai_acute.stats import paired
from parlai_acute.stats.intervals import clopper_pearson, percentile_interval
from parlai_acute.stats.resample import cluster_bootstrap, cluster_totals


def test_paired_counts_and_mcnemar():
    a = np.array([1, 1, 1, 0, 0, 1, 1, 0, 1, 1], bool)
    b = np.array([1, 0, 0, 0, 1, 0, 0, 0, 0, 1], bool)
    counts = paired.paired_counts(a, b)
    assert counts == {"both": 2, "a_only": 5, "b_only": 1, "neither": 2}
    expected = mcnemar([[2, 5], [1, 2]], exact=True).pvalue
    assert paired.mcnemar_exact(counts) == pytest.approx(expected)
    assert paired.mcnemar_exact(counts) == pytest.approx(stats.binomtest(1, 6).pvalue)
    assert paired.mcnemar_exact({"both": 3, "a_only": 0, "b_only": 0, "neither": 2}) == 1.0


def test_cochran_chisquare_clopper_fisher_z():
    x = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 0, 0], [0, 1, 0], [1, 1, 1], [1, 0, 0]])
    res = paired.cochran_q(x)
    ref = cochrans_q(x)
    assert res["statistic"] == pytest.approx(ref.statistic) and res["pvalue"] == pytest.approx(ref.pvalue)
    assert res["df"] == 2
    assert np.isnan(paired.cochran_q(np.ones((4, 3)))["pvalue"])  # no turn separates the models
    res = paired.chisquare_uniform([30, 20, 25, 45])
    assert res["pvalue"] == pytest.approx(stats.chisquare([30, 20, 25, 45]).pvalue) and res["df"] == 3
    low, high = clopper_pearson(7, 20, 0.9)
    assert (low, high) == pytest.approx(tuple(stats.binomtest(7, 20).proportion_ci(0.9, method="exact")))
    assert 0 < low < 0.35 < high < 1
    assert np.isnan(clopper_pearson(0, 0)[0])
    assert paired.fisher_exact(8, 10, 2, 10) == pytest.approx(stats.fisher_exact([[8, 2], [2, 8]]).pvalue)
    from statsmodels.stats.proportion import proportions_ztest
    assert paired.two_proportion_z(30, 50, 20, 50) == pytest.approx(proportions_ztest([30, 20], [50, 50])[1])


def test_cluster_bootstrap_equals_a_loop_over_resampled_dialogues():
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(7), [3, 5, 1, 4, 2, 6, 3])
    values = rng.random((len(clusters), 2)) < 0.5
    sums, counts = cluster_totals(values, clusters)
    assert sums.sum(axis=0) == pytest.approx(values.sum(axis=0)) and counts.sum() == len(clusters)
    boot = cluster_bootstrap(sums, counts, 50, np.random.default_rng(11), chunk=20)
    replay = np.random.default_rng(11)
    expected = []
    for size in (20, 20, 10):
        for draw in replay.integers(0, 7, size=(size, 7)):
            rows = np.concatenate([np.flatnonzero(clusters == g) for g in draw])
            expected.append(values[rows].mean(axis=0))
    assert boot == pytest.approx(np.array(expected))


def test_percentile_interval_has_one_rule_for_no_width():
    samples = np.arange(1, 101, dtype=float)[:, None]
    low, high = percentile_interval(samples, 0.9)
    assert low[0] == pytest.approx(np.percentile(samples, 5)) and high[0] == pytest.approx(np.percentile(samples, 95))
    # every resample the same value, or most undefined: no interval rather than a point
    low, high = percentile_interval(np.column_stack([np.full(100, 0.3), np.r_[np.full(20, np.nan), samples[20:, 0]]]), 0.9)
    assert np.isnan(low).all() and np.isnan(high).all()
