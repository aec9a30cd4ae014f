"""Intervals that do not overstate: separation and small counts, exact win-rate intervals,
worker clustering, agreement intervals, strict JSON and the --bt-alpha option."""
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from parlai_acute.acute.analysis import AnalysisConfig, analyze, write_outputs
from parlai_acute.acute.judgments import write_judgments
from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main
from parlai_acute.stats.agreement import agreement, alpha_interval, label_counts, nominal_alpha_weighted
from parlai_acute.stats.bradley_terry import (BOOTSTRAP, PROFILE, bradley_terry, fit_counts, profile_loglik,
                                              penalised_loglik, separated)
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.stats.intervals import clopper_pearson, exact_intervals
from parlai_acute.stats.winrates import grid_from_matchups, matchups


def wins_table(winner, loser, count, workers=("w1",)):
    return pd.DataFrame({"winner": [winner] * count, "loser": [loser] * count,
                         "worker": [workers[i % len(workers)] for i in range(count)]})


def strict(text):
    def reject(constant):
        raise ValueError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=reject)


# ---------------------------------------------------------------- Bradley-Terry

@pytest.mark.parametrize("count", [6, 3, 1])
def test_separated_or_tiny_data_never_give_a_zero_width_or_overconfident_interval(count):
    table = bradley_terry(wins_table("smol", "generic", count, ("w1", "w2")), bootstrap=200).set_index("model")
    for model in ("smol", "generic"):
        row = table.loc[model]
        assert row["interval"] == PROFILE
        # the demo printed +2.408 [+2.408, +2.408]; a profile bound said 3 of 3 (exact p = 0.25) excluded zero
        assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert "never lost in" in table.loc["smol", "note"] and "no interval can be given" in table.loc["smol", "note"]
    assert "never won in" in table.loc["generic", "note"]


def test_small_but_not_separated_data_get_a_wide_profile_interval():
    df = pd.concat([wins_table("smol", "generic", 5), wins_table("generic", "smol", 1)])
    table = bradley_terry(df, bootstrap=200).set_index("model")
    row = table.loc["smol"]
    assert row["interval"] == PROFILE and row["ci_low"] < 0 < row["strength"] < row["ci_high"]  # 5 of 6: p = 0.22


def test_profile_bounds_are_where_the_penalised_likelihood_drops_by_the_chi2_quantile():
    df = pd.concat([wins_table("a", "b", 6), wins_table("b", "c", 3), wins_table("c", "b", 1)])
    table = bradley_terry(df, bootstrap=100, confidence=0.9)
    assert set(table["interval"]) == {PROFILE}
    from parlai_acute.stats.winrates import win_matrix
    wins, models = win_matrix(df)
    top = penalised_loglik(wins, fit_counts(wins), 0.01)
    assert np.isnan(table.set_index("model").loc["a", "ci_low"])  # a never lost: no interval
    for row in table.itertuples():
        if row.model == "a":
            continue
        i = models.index(row.model)
        for bound in (row.ci_low, row.ci_high):
            assert 2 * (top - profile_loglik(wins, i, bound, 0.01)) == pytest.approx(stats.chi2.ppf(0.9, 1), abs=1e-4)


def test_profile_and_bootstrap_agree_on_plenty_of_data():
    df = simulate_judgments({"a": 0.0, "b": 0.4, "c": -0.3}, 3000, seed=3)
    boot = bradley_terry(df, bootstrap=400, seed=1)
    assert set(boot["interval"]) == {BOOTSTRAP}
    prof = bradley_terry(df, bootstrap=400, seed=1, min_judgments=10 ** 9)  # forced: "small" data
    assert set(prof["interval"]) == {PROFILE}
    assert prof["ci_low"].to_numpy() == pytest.approx(boot["ci_low"].to_numpy(), abs=0.03)
    assert prof["ci_high"].to_numpy() == pytest.approx(boot["ci_high"].to_numpy(), abs=0.03)


def test_separation_is_detected_for_groups_too():
    assert separated(np.array([[0, 3], [0, 0]]))
    assert not separated(np.array([[0, 3], [1, 0]]))
    # a and b beat each other, and both always beat c
    assert separated(np.array([[0, 2, 1], [1, 0, 1], [0, 0, 0]]))
    with pytest.raises(UserError, match=r"a penalty greater than 0 \(bt_alpha\)"):
        bradley_terry(wins_table("a", "b", 4), alpha=0.0)


def test_worker_resampling_widens_intervals_when_workers_disagree_systematically():
    """Each worker always picks their favourite: judgments are far from independent."""
    rng = np.random.default_rng(0)
    rows = []
    for w in range(12):
        favourite = "a" if w < 7 else "b"
        for _ in range(25):
            rows.append({"winner": favourite, "loser": "b" if favourite == "a" else "a", "worker": f"w{w}"})
    df = pd.DataFrame(rows).sample(frac=1, random_state=int(rng.integers(1000)))
    table = bradley_terry(df, bootstrap=500, cluster="worker").set_index("model")
    row = table.loc["a"]
    assert row["workers"] == 12 and row["interval"] == "percentile bootstrap of whole workers"
    assert row["ci_high"] - row["ci_low"] > 2 * (row["ci_high_judgments"] - row["ci_low_judgments"])
    m = matchups(df, cluster="worker").iloc[0]
    assert m["ci_high"] - m["ci_low"] > 2 * (m["ci_high_exact"] - m["ci_low_exact"])
    assert m["pvalue_exact"] < 0.05 < m["pvalue"] and m["mark"] == ""  # 7 workers against 5 is no evidence


# ---------------------------------------------------------------- win rates and workers

def test_every_win_rate_has_a_clopper_pearson_interval():
    assert clopper_pearson(6, 6) == pytest.approx((0.5407, 1.0), abs=1e-4)
    k, n = np.array([0, 3, 6, 17, 0]), np.array([6, 6, 6, 40, 0])
    low, high = exact_intervals(k, n, 0.9)  # vectorised: the 1M-judgment analysis makes no per-matchup calls
    for i in range(4):
        assert (low[i], high[i]) == pytest.approx(clopper_pearson(int(k[i]), int(n[i]), 0.9), abs=1e-12)
    assert np.isnan(low[4]) and np.isnan(high[4])
    df = pd.concat([wins_table("b", "a", 6, ("w1", "w2")), wins_table("a", "b", 2, ("w3",))])
    table = matchups(df, cluster="worker", min_clusters=5)
    m = table.iloc[0]
    ci = stats.binomtest(6, 8).proportion_ci(0.95, method="exact")
    assert (m["model_a"], m["model_b"], m["wins_b"]) == ("a", "b", 6)
    assert (m["ci_low_exact"], m["ci_high_exact"]) == pytest.approx((ci.low, ci.high))
    assert m["workers"] == 3 and m["few_workers"] and np.isnan(m["ci_low"]) and "only 3 workers" in m["reason"]
    grid = grid_from_matchups(table).set_index(["row", "col"])
    assert grid.loc[("a", "b"), "ci_low_exact"] == pytest.approx(ci.low)  # b won: interval of b's rate
    assert grid.loc[("b", "a"), "ci_high_exact"] == pytest.approx(1 - ci.low)  # a's rate: mirrored
    assert grid.loc[("b", "a"), "workers"] == 3


def test_worker_interval_is_none_rather_than_zero_width():
    one_worker = matchups(wins_table("b", "a", 6, ("w1",)), cluster="worker").iloc[0]
    unanimous = matchups(wins_table("b", "a", 6, ("w1", "w2", "w3")), cluster="worker").iloc[0]
    many = matchups(wins_table("b", "a", 16, tuple(f"w{k}" for k in range(8))), cluster="worker").iloc[0]
    for m in (one_worker, unanimous, many):
        assert np.isnan(m["ci_low"]) and np.isnan(m["ci_high"]) and m["reason"]
        assert m["ci_high_exact"] - m["ci_low_exact"] > 0.15  # the exact interval is still there
    assert "same mean difference" in many["reason"] and many["mark"] == "**"  # 8 of 8 workers: p = 2/256


# ---------------------------------------------------------------- agreement

def test_alpha_bootstrap_formula_equals_the_krippendorff_package_on_resampled_items():
    import krippendorff

    rng = np.random.default_rng(1)
    counts = rng.integers(0, 4, size=(40, 2))
    counts = counts[counts.sum(axis=1) >= 2]
    weights = rng.integers(0, 3, size=len(counts))
    repeated = np.repeat(counts, weights, axis=0)
    ours = nominal_alpha_weighted(counts, weights[None].astype(float))[0]
    assert ours == pytest.approx(krippendorff.alpha(value_counts=repeated, level_of_measurement="nominal"))


def test_alpha_has_a_bootstrap_interval_and_no_repeats_are_said_in_words():
    df = simulate_judgments({"a": 0.0, "b": 1.0}, 400, seed=2, dialogues_per_model=4)
    summary = agreement(df, resamples=300, seed=0)
    assert summary["items"] > 5 and summary["note"] == ""
    assert summary["alpha_ci_low"] < summary["krippendorff_alpha"] < summary["alpha_ci_high"]
    low, high = alpha_interval(label_counts(df), 300, seed=0)
    assert (low, high) == (summary["alpha_ci_low"], summary["alpha_ci_high"])
    once = simulate_judgments({"a": 0.0, "b": 1.0}, 3, seed=2, dialogues_per_model=1000)
    summary = agreement(once)
    assert summary["items"] == 0 and "no item" in summary["note"] and "judged more than once" in summary["note"]


# ---------------------------------------------------------------- outputs and command line

def test_every_json_output_is_strict_json_and_the_report_says_no_agreement_in_words(tmp_path):
    df = simulate_judgments({"a": 0.0, "b": 3.0}, 6, seed=1, workers=2, dialogues_per_model=1000)
    result = analyze(df, AnalysisConfig(bootstrap=50, max_per_worker=10))
    paths = write_outputs(result, tmp_path)
    for path in tmp_path.rglob("*.json"):
        strict(path.read_text(encoding="utf-8"))
    data = strict(paths["agreement.json"].read_text(encoding="utf-8"))["questions"][0]
    assert data["percent_agreement"] is None and data["krippendorff_alpha"] is None and "no item" in data["note"]
    page = paths["report.html"].read_text(encoding="utf-8")
    assert "No item (pair of conversations, question) was judged more than once" in page
    assert "from only 2 workers (fewer than 5)" in page


def test_cli_bt_alpha_is_used_and_recorded_and_few_workers_are_warned(tmp_path, capsys):
    df = simulate_judgments({"smol": 5.0, "generic": -5.0}, 6, seed=1, workers=2)
    write_judgments(tmp_path / "j.csv", df)
    outs = {}
    for alpha in ("0.01", "0.5"):
        code = main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "--outdir", str(tmp_path / alpha),
                     "--bootstrap", "50", "--bt-alpha", alpha, "--max-per-worker", "10"])
        outs[alpha] = capsys.readouterr().out
        assert code == 0
        run = strict((tmp_path / alpha / "run.json").read_text())
        assert run["config"]["bt_alpha"] == float(alpha)
    assert "1. smol +2.408 (no interval) (no interval) (never lost in 6 judgments: no interval can be given" \
        in outs["0.01"]
    assert "1. smol +2.408" not in outs["0.5"]  # a stronger penalty shrinks the strengths
    assert "smol vs generic: 100.0% (6/6) (no interval) p=n/a 2 workers (FEW); (exact [54.0%, 100.0%]" in outs["0.01"]
    assert "only 2 workers: the sign-flip test cannot reach p < 0.05 with fewer than 5" in outs["0.01"]
    assert "marks: * p < 0.05" in outs["0.01"] and "methods: We analysed 6 pairwise ACUTE-Eval judgments" in outs["0.01"]
    assert "We analysed 6 pairwise" in (tmp_path / "0.01" / "report_methods.txt").read_text()
    assert "WARNING: smol vs generic: 6 judgments from only 2 workers" in outs["0.01"]
    code = main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "--outdir", str(tmp_path / "x"),
                 "--bt-alpha", "-1"])
    assert code == 2 and "--bt-alpha must be 0 or more" in capsys.readouterr().err


def test_resample_weights_are_draws_with_replacement():
    from parlai_acute.stats.resample import cluster_sums, resample_weights

    weights = resample_weights(7, 4000, np.random.default_rng(0))
    assert weights.shape == (4000, 7) and (weights.sum(axis=1) == 7).all()
    assert weights.mean() == pytest.approx(1.0, abs=0.02)
    assert weights[:, 0].var() == pytest.approx(7 * (1 / 7) * (6 / 7), rel=0.1)  # binomial(7, 1/7)
    sums = cluster_sums(weights[:3], np.array([0, 0, 6]), np.array([0, 1, 1]), np.array([1.0, 2.0, 5.0]), 2)
    assert sums.tolist() == [[w[0], 2 * w[0] + 5 * w[6]] for w in weights[:3].tolist()]
