"""Prediction-powered inference (parlai_acute.stats.ppi): valid with any judge, narrower with a good one."""
import json

import numpy as np
import pytest

from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main
from parlai_acute.ssa.labels import write_labels
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute import api
from parlai_acute.judges.ppi import ppi_table
from parlai_acute.ssa.estimands import headline
from parlai_acute.stats.ppi import plan, ppi_mean

RUNS, N, BIG_N, RATE = 4000, 200, 2000, 0.6


def judge(rng, truth, kind):
    if kind == "good":  # agrees with people on 90% of items
        return np.where(rng.random(truth.shape) < 0.9, truth, 1 - truth)
    if kind == "biased":  # agrees on 80%, and says yes far more often
        return np.maximum(np.where(rng.random(truth.shape) < 0.8, truth, 1 - truth), rng.random(truth.shape) < 0.25)
    return (rng.random(truth.shape) < 0.5).astype(float)  # useless: a coin


@pytest.mark.parametrize("kind, widest", [("good", 0.7), ("biased", 0.95), ("useless", 1.03)])
def test_coverage_and_width_with_good_biased_and_useless_judges(kind, widest):
    rng = np.random.default_rng({"good": 0, "biased": 1, "useless": 2}[kind])
    y = (rng.random((RUNS, N)) < RATE).astype(float)
    hidden = (rng.random((RUNS, BIG_N)) < RATE).astype(float)
    res = ppi_mean(y, judge(rng, y, kind), judge(rng, hidden, kind))
    coverage = ((res["lower"] <= RATE) & (RATE <= res["upper"])).mean()
    assert 0.935 <= coverage <= 0.965  # 94-96% up to Monte Carlo error (se 0.35 points)
    ratio = np.median((res["upper"] - res["lower"]) / (res["people_upper"] - res["people_lower"]))
    assert ratio <= widest
    if kind == "useless":
        assert np.median(res["lambda"]) < 0.05 and ratio >= 0.99
    if kind == "good":
        assert np.median(res["effective_n"]) > 2 * N


def test_a_biased_judge_alone_would_be_wrong_and_ppi_is_not():
    rng = np.random.default_rng(3)
    y = (rng.random((RUNS, N)) < RATE).astype(float)
    hidden = (rng.random((RUNS, BIG_N)) < RATE).astype(float)
    fu = judge(rng, hidden, "biased")
    assert fu.mean() - RATE > 0.06  # the judge alone is 7 points off
    res = ppi_mean(y, judge(rng, y, "biased"), fu)
    assert abs(res["estimate"].mean() - RATE) < 0.005


def test_lambda_zero_is_people_only_and_one_is_plain_ppi():
    rng = np.random.default_rng(4)
    y, f, fu = (rng.random(50) < 0.5) * 1.0, (rng.random(50) < 0.5) * 1.0, (rng.random(500) < 0.5) * 1.0
    zero = ppi_mean(y, f, fu, lam=0)
    assert zero["estimate"] == pytest.approx(y.mean()) and zero["se"] == pytest.approx(zero["people_se"])
    one = ppi_mean(y, f, fu, lam=1)
    assert one["estimate"] == pytest.approx(fu.mean() + (y - f).mean())


def test_plan_from_a_pilot_needs_fewer_people_with_a_good_judge_and_as_many_with_a_coin():
    rng = np.random.default_rng(5)
    y = (rng.random(300) < 0.6).astype(float)
    good = plan(y, judge(rng, y, "good"), 0.1)
    coin = plan(y, judge(rng, y, "useless"), 0.1)
    assert good["with_judge"] < 0.6 * good["people_only"] and good["judge_items"] == 10 * good["with_judge"]
    assert coin["with_judge"] >= 0.9 * coin["people_only"]
    assert 150 < good["people_only"] < 230  # (1.96 + 0.84)^2 0.24 / 0.01 = 188
    with pytest.raises(UserError, match="pilot"):
        plan(y[:5], y[:5], 0.1)


def _tables(tmp_path, agree=0.9):
    people = simulate_labels({"good": (0.8, 0.6), "bad": (0.5, 0.3)}, contexts=600, labels_per_item=1, workers=30,
                             noise=0.0, seed=0)
    rng = np.random.default_rng(0)
    items = people["item"].unique()
    asked = set(rng.choice(items, 200, replace=False))
    judged = people.copy()
    flip = rng.random(len(judged)) > agree
    judged["sensible"] = judged["sensible"] ^ flip
    judged["specific"] = judged["specific"] & judged["sensible"]
    judged["worker"] = "judge"
    write_labels(tmp_path / "people.csv", people[people["item"].isin(asked)])
    write_labels(tmp_path / "judge.csv", judged)
    return people[people["item"].isin(asked)], judged


def test_table_rows_per_protocol_measure(tmp_path):
    people, judged = _tables(tmp_path)
    table = ppi_table(people, judged, "ssa")
    assert set(zip(table["comparison"], table["measure"])) == {(m, q) for m in ("good", "bad")
                                                                for q in ("sensibleness", "specificity")}
    sens = table[table["measure"] == "sensibleness"]
    assert (sens["items_with_both"] + sens["judge_only_items"] == 600).all()
    assert (sens["upper"] - sens["lower"] < sens["people_upper"] - sens["people_lower"]).all()
    # the people's column is the protocol's result: what `ssa analyze` reports, interval included
    analysis = headline(api.analyze("ssa", people, bootstrap=1000, seed=0)).set_index(["comparison", "measure"])
    for row in table.itertuples(index=False):
        reported = analysis.loc[(row.comparison, row.measure)]
        assert row.people_estimate == reported["estimate"]
        assert (row.people_lower, row.people_upper) == (reported["low"], reported["high"])
        assert 0 <= row.lower < row.estimate < row.upper <= 1


def test_cli_prints_both_results_plans_and_writes_json(tmp_path, capsys):
    _tables(tmp_path)
    assert main(["ppi", "--people", str(tmp_path / "people.csv"), "--judge-table", str(tmp_path / "judge.csv"),
                 "--plan", "0.1", "--json", str(tmp_path / "ppi.json")]) == 0
    out = capsys.readouterr().out
    assert "with judge" in out and "plan for a 0.1 difference" in out and "items answered by people" in out
    rows = json.loads((tmp_path / "ppi.json").read_text())["rows"]
    assert len(rows) == 4 and all(r["effective_n"] > r["items_with_both"] for r in rows if r["measure"] == "sensibleness")


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    _tables(tmp_path)
    assert main(["ppi", "--people", str(tmp_path / "people.csv"), "--judge-table", str(tmp_path / "nope.csv")]) != 0
    assert capsys.readouterr().err.count("\n") == 1


def test_ssa_analyze_reports_the_judge_beside_the_people(tmp_path, capsys):
    _tables(tmp_path)
    assert main(["ssa", "analyze", "--labels", str(tmp_path / "people.csv"), "--judge-table",
                 str(tmp_path / "judge.csv"), "--outdir", str(tmp_path / "out"), "--bootstrap", "50",
                 "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "with the judge (prediction-powered):" in out and "worth" in out
    saved = json.loads((tmp_path / "out" / "ppi.json").read_text())
    assert saved["protocol"] == "ssa" and len(saved["rows"]) == 4 and "PPI++" in saved["method"]


def test_per_turn_analyze_reports_the_judge_beside_the_people(tmp_path, capsys):
    from parlai_acute.per_turn.simulate import simulate_turns
    from parlai_acute.per_turn.turns import turns_table, write_turns

    turns = turns_table(simulate_turns({"m1": 0.5, "m2": 0.0, "m3": 0.0}, "mm", "sata_user", dialogues=60,
                                       turns_per_dialogue=5, workers=12, seed=0, validate=False))
    judged = turns.assign(worker="judge")  # a judge that agrees with people on every candidate
    write_turns(tmp_path / "people.csv", turns[turns["dialogue"].isin(turns["dialogue"].unique()[:20])])
    write_turns(tmp_path / "judge.csv", judged)
    assert main(["per-turn", "analyze", "--turns", str(tmp_path / "people.csv"), "--judge-table",
                 str(tmp_path / "judge.csv"), "--outdir", str(tmp_path / "out"), "--bootstrap", "0"]) == 0
    rows = json.loads((tmp_path / "out" / "ppi.json").read_text())["rows"]
    assert {r["comparison"] for r in rows if r["measure"] == "pick rate"} == {"m1", "m2", "m3"}
    assert {r["comparison"] for r in rows if r["measure"] == "pick rate difference"} == {"m2 vs m1", "m3 vs m1",
                                                                                      "m3 vs m2"}
    assert all(r["lambda"] > 0.5 and r["upper"] - r["lower"] < r["people_upper"] - r["people_lower"] for r in rows)


def _bt_items(rng, theta, m):
    k = len(theta)
    a = rng.integers(0, k, m)
    b = (a + rng.integers(1, k, m)) % k
    return a, b, (rng.random(m) < 1 / (1 + np.exp(-(theta[a] - theta[b])))).astype(float)


@pytest.mark.parametrize("kind", ["good", "useless"])
def test_bradley_terry_strengths_by_ppi_cover_and_shrink_with_a_good_judge(kind):
    from parlai_acute.stats.ppi import ppi_bradley_terry

    rng = np.random.default_rng(10)
    theta = np.array([0.6, 0.2, 0.0, -0.8])
    theta -= theta.mean()
    covered, ratios = [], []
    for _ in range(150):
        a, b, y = _bt_items(rng, theta, 300)
        au, bu, yu = _bt_items(rng, theta, 3000)
        res = ppi_bradley_terry(a, b, y, judge(rng, y, kind), au, bu, judge(rng, yu, kind), 4)
        covered.append((res["lower"] <= theta) & (theta <= res["upper"]))
        ratios.append(np.median((res["upper"] - res["lower"]) / (res["people_upper"] - res["people_lower"])))
    assert 0.92 <= np.mean(covered) <= 0.98  # 600 strengths (4 per run, correlated): wider Monte Carlo band
    assert np.median(ratios) < 0.75 if kind == "good" else 0.97 <= np.median(ratios) <= 1.03


def test_acute_ppi_reports_the_ranking_beside_the_peoples(tmp_path, capsys):
    from parlai_acute.acute.judgments import write_judgments
    from parlai_acute.acute.simulate import simulate_judgments

    people = simulate_judgments({"a": 0.5, "b": 0.0, "c": 0.0}, 2000, seed=0, workers=100)
    judged = people.drop_duplicates("pair_id").assign(worker="judge")  # agrees with the first person asked
    write_judgments(tmp_path / "people.csv", people[people["pair_id"].isin(judged["pair_id"].iloc[::5])])
    write_judgments(tmp_path / "judge.csv", judged)
    assert main(["ppi", "--people", str(tmp_path / "people.csv"), "--judge-table", str(tmp_path / "judge.csv"),
                 "--json", str(tmp_path / "ppi.json")]) == 0
    out = capsys.readouterr().out
    assert "Bradley-Terry strengths (engaging" in out and "rank-sets" in out and " ranks " in out
    ranking = json.loads((tmp_path / "ppi.json").read_text())["ranking"]
    assert [r["model"] for r in ranking] == ["a", "b", "c"] and ranking[0]["lambda"] > 0.3
    assert all(r["upper"] - r["lower"] < r["people_upper"] - r["people_lower"] for r in ranking)
    # rank-sets both ways: they hold a's rank, equal b and c are never told apart, the judge narrows
    size = {}
    for prefix in ("", "people_"):
        sets = {r["model"]: (r[f"{prefix}rank_lower"], r[f"{prefix}rank_upper"]) for r in ranking}
        assert sets["a"][0] == 1 and all(sets[m][0] <= 2 and sets[m][1] == 3 for m in "bc")
        size[prefix] = sum(hi - lo + 1 for lo, hi in sets.values())
    assert size[""] <= size["people_"]


def test_too_few_judge_only_items_are_said_not_computed():
    y = np.r_[np.ones(8), np.zeros(4)]
    with pytest.raises(UserError, match="at least 2"):
        ppi_mean(y, y, [1.0])


def test_a_judge_that_covered_only_the_peoples_items_gives_the_peoples_result_in_words(tmp_path, capsys):
    """`judge acute --pairings` on the people's own pairings covers only their items: nothing for PPI to
    add, which ppi and `acute analyze --judge-table` say in words (no traceback, no nan, no partial files)."""
    from parlai_acute.acute.judgments import write_judgments
    from parlai_acute.acute.simulate import simulate_judgments

    people = simulate_judgments({"a": 0.5, "b": 0.0, "c": 0.0}, 60, seed=3, workers=60)
    write_judgments(tmp_path / "people.csv", people)
    write_judgments(tmp_path / "judge.csv", people.assign(worker="judge"))
    assert main(["ppi", "--people", str(tmp_path / "people.csv"), "--judge-table", str(tmp_path / "judge.csv")]) == 0
    out = capsys.readouterr().out
    assert out.count("the people's result only") == 3 and "nan" not in out.lower()
    assert main(["acute", "analyze", "--judgments", str(tmp_path / "people.csv"), "--judge-table",
                 str(tmp_path / "judge.csv"), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "the people's result only" in out and "nan" not in out.lower()
    # the people's column is what the analysis printed just above it
    for line in out.splitlines():
        if line.startswith("  b vs a: "):
            shown = line.split(": ", 1)[1].split(" (")[0]
    assert any(f"people {shown}" in line for line in out.splitlines())
