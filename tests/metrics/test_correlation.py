"""Correlations against scipy, system-level means, and Meena's perplexity fit."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from parlai_acute.errors import UserError
from parlai_acute.metrics import correlation


@pytest.fixture()
def ratings():
    rng = np.random.default_rng(0)
    n = 60
    quality = rng.normal(size=n)
    return pd.DataFrame({"model": [f"m{k % 4}" for k in range(n)], "rating": quality + rng.normal(0, 0.5, n),
                         "good_single": quality + rng.normal(0, 1, n), "noise_single": rng.normal(size=n)})


def test_response_level_equals_scipy_with_intervals(ratings):
    got = correlation.response_level(ratings, ["good_single", "noise_single"], resamples=500, seed=1).set_index("metric")
    for column in ("good_single", "noise_single"):
        assert got.loc[column, "pearson"] == pytest.approx(stats.pearsonr(ratings[column], ratings["rating"]).statistic)
        assert got.loc[column, "spearman"] == pytest.approx(stats.spearmanr(ratings[column], ratings["rating"]).statistic)
        assert got.loc[column, "pearson_low"] < got.loc[column, "pearson"] < got.loc[column, "pearson_high"]
        assert got.loc[column, "spearman_low"] < got.loc[column, "spearman"] < got.loc[column, "spearman_high"]
    assert got.loc["good_single", "pearson_low"] > 0.2
    assert got.loc["noise_single", "pearson_low"] < 0 < got.loc["noise_single", "pearson_high"]


def test_system_level_uses_model_means(ratings):
    got = correlation.system_level(ratings, ["good_single"], resamples=300, seed=1).iloc[0]
    means = ratings.groupby("model")[["good_single", "rating"]].mean()
    assert got["n"] == 4
    assert got["pearson"] == pytest.approx(stats.pearsonr(means["good_single"], means["rating"]).statistic)
    assert got["pearson_low"] < got["pearson_high"]  # few systems: a wide interval, never a zero-width one
    # the interval is over the 4 systems (Fisher z, se 1/sqrt(k - 3)), not over responses within them
    z = stats.norm.ppf(0.975)
    assert got["pearson_low"] == pytest.approx(np.tanh(np.arctanh(got["pearson"]) - z))
    assert got["pearson_high"] == pytest.approx(np.tanh(np.arctanh(got["pearson"]) + z))
    assert got["pearson_within_low"] < got["pearson_within_high"]  # the old interval, kept as secondary
    two = correlation.system_level(ratings[ratings["model"].isin(["m0", "m1"])], ["good_single"], resamples=50)
    assert np.isnan(two.loc[0, "pearson"])


def test_gupta_table_shape(ratings):
    frame = correlation.response_level(ratings.assign(good_multi=ratings["good_single"]),
                                       ["good_single", "good_multi"], resamples=50)
    table = correlation.gupta_table(frame, ["good"])
    assert list(table.columns[:6]) == ["metric", "spearman_single", "spearman_single_low", "spearman_single_high",
                                      "spearman_single_p", "pearson_single"]  # the p-value beside its interval
    assert table.loc[0, "spearman_single"] == table.loc[0, "spearman_multi"]


def test_perplexity_vs_human_is_scipys_linear_fit():
    table = pd.DataFrame({"model": list("abcde"), "perplexity": [10.0, 12.0, 15.0, 20.0, 30.0],
                          "ssa": [0.72, 0.70, 0.61, 0.55, 0.40]})
    got = correlation.perplexity_vs_human(table, scores=["ssa"]).iloc[0]
    fit = stats.linregress(table["perplexity"], table["ssa"])
    assert got["r_squared"] == pytest.approx(fit.rvalue ** 2) and got["slope"] == pytest.approx(fit.slope)
    assert got["r_low"] < got["r"] < got["r_high"] and got["r"] < 0
    with pytest.raises(UserError, match="too few"):
        correlation.perplexity_vs_human(table.head(2), scores=["ssa"])
    with pytest.raises(UserError, match="missing column 'win_rate'"):
        correlation.perplexity_vs_human(table, scores=["win_rate"])


def test_three_systems_get_no_interval_and_are_told_why(ratings):
    """`metrics correlate` with 3 systems printed +1.00 [+1.00, +1.00]: no interval over systems exists."""
    three = ratings[ratings["model"] != "m3"].copy()
    three["good_single"] = three["model"].map({"m0": 1.0, "m1": 2.0, "m2": 3.0}) + 0.01 * three["rating"]
    three["rating"] = three["model"].map({"m0": 1.0, "m1": 2.0, "m2": 3.0}) + 0.01 * three["rating"]
    got = correlation.system_level(three, ["good_single"], resamples=200, seed=1).iloc[0]
    assert got["spearman"] == pytest.approx(1.0)
    assert np.isnan(got["spearman_low"]) and np.isnan(got["spearman_high"])
    assert "3 systems are too few for an interval over systems" in got["spearman_note"]
    assert np.isnan(got["spearman_within_low"])  # every resample orders them the same: no zero-width interval
    low, high, note = correlation.fisher_z_interval(1.0, 6, 0.95, spearman=True)
    assert np.isnan(low) and "perfect correlation" in note
