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


@pytest.mark.parametrize("size", [8, 20, 60])
def test_static_ssa_mark_holds_its_level_over_workers_and_contexts(size):
    """1,000 seeded A/A studies of static SSA (workers x contexts crossed, worker x model taste): the
    influence-split two-way test holds its level and covers (standard error 0.7 points, so 5 +/- 2.5
    and 92-98 %); the split that puts each item's whole residual into every one of its workers'
    cells (measured 7-12 %) is what it replaced."""
    result = calibrate("ssa-static", size, 0.3, 1000, seed=100 + size)
    names = list(result)
    mark = result[names[0]]
    assert names[0].startswith("mark") and "workers x contexts" in names[0]
    assert 0.025 <= mark["null"] <= 0.075, mark
    assert 0.92 <= mark["coverage"] <= 0.98 and 0.92 <= mark["coverage_at_effect"] <= 0.98, mark


def test_static_ssa_interval_covers_a_strong_effect_at_eight_levels():
    """The benchmark's 2,000 studies at 8 contexts x 8 workers with the strong effect (logit 0.8):
    most contexts' majorities agree, the variance rests on the few whose models differ, and a t on
    min(contexts, workers) - 1 = 7 df covered 90.65 %; the t on the contexts that carry the
    variance covers within 93-97 % and still holds the null within 3-7 %."""
    result = calibrate("ssa-static", 8, 0.8, 2000, seed=8 + 80)
    mark = next(iter(result.values()))
    assert 0.93 <= mark["coverage_at_effect"] <= 0.97, mark
    assert 0.03 <= mark["null"] <= 0.07 and 0.93 <= mark["coverage"] <= 0.97, mark


@pytest.mark.parametrize("size", [8, 20])
def test_ppi_on_static_ssa_majorities_holds_its_level_over_workers_and_contexts(size):
    """PPI++ of one model's sensibleness from static SSA labels plus a judge (the benchmark's
    ``ppi-static-ssa`` rows, its seeds): with lambda cross-fitted over folds of contexts the
    interval holds its level at 8 and 20 levels, where lambda tuned on all items fired 7.4-8.5 %
    and the interval over independent replies 15-21 %."""
    result = calibrate("ppi-static-ssa", size, 0.3, 1000, seed=size + 30)
    names = list(result)
    mark, independent = result[names[0]], result[names[-2]]
    assert "cross-fitted lambda" in names[0] and "CR3" in names[0]
    assert 0.03 <= mark["null"] <= 0.07 and 0.93 <= mark["coverage"] <= 0.97, mark
    assert independent["null"] > 0.12, independent


def test_split_facet_variance_is_the_context_variance_when_workers_stay_in_one_context():
    from parlai_acute.stats.inference import difference_split_tests, pivotal, scaled_votes

    rng = np.random.default_rng(1)
    contexts, k = 10, 3
    is_b = np.repeat([False, True], contexts)
    context = np.tile(np.arange(contexts), 2)
    label_item = np.repeat(np.arange(2 * contexts), k)
    worker = context[label_item] * k + np.tile(np.arange(k), 2 * contexts)  # each worker labels one context
    vote = (rng.random(len(label_item)) < 0.6).astype(float)
    yes = np.bincount(label_item, weights=vote)
    value = (2 * yes > k).astype(float)
    part = scaled_votes(is_b[label_item].astype(int), vote, pivotal(yes[label_item] - vote, k))
    res = difference_split_tests(np.zeros(2 * contexts, int), is_b, value, context, label_item, worker, part, 1)
    diff = value[is_b] - value[~is_b]
    # CR2 over contexts: each context's residual total / sqrt(1 - 2/20), squared, over n_model^2
    resid = (diff - diff.mean()) / contexts / np.sqrt(1 - 2 / 20)
    assert res["se"][0] == pytest.approx(np.sqrt((resid ** 2).sum()))
    assert res["estimate"][0] == pytest.approx(diff.mean())
    # t on the contexts that carry the variance: (sum of contributions)^2 / sum of their squares,
    # at most contexts - 1 (a context whose difference is the mean carries none)
    share = resid ** 2
    assert res["df"][0] == pytest.approx(min(contexts - 1, share.sum() ** 2 / (share ** 2).sum()))
    assert res["df"][0] < contexts - 1
    a = np.tile([1.0, 0.0], contexts // 2)  # every context's difference +-1 about a mean of 0: all carry it
    res = difference_split_tests(np.zeros(2 * contexts, int), is_b, np.concatenate([a, 1 - a]), context,
                                 label_item, worker, part, 1)
    assert res["estimate"][0] == 0 and res["se"][0] > 0 and res["df"][0] == contexts - 1
    assert list(pivotal([1, 2, 0, 1], [3, 3, 3, 2])) == [1.0, 0.0, 0.0, 1.0]


def test_ssa_analysis_reads_crossing_from_the_table_and_needs_six_workers():
    from parlai_acute.ssa.analysis import SSAConfig, analyze
    from parlai_acute.ssa.simulate import simulate_labels

    df = simulate_labels({"a": (0.6, 0.4), "b": (0.75, 0.5)}, contexts=40, labels_per_item=3, workers=12, seed=1)
    result = analyze(df, SSAConfig(bootstrap=0))
    assert result.design.startswith("workers x contexts crossed") and result.meta()["design"] == result.design
    pair = result.pairs.set_index("measure").loc["sensibleness"]
    assert pair["unit"] == "worker x context" and pair["clusters"] == 12 and "t on 11 df" in pair["cluster_method"]
    assert np.isfinite(pair["context_pvalue"]) and pair["context_pvalue"] != pair["cluster_pvalue"]
    assert pair["cluster_low"] < pair["diff"] < pair["cluster_high"]
    few = analyze(simulate_labels({"a": (0.2, 0.4), "b": (0.9, 0.5)}, contexts=40, labels_per_item=3, workers=4,
                                  seed=1), SSAConfig(bootstrap=0))
    pair = few.pairs.set_index("measure").loc["sensibleness"]
    assert pair["context_pvalue"] < 0.01 and pair["mark"] == "" and np.isnan(pair["cluster_pvalue"])
    assert pair["cluster_note"].startswith("4 workers: the difference holds for these workers")
    assert any(note.startswith("FEW WORKERS OR CONTEXTS") for note in few.notes)
    # one worker per context: workers nested in contexts, the test over contexts is the mark
    df["worker"] = "w-" + df["context_id"].astype(str)
    nested = analyze(df, SSAConfig(bootstrap=0))
    assert "nested in contexts" in nested.design and (nested.pairs["unit"] == "context").all()
    assert nested.pairs["context_pvalue"].isna().all()


def test_bradley_terry_and_status_say_which_facets_their_intervals_treat_as_sampled():
    from parlai_acute.monitoring.status import status, status_lines
    from parlai_acute.stats.bradley_terry import (SANDWICH_CROSSED, WORKERS, bradley_terry, fit_counts,
                                                  pigeonhole_counts)

    from parlai_acute.stats.crossed_designs import simulate

    s = simulate("acute-pool", 20, 0.0, 1, seed=5)  # 20 conversation pairs (quality sd 1) reused by 20 workers
    d = s["d"]
    df = pd.DataFrame({"model_left": "a", "model_right": "b", "winner": np.where(d > 0, "b", "a"),
                       "loser": np.where(d > 0, "a", "b"), "worker": s["worker"].astype(str),
                       "dialogue_left": s["conv_a"].astype(str), "dialogue_right": s["conv_b"].astype(str)})
    sides = ("dialogue_left", "dialogue_right")
    workers = bradley_terry(df, cluster="worker", seed=1).set_index("model")
    both = bradley_terry(df, cluster="worker", seed=1, conversations=sides).set_index("model")
    assert (workers["interval"] == WORKERS).all() and (both["interval"] == SANDWICH_CROSSED).all()
    assert ((both["ci_high"] - both["ci_low"]) > (workers["ci_high"] - workers["ci_low"])).all()
    assert (both["ci_low"] < both["strength"]).all() and (both["strength"] < both["ci_high"]).all()
    # the pigeonhole bootstrap (measured, not adopted): wider still, it counts the judgment noise once per facet
    models = sorted(both.index)
    spread = fit_counts(pigeonhole_counts(df, "worker", sides, models, 300, np.random.default_rng(0))).std(axis=0)
    sandwich_se = (both.loc[models, "ci_high"] - both.loc[models, "ci_low"]).to_numpy() / (2 * 2.2)
    assert (spread > sandwich_se).all()
    once = df.assign(dialogue_left=[f"l{i}" for i in range(len(df))], dialogue_right=[f"r{i}" for i in range(len(df))])
    assert (bradley_terry(once, cluster="worker", conversations=sides)["interval"] != SANDWICH_CROSSED).all()
    lines = status_lines(status(simulate_judgments({"a": 0.0, "b": 0.4}, 300, seed=4, workers=25,
                                                   dialogues_per_model=12)))
    assert lines[1].startswith("unit: intervals run over workers; conversations are reused")
    assert "treat workers and conversations both as sampled (two-facet" in lines[1]


def test_ppi_interval_runs_over_workers_when_they_answer_many_items():
    from parlai_acute.judges.ppi import ppi_table
    from parlai_acute.stats.ppi import ppi_mean, ppi_mean_clustered

    rng = np.random.default_rng(2)
    worker = np.repeat(np.arange(20), 15)  # 20 workers x 15 items
    taste = rng.normal(0, 1.0, 20)[worker]
    y = (rng.random(300) < 1 / (1 + np.exp(-taste))).astype(float)
    f = np.where(rng.random(300) < 0.8, y, 1 - y)
    fu = (rng.random(600) < 0.5).astype(float)
    plain, clustered = ppi_mean(y, f, fu, 0.05), ppi_mean_clustered(y, f, fu, worker, 0.05)
    assert clustered["estimate"] == pytest.approx(plain["estimate"]) and clustered["clusters"] == 20
    assert clustered["se"] > 1.5 * plain["se"]  # worker taste sd 1: the items are far from independent
    # one item per worker: the clustered variance is the item variance times n / (n - 1)
    alone = ppi_mean_clustered(y, f, fu, np.arange(300), 0.05)
    assert alone["se"] ** 2 - plain["lambda"] ** 2 * fu.var(ddof=1) / 600 == pytest.approx(
        (y - plain["lambda"] * f).var(ddof=1) / 300)
    # through the table: ACUTE people whose workers judge many pairs, a judge on more pairs; each
    # conversation in one pair: the workers are the people's unit
    people = simulate_judgments({"a": 0.5, "b": 0.0, "c": 0.2, "d": 0.1}, 600, seed=0, workers=20,
                                dialogues_per_model=100_000)
    judged = people.drop_duplicates("pair_id").assign(worker="judge")
    row = ppi_table(people[people["pair_id"].isin(judged["pair_id"].iloc[::3])], judged, "acute").iloc[0]
    assert row["note"].startswith("interval over ") and "workers (each worker's items together" in row["note"]
    # 20 conversations per model serve the pairs, people's and judge's: conversations sampled too
    people = simulate_judgments({"a": 0.5, "b": 0.0, "c": 0.2, "d": 0.1}, 600, seed=0, workers=20)
    judged = people.drop_duplicates("pair_id").assign(worker="judge")
    row = ppi_table(people[people["pair_id"].isin(judged["pair_id"].iloc[::3])], judged, "acute").iloc[0]
    assert "workers and the conversations (at least 20 per model" in row["note"], row["note"]
    assert row["units"].endswith("x conversations (at least 20 per model)")


def test_planning_estimates_both_variance_components_and_needs_conversations_too():
    from parlai_acute.stats.crossed_designs import simulate
    from parlai_acute.stats.power import crossed_plan, pilot_components

    s = simulate("acute-pool", 60, 0.0, 1, seed=3)  # conversation quality sd 1 (each side), worker taste sd 0.5
    comp = pilot_components(s["d"] - s["d"].mean(), s["worker"], [s["conv_a"], s["conv_b"]])
    assert comp["conversation"] > 2 * comp["worker"] > 0 and comp["workers"] == 60 and comp["conversations"] == 60
    assert comp["total"] == pytest.approx(comp["worker"] + comp["conversation"] + comp["residual"])
    plan = crossed_plan(0.3, comp, 10, [5, 10, 20, 50, 200], 0.05, 0.8)
    rows = {r["conversations"]: r for r in plan["rows"]}
    assert rows[5]["workers"] is None and "fewer than 6" in rows[5]["why"]  # below what the test needs
    assert plan["conversations_min"] > 10 and rows[10]["workers"] is None  # conversations cap the precision
    assert "conversations per model are needed" in rows[10]["why"]
    assert rows[50]["workers"] > rows[200]["workers"] >= 6  # more conversations, fewer workers
    # the plan holds its promise on the model it assumes: Var = s_w/W + s_c/C + s_e/(W m) at the target
    w, c = rows[200]["workers"], 200
    var = comp["worker"] / w + comp["conversation"] / c + comp["residual"] / (w * 10)
    assert var <= plan["variance_target"] * (1 + 1e-9)


def test_nested_planning_splits_worker_and_dialogue_variance():
    from parlai_acute.stats.crossed_designs import simulate
    from parlai_acute.stats.power import nested_components, nested_plan

    s = simulate("per-turn-nested", 60, 0.0, 1, seed=4)  # worker sd 1.0, dialogue sd 0.6, 4 dialogues x 8 turns
    comp = nested_components(s["d"], s["worker"], s["dialogue"])
    assert comp["outer"] > comp["inner"] > 0 and comp["outers"] == 60 and comp["inners"] == 240
    assert comp["total"] == pytest.approx(comp["outer"] + comp["inner"] + comp["residual"])
    plan = nested_plan(0.3, comp, [1, 4, 64], 8, 0.05, 0.8)
    workers = [r["workers"] for r in plan["rows"]]
    assert workers[0] > workers[1] > workers[2]  # more dialogues per worker, fewer workers
    # however many dialogues each does, the workers' own variance sets a floor
    assert workers[2] >= comp["outer"] / plan["variance_target"]
