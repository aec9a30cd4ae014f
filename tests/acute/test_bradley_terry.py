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


def _crossed_reference(df, strength, alpha, confidence):
    """The multiway sandwich of the ranking over workers and conversations, cell by cell with
    dictionaries: V_W + V_C - V_WxC - V_P + V_WxP, workers' and conversations' parts times
    G/(G-1), a t on min(workers, conversations per model) - 1 df."""
    from scipy import stats

    models = sorted(strength)
    k, at = len(models), {m: i for i, m in enumerate(models)}
    theta = np.array([strength[m] for m in models])
    wins = np.zeros((k, k))
    parts = {name: {} for name in ("W", "C", "WC", "P", "WP")}
    for row in df.itertuples():
        tie = row.outcome != "win"
        first, second = (row.model_left, row.model_right) if tie else (row.winner, row.loser)
        score = 0.5 if tie else 1.0
        wins[at[first], at[second]] += score
        wins[at[second], at[first]] += 1 - score
        conv = {row.model_left: (row.model_left, row.dialogue_left), row.model_right: (row.model_right, row.dialogue_right)}
        cf, cs = conv[first], conv[second]
        v = np.zeros(k)
        v[at[first]], v[at[second]] = 1.0, -1.0
        v *= score - 1 / (1 + np.exp(theta[at[second]] - theta[at[first]]))
        pair = frozenset([cf, cs])
        keys = {"W": [row.worker], "C": [cf, cs], "WC": [(row.worker, cf), (row.worker, cs)], "P": [pair],
                "WP": [(row.worker, pair)]}
        for name, cells in keys.items():
            for cell in cells:
                parts[name][cell] = parts[name].get(cell, 0) + v

    def outer(name, correct=False):
        g = len(parts[name])
        total = sum(np.outer(t, t) for t in parts[name].values())
        return total * g / (g - 1) if correct else total

    meat = outer("W", True) + outer("C", True) - outer("WC") - outer("P") + outer("WP")
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    weight = (wins + wins.T) * p * (1 - p)
    info = np.diag(weight.sum(axis=1)) - weight + 2 * alpha * np.eye(k)
    bread = (np.eye(k) - 1 / k) @ np.linalg.pinv(info)
    var = np.diag(bread @ meat @ bread.T)
    if (var <= 0).any():
        var = np.diag(bread @ outer("W", True) @ bread.T)
    per_model = min(sum(1 for c in parts["C"] if c[0] == m) for m in models)
    t = stats.t.ppf(0.5 + confidence / 2, min(len(parts["W"]), per_model) - 1)
    return dict(zip(models, theta - t * np.sqrt(var))), dict(zip(models, theta + t * np.sqrt(var)))


@pytest.mark.parametrize("small_buffers", [False, True])
def test_crossed_sandwich_equals_the_cell_by_cell_computation(monkeypatch, small_buffers):
    """The coded, vectorised multiway meat (one-judgment cells as their own outer product, the
    shared cells found by a bucket filter) is the cell-by-cell sum; with tiny buffers every
    part goes the sparse and the hashed way."""
    import parlai_acute.stats.bradley_terry as bt

    if small_buffers:
        monkeypatch.setattr(bt, "_DENSE_CELLS", 0)
        monkeypatch.setattr(bt, "_BUCKETS", 7)
    df = simulate_judgments({"a": 0.0, "b": 0.4, "c": 0.8, "d": 0.2}, 900, seed=3, workers=30,
                            dialogues_per_model=6, worker_sd=0.5, tie=0.4)
    pair = [frozenset([(r.model_left, r.dialogue_left), (r.model_right, r.dialogue_right)]) for r in df.itertuples()]
    assert (df["outcome"] != "win").any() and pd.Series(list(zip(df["worker"], pair))).duplicated().any()
    table = bradley_terry(df, bootstrap=200, seed=0, cluster="worker", conversations=("dialogue_left", "dialogue_right"))
    assert (table["interval"] == bt.SANDWICH_CROSSED).all()
    low, high = _crossed_reference(df, dict(zip(table["model"], table["strength"])), bt.DEFAULT_ALPHA, 0.95)
    assert table["ci_low"].to_numpy() == pytest.approx(table["model"].map(low).to_numpy(), abs=1e-10, rel=0)
    assert table["ci_high"].to_numpy() == pytest.approx(table["model"].map(high).to_numpy(), abs=1e-10, rel=0)
