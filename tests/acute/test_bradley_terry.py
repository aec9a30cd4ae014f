"""Bradley-Terry fit against choix, bootstrap behaviour, recovery of known strengths."""
import choix
import numpy as np
import pandas as pd
import pytest

from parlai_acute.errors import UserError
from parlai_acute.stats.bradley_terry import bootstrap_counts, bradley_terry, fit_counts
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.stats.winrates import win_matrix


def choix_data(wins):
    return [(i, j) for i in range(len(wins)) for j in range(len(wins)) for _ in range(int(wins[i, j]))]


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.5])
def test_fit_matches_choix(alpha):
    rng = np.random.default_rng(5)
    wins = rng.integers(1, 30, size=(5, 5))
    np.fill_diagonal(wins, 0)
    ours = fit_counts(wins, alpha=alpha)
    theirs = choix.opt_pairwise(5, choix_data(wins), alpha=alpha)
    theirs = theirs - theirs.mean()
    assert ours == pytest.approx(theirs, abs=1e-5)


def test_degenerate_model_that_always_wins_stays_finite_and_matches_choix():
    wins = np.array([[0, 5, 3], [0, 0, 2], [0, 1, 0]])
    ours = fit_counts(wins, alpha=0.01)
    assert np.all(np.isfinite(ours)) and ours[0] > ours[1] > ours[2]
    assert ours == pytest.approx(choix.opt_pairwise(3, choix_data(wins), alpha=0.01), abs=1e-5)


def test_batched_fit_equals_one_by_one_fits():
    rng = np.random.default_rng(2)
    batch = rng.integers(0, 20, size=(4, 3, 3))
    for b in batch:
        np.fill_diagonal(b, 0)
    together = fit_counts(batch)
    for b, row in zip(batch, together):
        assert row == pytest.approx(fit_counts(b), abs=1e-8)


def test_bootstrap_counts_resample_judgments():
    wins = np.array([[0, 30], [10, 0]])
    draws = bootstrap_counts(wins, 2000, np.random.default_rng(0))
    assert (draws.sum(axis=(1, 2)) == 40).all()
    assert (draws[:, 0, 0] == 0).all()  # empty cells stay empty
    assert draws[:, 0, 1].mean() == pytest.approx(30, abs=0.3)
    assert draws[:, 0, 1].std() == pytest.approx(np.sqrt(40 * 0.75 * 0.25), rel=0.1)  # multinomial spread


def test_ranking_recovers_known_strengths_with_intervals():
    truth = {"weak": -0.8, "mid": 0.0, "strong": 0.8}
    df = simulate_judgments(truth, 6000, seed=1)
    table = bradley_terry(df, bootstrap=300, seed=0).set_index("model")
    assert list(table.sort_values("rank").index) == ["strong", "mid", "weak"]
    for model, theta in truth.items():
        row = table.loc[model]
        assert row["ci_low"] <= row["strength"] <= row["ci_high"]
        assert row["ci_low"] - 0.05 <= theta <= row["ci_high"] + 0.05
    assert table["strength"].sum() == pytest.approx(0, abs=1e-9)
    assert table["n"].sum() == 12000  # every judgment counts for both of its models


def test_bootstrap_is_seeded():
    df = simulate_judgments({"a": 0, "b": 0.3, "c": 0.5}, 500, seed=4)
    first = bradley_terry(df, bootstrap=200, seed=7)
    assert first.equals(bradley_terry(df, bootstrap=200, seed=7))
    other = bradley_terry(df, bootstrap=200, seed=8)
    assert not np.allclose(first["ci_low"], other["ci_low"])
    assert first["strength"].tolist() == pytest.approx(other["strength"].tolist())


def test_disconnected_models_raise_user_error():
    df = pd.DataFrame({"winner": ["a", "b", "c", "d"], "loser": ["b", "a", "d", "c"]})
    with pytest.raises(UserError, match="never compared"):
        bradley_terry(df, bootstrap=10)
    counts, _ = win_matrix(df)
    assert counts.sum() == 4


def test_unpenalised_fit_without_maximum_warns():
    wins = np.array([[0, 5], [0, 0]])  # b never wins: the likelihood has no maximum
    with pytest.warns(RuntimeWarning, match="did not converge"):
        fit_counts(wins, alpha=0.0, max_iter=30)
