"""Win-rate grid, exact binomial tests, marks after Holm, A/A false-positive rate."""
from math import comb

import numpy as np
import pandas as pd
import pytest

from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.stats.winrates import binomial_pvalue, grid_table, matchups, side_bias, win_matrix, winrate_grid


def judgments(pairs):
    """[(winner, loser, count), ...] -> tidy table."""
    rows = [{"winner": w, "loser": l} for w, l, c in pairs for _ in range(c)]
    return pd.DataFrame(rows)


def two_sided_by_hand(k, n):
    """Two-sided exact p for a fair coin: double the smaller tail (the distribution is symmetric)."""
    tail = min(k, n - k)
    p = 2 * sum(comb(n, i) for i in range(tail + 1)) / 2 ** n
    return min(1.0, p)


def test_binomial_pvalues_match_hand_computation():
    df = judgments([("B", "A", 7), ("A", "B", 3), ("C", "A", 9), ("A", "C", 1), ("C", "B", 5), ("B", "C", 5)])
    table = matchups(df).set_index(["model_a", "model_b"])
    assert table.loc[("A", "B"), "pvalue"] == pytest.approx(352 / 1024)  # 2 * (120 + 45 + 10 + 1) / 2^10
    assert table.loc[("A", "C"), "pvalue"] == pytest.approx(22 / 1024)
    assert table.loc[("B", "C"), "pvalue"] == pytest.approx(1.0)
    for k, n in [(0, 5), (3, 11), (17, 40), (50, 50)]:
        assert binomial_pvalue(k, n) == pytest.approx(two_sided_by_hand(k, n))


def test_grid_orientation_counts_and_marks():
    df = judgments([("B", "A", 45), ("A", "B", 5), ("C", "A", 6), ("A", "C", 4)])
    grid = winrate_grid(df).set_index(["row", "col"])
    # cell (row=A, col=B) = % of A-vs-B judgments won by B
    assert grid.loc[("A", "B"), "winrate"] == pytest.approx(90.0)
    assert grid.loc[("B", "A"), "winrate"] == pytest.approx(10.0)
    assert grid.loc[("A", "B"), "wins"] == 45 and grid.loc[("A", "B"), "n"] == 50
    assert grid.loc[("A", "B"), "mark"] == "**"
    assert grid.loc[("A", "C"), "mark"] == ""
    assert ("B", "C") not in grid.index  # never compared
    # Holm across the two matchups: the smaller p doubled
    p_ab = two_sided_by_hand(5, 50)
    assert grid.loc[("A", "B"), "p_holm"] == pytest.approx(2 * p_ab)
    wide = grid_table(winrate_grid(df), ["A", "B", "C"])
    assert wide.loc["A", "B"] == pytest.approx(90.0) and np.isnan(wide.loc["B", "C"])


def test_marks_use_corrected_pvalues():
    # 18/25: raw p = .043 (*) but with 3 matchups Holm lifts it above .05
    df = judgments([("B", "A", 18), ("A", "B", 7), ("C", "A", 10), ("A", "C", 10), ("C", "B", 10), ("B", "C", 10)])
    row = matchups(df).set_index(["model_a", "model_b"]).loc[("A", "B")]
    assert row["pvalue"] < 0.05 and row["p_holm"] > 0.05 and row["mark"] == ""


def test_win_matrix_counts():
    counts, models = win_matrix(judgments([("B", "A", 3), ("A", "B", 1)]))
    assert models == ["A", "B"] and counts.tolist() == [[0, 1], [3, 0]]


def test_aa_false_positive_rate_stays_at_nominal_level():
    """2,000 simulated A/A experiments (two copies of one model, annotators who prefer the
    left side 80/20, sides randomised): the exact test rejects at most ~5 % of them."""
    experiments, n, alpha = 2000, 100, 0.05
    df = simulate_judgments({"A": 0.0, "A-copy": 0.0}, experiments * n, seed=11, left_bias=np.log(4))
    assert side_bias(df)["left_rate"] == pytest.approx(0.8, abs=0.01)  # the bias is really there
    a_wins = (df["winner"].to_numpy() == "A").reshape(experiments, n).sum(axis=1)
    assert a_wins.mean() / n == pytest.approx(0.5, abs=0.01)
    rejected = np.mean([binomial_pvalue(int(k), n) < alpha for k in a_wins])
    tolerance = 3 * np.sqrt(alpha * (1 - alpha) / experiments)
    assert rejected <= alpha + tolerance
    assert rejected > 0  # the test is not vacuous: it does reject sometimes


def test_position_bias_without_randomisation_is_detected():
    """Control for the test above: if A were always on the left, the same bias would be
    (wrongly) reported as A being better -- randomisation is what protects the grid."""
    df = simulate_judgments({"A": 0.0, "A-copy": 0.0}, 400, seed=3, left_bias=np.log(4))
    a_left = df["model_left"] == "A"
    # in this subset A is always left, so A wins ~80 %
    table = matchups(df[a_left])
    assert table.loc[0, "pvalue"] < 0.01
