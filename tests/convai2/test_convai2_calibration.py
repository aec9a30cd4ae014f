"""Calibration of annotator bias: closed form vs dense ridge and Gibbs, and the seeded simulation."""
import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from parlai_acute.convai2.analysis import ConvAI2Config, analyze
from parlai_acute.convai2.simulate import simulate_ratings
from parlai_acute.stats.calibration import calibrate, estimate_variances, gibbs

QUALITY = {"best": 3.0, "good": 2.7, "fair": 2.4, "poor": 2.0}


def small_problem(seed=0, n=400, m=4, a=30, sigma_b=1.0):
    rng = np.random.default_rng(seed)
    model, ann = rng.integers(0, m, n), rng.integers(0, a, n)
    y = np.linspace(2, 3, m)[model] + rng.normal(0, sigma_b, a)[ann] + rng.normal(0, 1, n)
    return y, model, ann


@pytest.mark.parametrize("sigma_b,sigma_e", [(1.0, 1.0), (0.5, 0.8)])
def test_closed_form_is_the_ridge_solution_and_its_inverse(sigma_b, sigma_e):
    y, model, ann = small_problem()
    m, a = 4, 30
    x = np.zeros((len(y), m + a))
    x[np.arange(len(y)), model] = 1
    x[np.arange(len(y)), m + ann] = 1
    penalty = np.diag([0.0] * m + [sigma_e ** 2 / sigma_b ** 2] * a)
    precision = x.T @ x + penalty
    theta = np.linalg.solve(precision, x.T @ y)
    cal = calibrate(y, model, ann, sigma_b, sigma_e)
    assert cal.quality == pytest.approx(theta[:m], abs=1e-10)
    assert cal.bias == pytest.approx(theta[m:], abs=1e-10)
    assert cal.quality_sd == pytest.approx(np.sqrt(np.diag(sigma_e ** 2 * np.linalg.inv(precision))[:m]), abs=1e-10)


def test_gibbs_sampler_agrees_in_the_long_run():
    y, model, ann = small_problem(seed=1)
    cal = calibrate(y, model, ann)
    draws = gibbs(y, model, ann, iterations=3000, burn_in=500, chains=16, seed=3)
    assert np.abs(draws["quality"] - cal.quality).max() < 0.02
    assert np.abs(draws["quality_sd"] - cal.quality_sd).max() < 0.02


def test_reml_variances_match_statsmodels_called_directly():
    y, model, ann = small_problem(seed=2, n=1500, a=60, sigma_b=0.7)
    sigma_b, sigma_e = estimate_variances(y, model, ann)
    exog = np.eye(4)[model]
    fit = sm.MixedLM(y, exog, groups=ann).fit(reml=True)
    assert sigma_e == pytest.approx(np.sqrt(fit.scale), rel=1e-3)
    assert sigma_b == pytest.approx(np.sqrt(fit.cov_re[0, 0]), rel=1e-2)
    assert 0.4 < sigma_b < 1.0 and 0.85 < sigma_e < 1.15


def test_calibration_recovers_the_order_when_harsh_workers_rate_the_best_model():
    recovered = raw_right = 0
    for seed in range(10):
        df = simulate_ratings(QUALITY, annotators=80, per_annotator=8, harsh_on_best=True, seed=seed)
        res = analyze(df, ConvAI2Config(bootstrap=0))
        raw = list(res.likert.sort_values("mean", ascending=False)["model"])
        calibrated = list(res.likert.sort_values("calibrated", ascending=False)["model"])
        recovered += calibrated == list(QUALITY)
        raw_right += raw == list(QUALITY)
    assert recovered >= 8 and raw_right <= 1


def test_likert_means_intervals_and_persona_rates():
    df = simulate_ratings(QUALITY, annotators=40, per_annotator=5, persona_rate={m: 0.8 for m in QUALITY}, seed=4,
                          rounded=True)
    res = analyze(df, ConvAI2Config(bootstrap=200, seed=1))
    for row in res.likert.itertuples():
        scores = df.loc[df["model"] == row.model, "score"]
        assert row.mean == pytest.approx(scores.mean())
        low, high = stats.t.interval(0.95, len(scores) - 1, loc=scores.mean(), scale=stats.sem(scores))
        assert (row.t_low, row.t_high) == pytest.approx((low, high))
        assert row.boot_low < row.mean < row.boot_high
        assert row.calibrated_low < row.calibrated < row.calibrated_high
    for row in res.persona.itertuples():
        mine = df[df["model"] == row.model]
        k, n = int(mine["persona_choice_correct"].sum()), len(mine)
        ci = stats.binomtest(k, n).proportion_ci(method="exact")
        assert (row.correct, row.dialogues) == (k, n)
        assert (row.ci_low, row.ci_high) == pytest.approx((ci.low, ci.high))
