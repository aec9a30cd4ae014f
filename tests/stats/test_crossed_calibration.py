"""Verdicts that generalise over every sampled facet (issue 23): seeded A/A studies of the
crossed and nested designs, thousands at once (:mod:`parlai_acute.stats.crossed_designs`,
the same functions as the ``crossed_calibration`` benchmark), and the analyses reading the
design from the table.

The mark must fire 5 +/- 2 % of the time when the models are equal and its interval cover the
true value 93-97 % of the time, where the test over one facet fires 19-26 % (ACUTE: workers
only, conversations reused; per-turn: dialogues, workers repeating). 2,000 studies at 8 and
20 levels (standard error 0.5 points), 1,000 at 60.
"""
import numpy as np
import pandas as pd
import pytest

from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.stats.crossed_designs import calibrate
from parlai_acute.stats.inference import min_clusters, multiway_tests
from parlai_acute.stats.winrates import design_note, matchups


@pytest.mark.parametrize("design", ["acute-pool", "acute-recombined", "per-turn-nested"])
@pytest.mark.parametrize("size", [8, 20, 60])
def test_the_mark_holds_its_level_and_its_interval_covers(design, size):
    result = calibrate(design, size, 0.3, 2000 if size < 60 else 1000, seed=size)
    names = list(result)
    mark, one_facet = result[names[0]], result[names[-2]]
    assert names[0].startswith("mark")
    assert 0.03 <= mark["null"] <= 0.07, mark
    assert 0.93 <= mark["coverage"] <= 0.97 and 0.93 <= mark["coverage_at_effect"] <= 0.97, mark
    assert one_facet["null"] > 0.15, one_facet  # what the one-facet test did on the same studies
    reference = result["reference: Wald with the true sd"]
    assert mark["power"] >= reference["power"] - 0.05, (mark, reference)  # the price of not knowing the design


def test_a_strong_effect_is_found_from_twenty_levels():
    for design in ("acute-pool", "per-turn-nested"):
        mark = next(iter(calibrate(design, 20, 0.8, 1000, seed=3).values()))
        assert mark["power"] > 0.4, (design, mark)


def test_multiway_variance_reduces_to_one_facet_and_drops_a_facet_that_never_repeats():
    rng = np.random.default_rng(0)
    worker = np.repeat(np.arange(12), 5)
    d = np.where(rng.random(60) < 0.6, 1.0, -1.0)
    alone = multiway_tests(np.zeros(60, int), d, [worker], 1)
    # a second facet whose every level is one judgment adds V_C and takes V_WxC back: the same cells
    with_singletons = multiway_tests(np.zeros(60, int), d, [worker, np.arange(60)], 1)
    assert with_singletons["se"][0] == pytest.approx(alone["se"][0])
    assert alone["df"][0] == 11 and with_singletons["df"][0] == 11
    # CR3 divides each worker's residual total by 1 - 5/60
    resid = d - d.mean()
    totals = np.bincount(worker, weights=resid) / (1 - 5 / 60)
    assert alone["se"][0] == pytest.approx(np.sqrt((totals ** 2).sum()) / 60)


def test_acute_analysis_runs_the_crossed_test_and_says_so():
    df = simulate_judgments({"a": 0.0, "b": 0.4}, 400, seed=4, workers=25, dialogues_per_model=12, worker_sd=0.5)
    row = matchups(df, cluster="worker", seed=1).iloc[0]
    b_left = (df["model_left"] == "b").to_numpy()
    d = np.where(df["winner"] == "b", 1.0, -1.0)
    conv_a = pd.factorize(np.where(b_left, df["dialogue_right"], df["dialogue_left"]))[0]
    conv_b = pd.factorize(np.where(b_left, df["dialogue_left"], df["dialogue_right"]))[0]
    expected = multiway_tests(np.zeros(len(df), int), d, [pd.factorize(df["worker"])[0], conv_a, conv_b], 1)
    assert row["pvalue"] == pytest.approx(expected["p"][0])
    assert row["ci_low"] == pytest.approx((1 + expected["low"][0]) / 2)
    assert row["winrate_b"] == pytest.approx((d.mean() + 1) / 2)  # the estimate is unchanged
    assert row["conversations"] == 12 and row["workers"] == 25 and "t on 11 df" in row["test"]
    assert np.isfinite(row["pvalue_workers"]) and row["pvalue_workers"] != row["pvalue"]
    assert "both as sampled" in design_note(matchups(df, cluster="worker"))


def test_too_few_conversations_give_no_mark_and_say_what_is_needed():
    df = simulate_judgments({"a": 0.0, "b": 3.0}, 300, seed=0, workers=30, dialogues_per_model=3)
    row = matchups(df, cluster="worker").iloc[0]
    assert row["pvalue_workers"] < 0.01 and row["mark"] == "" and np.isnan(row["pvalue"])
    assert np.isnan(row["ci_low"]) and row["workers_needed"] == min_clusters(0.05)
    assert row["reason"].startswith("3 conversations per model: the difference holds for these conversations")
    assert f"at least {min_clusters(0.05)} conversations per model are needed for a verdict about the models" \
        in row["reason"]


def test_per_turn_analysis_reads_nesting_from_the_table():
    from parlai_acute.per_turn.analysis import AnalysisConfig, analyze
    from parlai_acute.per_turn.simulate import simulate_turns

    df = simulate_turns({"A": 0.0, "B": 0.0}, "pm", "soba", dialogues=40, workers=10, dialogue_sd=0.6, seed=2)
    result = analyze(df, AnalysisConfig(bootstrap=0))
    assert result.config.cluster == "worker" and "nested in workers" in result.design
    assert result.meta()["design"] == result.design
    pair = result.designs[0].comparisons.iloc[0]
    assert pair.clusters == df["worker"].nunique() <= 10
    df["worker"] = "w-" + df["dialogue"].astype(str)  # one dialogue per worker: the dialogue is the unit
    result = analyze(df, AnalysisConfig(bootstrap=0))
    assert result.config.cluster == "dialogue" and result.designs[0].comparisons.iloc[0].clusters == 40
    asked = analyze(df, AnalysisConfig(bootstrap=0, cluster="worker"))
    assert asked.config.cluster == "worker" and asked.design == "clustered by worker as asked"
