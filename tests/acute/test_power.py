"""Sample-size planning for ACUTE-Eval: exact binomial power against scipy, statsmodels and simulation."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import parlai_acute
from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main
from parlai_acute.stats import power as pw


@pytest.mark.parametrize("n,p0", [(1, 0.5), (6, 0.5), (17, 0.5), (40, 0.5), (101, 0.5), (25, 0.3), (60, 0.7)])
def test_rejection_region_is_scipy_binomtest(n, p0):
    expected = [stats.binomtest(k, n, p0).pvalue <= 0.05 for k in range(n + 1)]
    assert pw.rejection_region(n, p0, 0.05).tolist() == expected


def test_fast_curve_equals_definition():
    # power_curve's closed form for p0 = 0.5 against the sum over the rejection region
    curve = pw.power_curve(150, 0.62, alpha=0.05)
    direct = [pw.exact_power(n, 0.62, alpha=0.05) for n in range(151)]
    np.testing.assert_allclose(curve, direct, atol=1e-12)
    curve = pw.power_curve(80, 0.45, alpha=0.01)
    np.testing.assert_allclose(curve, [pw.exact_power(n, 0.45, alpha=0.01) for n in range(81)], atol=1e-12)


@pytest.mark.parametrize("delta", [0.1, 0.15, 0.2])
def test_required_n_exact_is_where_power_stays_above_target(delta):
    res = pw.required_n_exact(0.5 + delta, power=0.8)
    curve = pw.power_curve(res["scanned_to"], 0.5 + delta)
    assert curve[res["n"]] >= 0.8 > curve[res["n"] - 1]
    assert (curve[res["n"]:] >= 0.8).all()
    assert curve[res["n_first"]] >= 0.8 and (curve[:res["n_first"]] < 0.8).all()
    assert res["n_first"] <= res["n"]
    # the exact test needs more than the normal approximation claims, but not wildly more
    assert res["n_normal"] < res["n"] < 1.3 * res["n_normal"]


def test_exact_power_is_not_monotone_in_n():
    res = pw.required_n_exact(0.6)
    curve = pw.power_curve(res["n"], 0.6)
    # the saw-tooth: some n after the first success has less power again
    assert res["n_first"] < res["n"] and (curve[res["n_first"]:res["n"]] < 0.8).any()


def test_normal_approximation_matches_closed_form():
    # n = ((z_{1-alpha/2} + z_power) / h)^2 with Cohen's h = 2 asin sqrt(p1) - 2 asin sqrt(p0)
    for p1, alpha, power in [(0.6, 0.05, 0.8), (0.55, 0.01, 0.9), (0.35, 0.05, 0.8)]:
        h = 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(0.5))
        expected = ((stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)) / h) ** 2
        assert pw.required_n_normal(p1, 0.5, alpha, power) == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize("n,p1", [(54, 0.7), (210, 0.6), (97, 0.35)])
def test_exact_power_agrees_with_simulation(n, p1):
    exact = pw.exact_power(n, p1)
    reps = 20_000
    simulated = pw.simulate_power(n, p1, reps=reps, seed=11)
    se = math.sqrt(exact * (1 - exact) / reps)
    assert abs(simulated - exact) < 4 * se


def test_detectable_delta_inverts_the_power_function():
    for n in (60, 200, 1000):
        d = pw.detectable_delta_exact(n)
        assert pw.exact_power(n, 0.5 + d) == pytest.approx(0.8, abs=1e-6)
        assert pw.exact_power(n, 0.5 + d - 0.005) < 0.8
        dn = pw.detectable_delta_normal(n)
        assert pw.required_n_normal(0.5 + dn) == pytest.approx(n, rel=1e-4)
    assert pw.detectable_delta_exact(100) > pw.detectable_delta_exact(400)


def test_bad_parameters_are_user_errors():
    with pytest.raises(UserError, match="p1=0.5 must be in"):
        pw.required_n_exact(0.5)
    with pytest.raises(UserError, match="alpha"):
        pw.exact_power(10, 0.6, alpha=1.5)
    with pytest.raises(UserError, match="cannot reach power"):
        pw.detectable_delta_exact(5)  # the smallest two-sided p-value at n=5 is 0.0625


def test_cli_table_and_json(tmp_path, capsys):
    out = tmp_path / "power.json"
    assert main(["acute", "power", "--delta", "0.1", "0.2", "--budget", "100", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["parlai_acute_version"] == parlai_acute.__version__
    assert result["config"]["alpha"] == 0.05 and result["config"]["deltas"] == [0.1, 0.2]
    row = result["sample_size"][0]
    assert row["n_exact"] == pw.required_n_exact(0.6)["n"] and f"{row['n_exact']:>8d}" in text
    assert result["detectable"][0]["delta_exact"] == pytest.approx(pw.detectable_delta_exact(100))
    assert main(["acute", "power", "--delta", "0"]) == 2
    assert main(["acute", "power", "--budget", "3"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("error:") == 2


def test_acute_power_from_a_pilot_counts_workers(tmp_path, capsys):
    import json

    from parlai_acute.acute.judgments import write_judgments
    from parlai_acute.scripts.main import main
    from parlai_acute.acute.simulate import simulate_judgments

    pilot = simulate_judgments({"a": 0.0, "b": 0.0}, 400, seed=4, workers=40, worker_sd=1.5)  # 10 each
    write_judgments(tmp_path / "pilot.csv", pilot)
    assert main(["acute", "power", "--delta", "0.1", "--pilot", str(tmp_path / "pilot.csv"), "--json",
                 str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    saved = json.loads((tmp_path / "p.json").read_text())["clustered"]
    assert saved["pilot"]["clusters"] == 40 and saved["per_worker"] == pytest.approx(10.0)
    assert saved["pilot"]["icc"] > 0.1  # worker taste sd 1.5 log-odds
    estimate, upper = saved["plans"]
    assert estimate["design_effect"] == pytest.approx(1 + 9 * saved["pilot"]["icc"])
    assert estimate["judgments"] > 400 * 1.5 and upper["clusters"] >= estimate["clusters"]
    assert "within-worker correlation" in out and "(upper end)" in out
    assert main(["acute", "power", "--delta", "0.45", "--icc", "0", "--judgments-per-worker", "10"]) == 0
    # 0.45 needs a handful of judgments, but the test over workers cannot mark with fewer than 6 workers
    assert "1.000         60        6" in capsys.readouterr().out
