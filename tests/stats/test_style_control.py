"""Style control (stats/style_control.py): length as a confounder, and an independent fit."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from parlai_acute.errors import UserError
from parlai_acute.stats.bradley_terry import fit_counts
from parlai_acute.stats.style_control import fit_style, normalised_differences, reply_style, style_control
from parlai_acute.stats.winrates import win_matrix


def battles(n, strengths, lengths, length_effect, seed, workers=300, tie_share=0.0):
    """Judgments of random pairs; the left reply wins with sigmoid(strength difference + length_effect * z)
    where z is the normalised length difference; a share of ties drawn at random."""
    rng = np.random.default_rng(seed)
    models = list(strengths)
    k = len(models)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    typical = np.array([lengths[m] for m in models], dtype=float)
    la = rng.poisson(typical[a] * rng.lognormal(0, 0.6, n)) + 1  # replies of one model vary in length too
    lb = rng.poisson(typical[b] * rng.lognormal(0, 0.6, n)) + 1
    s = np.array([strengths[m] for m in models])
    d = (la - lb) / (la + lb + 1)
    p = 1 / (1 + np.exp(-(s[a] - s[b] + length_effect * d)))
    left_wins = rng.random(n) < p
    tie = rng.random(n) < tie_share
    names = np.array(models, dtype=object)
    df = pd.DataFrame({"model_left": names[a], "model_right": names[b],
                       "winner": np.where(tie, "", np.where(left_wins, names[a], names[b])),
                       "loser": np.where(tie, "", np.where(left_wins, names[b], names[a])),
                       "outcome": np.where(tie, "tie", "win"),
                       "worker": [f"w{i}" for i in rng.integers(0, workers, n)]})
    return df, pd.DataFrame({"tokens": la}), pd.DataFrame({"tokens": lb})


def gap_excludes_zero(table, column, a, b):
    row = table.set_index("model")
    return (row.loc[a, f"{column}_low"] > row.loc[b, f"{column}_high"]) or \
        (row.loc[b, f"{column}_low"] > row.loc[a, f"{column}_high"])


def test_models_that_differ_only_in_length_are_separated_raw_and_not_controlled():
    lengths = {"short": 20, "medium": 60, "long": 200}
    df, left, right = battles(6000, {m: 0.0 for m in lengths}, lengths, length_effect=3.0, seed=1, tie_share=0.2)
    result = style_control(df, left, right, bootstrap=200, seed=0)
    table = result.ranking.set_index("model")
    assert table.loc["long", "raw"] > table.loc["medium", "raw"] > table.loc["short", "raw"]
    assert gap_excludes_zero(result.ranking, "raw", "long", "short")
    assert all(table.loc[m, "controlled_low"] < 0 < table.loc[m, "controlled_high"] for m in lengths)
    assert not gap_excludes_zero(result.ranking, "controlled", "long", "short")
    coef = result.coefficients.set_index("feature").loc["tokens"]
    assert coef["coefficient_low"] > 0 and "sandwich" in coef["interval"]
    assert "half a win" in result.ties and "Bradley-Terry" in result.model


def test_a_real_difference_survives_the_control():
    lengths = {"a": 50, "b": 50, "c": 150}
    df, left, right = battles(6000, {"a": -0.5, "b": 0.5, "c": 0.0}, lengths, length_effect=2.0, seed=2)
    result = style_control(df, left, right, bootstrap=200, seed=0)
    table = result.ranking.set_index("model")
    assert gap_excludes_zero(result.ranking, "controlled", "b", "a")
    assert table.loc["b", "controlled"] - table.loc["a", "controlled"] == pytest.approx(1.0, abs=0.2)
    # c only wrote longer: its raw advantage over a and b shrinks to nothing once length is held fixed
    assert table.loc["c", "raw_low"] > 0.3
    assert table.loc["c", "controlled_low"] < 0 < table.loc["c", "controlled_high"]
    truth = {"a": -0.5, "b": 0.5, "c": 0.0}
    assert all(table.loc[m, "controlled_low"] < truth[m] < table.loc[m, "controlled_high"] for m in truth)


def test_worker_bootstrap_below_the_sandwich_threshold():
    lengths = {"short": 20, "long": 120, "mid": 60}
    df, left, right = battles(1500, {m: 0.0 for m in lengths}, lengths, length_effect=3.0, seed=3, workers=30)
    result = style_control(df, left, right, bootstrap=100, seed=0)
    assert result.interval.startswith("percentile bootstrap of whole workers (30)")
    assert (result.ranking["controlled_high"] > result.ranking["controlled_low"]).all()
    few = style_control(df.assign(worker="w" + (df.index % 3).astype(str)), left, right, bootstrap=100)
    assert few.ranking["controlled_low"].isna().all() and "only 3 workers" in few.note


def test_raw_fit_is_the_ordinary_bradley_terry_and_the_controlled_fit_matches_statsmodels():
    lengths = {"m0": 30, "m1": 80, "m2": 50, "m3": 120}
    df, left, right = battles(4000, {"m0": 0.0, "m1": 0.4, "m2": -0.3, "m3": 0.1}, lengths, 1.5, seed=4,
                              tie_share=0.2)
    left["bold"] = np.random.default_rng(5).poisson(1, len(df))
    right["bold"] = np.random.default_rng(6).poisson(1, len(df))
    models = sorted(lengths)
    result = style_control(df, left, right, bootstrap=0, alpha=0.0)
    raw = result.ranking.set_index("model").loc[models, "raw"].to_numpy()
    wins, _ = win_matrix(df, models)
    assert np.allclose(raw, fit_counts(wins, alpha=0.0), atol=1e-6)

    # the same design matrix, fitted by statsmodels: model columns +1 left / -1 right (m0 the reference), then z
    z, used, _ = normalised_differences(left, right)
    assert used == ["tokens", "bold"]
    index = {m: i for i, m in enumerate(models)}
    x = np.zeros((len(df), len(models)))
    x[np.arange(len(df)), df["model_left"].map(index)] += 1
    x[np.arange(len(df)), df["model_right"].map(index)] -= 1
    design = np.hstack([x[:, 1:], z])
    y = np.where(df["outcome"] == "tie", 0.5, (df["winner"] == df["model_left"]).astype(float))
    fit = sm.Logit(y, design).fit(disp=0, tol=1e-12)
    ours = result.ranking.set_index("model").loc[models, "controlled"].to_numpy()
    assert np.allclose(ours[1:] - ours[0], fit.params[: len(models) - 1], atol=1e-6)
    assert np.allclose(result.coefficients["coefficient"], fit.params[len(models) - 1:], atol=1e-6)

    # the sandwich over workers against statsmodels' cluster-robust covariance of the same fit
    from scipy import stats

    robust = style_control(df, left, right, bootstrap=1, alpha=0.0)
    groups = pd.factorize(df["worker"])[0]
    assert robust.interval.startswith("cluster-robust (sandwich) over 300 workers")
    clustered = sm.Logit(y, design).fit(disp=0, tol=1e-12, cov_type="cluster", cov_kwds={"groups": groups})
    t = stats.t.ppf(0.975, 299)
    half = (robust.coefficients["coefficient_high"] - robust.coefficients["coefficient_low"]).to_numpy() / 2
    correction = np.sqrt((len(y) - 1) / (len(y) - design.shape[1]))  # statsmodels' small-sample factor beside G/(G-1)
    assert np.allclose(half / t * correction, clustered.bse[len(models) - 1:], rtol=1e-6)


def test_penalised_fit_and_weights():
    lengths = {"a": 40, "b": 90}
    df, left, right = battles(500, {"a": 0.0, "b": 0.2}, lengths, 1.0, seed=7)
    z, _, _ = normalised_differences(left, right)
    first = (df["model_left"] == "b").to_numpy().astype(np.int64)
    second = 1 - first
    y = (df["winner"] == df["model_left"]).to_numpy(float)
    twice = fit_style(np.concatenate([first, first]), np.concatenate([second, second]), np.concatenate([y, y]),
                      np.vstack([z, z]), 2, alpha=0.02)
    weighted = fit_style(first, second, y, z, 2, alpha=0.02, weights=np.full(len(y), 2.0))
    assert np.allclose(twice, weighted, atol=1e-8)  # a weight of 2 is the judgment counted twice


def test_reply_style_counts_markdown_outside_code():
    text = "# Title\n\nSome **bold** and __also__ text.\n\n- one\n- two\n1. three\n```\n# not a header\n- no\n```"
    style = reply_style(text)
    assert style == {"tokens": style["tokens"], "headers": 1, "lists": 3, "bold": 2}
    assert reply_style("Hello, world!")["tokens"] == 4


def test_refusals_in_words():
    lengths = {"a": 40, "b": 90}
    df, left, right = battles(200, {"a": 0.0, "b": 0.0}, lengths, 0.0, seed=8)
    flat = pd.DataFrame({"tokens": np.full(len(df), 10)})
    with pytest.raises(UserError, match="no style feature varies"):
        style_control(df, flat, flat)
    with pytest.raises(UserError, match="one row per judgment"):
        style_control(df, left.head(5), right)
    with pytest.raises(UserError, match="must be a count"):
        style_control(df, left.assign(tokens=-1), right)
