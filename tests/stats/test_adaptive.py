"""Adaptive pair selection (parlai_acute.stats.adaptive): fewer judgments for the same answer."""
import numpy as np
import pytest

from parlai_acute.errors import UserError
from parlai_acute.stats.adaptive import contrasts, next_pairs, pair_scores, simulate

STRENGTHS = np.linspace(1.5, -1.5, 8)


def test_adaptive_finds_the_top_three_with_fewer_judgments_and_no_more_errors():
    ad = simulate(STRENGTHS, "top-k", 3, True, runs=16, batch=20, seed=0)
    un = simulate(STRENGTHS, "top-k", 3, False, runs=16, batch=20, seed=0)
    assert ad["resolved_share"] == un["resolved_share"] == 1.0
    assert ad["median"] <= 0.7 * un["median"]
    assert ad["error_rate"] <= un["error_rate"] + 1 / 16


def test_adaptive_full_ranking_is_not_worse_than_uniform():
    ad = simulate(STRENGTHS[:6], "ranking", runs=12, batch=20, seed=1)
    un = simulate(STRENGTHS[:6], "ranking", adaptive=False, runs=12, batch=20, seed=1)
    assert ad["median"] <= un["median"] and ad["error_rate"] <= un["error_rate"] + 1 / 12


def test_scores_go_to_the_pairs_whose_order_is_uncertain():
    # models 0 > 1 >> 2 > 3, with much data on every pair except 1 vs 2 (the top-2 boundary)
    theta = np.array([2.0, 1.0, 0.9, -1.0])
    n = np.full((4, 4), 200.0)
    n[1, 2] = n[2, 1] = 4
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    wins = np.round(n * p) * (1 - np.eye(4))
    scores = pair_scores(wins, "top-k", 2)["scores"]
    assert np.unravel_index(np.argmax(scores), scores.shape) in ((1, 2), (2, 1))
    assert np.allclose(scores, scores.T) and np.all(np.diag(scores) == 0)


def test_next_pairs_randomise_sides_and_say_why():
    rng = np.random.default_rng(0)
    wins = np.array([[0, 8, 9], [2, 0, 5], [1, 5, 0]], float)
    pairs = next_pairs(wins, 400, rng, models=["a", "b", "c"])
    lefts = [p["model_left"] for p in pairs if {p["model_left"], p["model_right"]} == {"b", "c"}]
    assert len(lefts) > 50 and 0.35 < lefts.count("b") / len(lefts) < 0.65
    assert all(p["model_left"] != p["model_right"] and "ranking" in p["reason"] for p in pairs)


def test_contrasts_and_bad_input():
    a, b = contrasts(np.array([0.0, 1.0, 2.0, -1.0]), "top-k", 1)
    assert set(a) == {2} and set(b) == {0, 1, 3}
    with pytest.raises(UserError, match="top-k"):
        contrasts(np.zeros(3), "top-k", 3)
    with pytest.raises(UserError, match="goal"):
        contrasts(np.zeros(3), "best", 1)
    with pytest.raises(UserError, match="square"):
        next_pairs(np.zeros((2, 3)), 1, np.random.default_rng(0))
