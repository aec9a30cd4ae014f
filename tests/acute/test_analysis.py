"""Judgments input (files, Mephisto unit data, a real Mephisto database), exclusions,
the analysis pipeline and the `parlai-acute acute analyze` command."""
import json

import numpy as np
import pandas as pd
import pytest

import parlai_acute
from parlai_acute.acute.analysis import (FAILED_ONBOARDING, NO_REASON, ONBOARDING, OVER_CAP, SAME_MODEL,
                                         AnalysisConfig, analyze, apply_exclusions, write_outputs)
from parlai_acute.acute.judgments import (COLUMNS, judgments_from_unit_data,
                                          read_judgments, to_frame, normalize_row, write_judgments)
from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.acute.store import judgments_from_mephisto_db
from parlai_acute.scripts.main import main
from parlai_acute.acute.simulate import simulate_judgments


def row(worker, left, right, winner, reason="clearly better", onboarding=False, correct=None, t=0.0,
        dl=None, dr=None, question="engaging"):
    return normalize_row({"worker": worker, "model_left": left, "model_right": right,
                          "dialogue_left": dl or f"{left}-1", "dialogue_right": dr or f"{right}-1",
                          "winner": winner, "reason": reason, "question_key": question,
                          "is_onboarding": onboarding, "onboarding_correct": correct, "timestamp": t,
                          "winner_side": "left" if left == right else ""}, "test")


# ---------------------------------------------------------------- reading files

def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD = {"worker": "w1", "model_left": "A", "model_right": "B", "dialogue_left": "a1", "dialogue_right": "b1",
        "winner": "B", "reason": "more fun", "question_key": "engaging", "is_onboarding": False}


def test_read_jsonl_derives_loser_side_and_pair(tmp_path):
    df = read_judgments(write_jsonl(tmp_path / "j.jsonl", [GOOD, {**GOOD, "winner": "A", "dialogue_left": "b2"}]))
    assert list(df.columns) == list(COLUMNS)
    assert df.loc[0, "loser"] == "A" and df.loc[0, "winner_side"] == "right" and df.loc[0, "pair_id"] == "a1|b1"
    assert df.loc[1, "winner_side"] == "left"


def test_bad_value_names_line_and_field(tmp_path):
    path = write_jsonl(tmp_path / "j.jsonl", [GOOD, GOOD, {**GOOD, "is_onboarding": "maybe"}])
    with pytest.raises(UserError, match=r"j\.jsonl:3: field 'is_onboarding'"):
        read_judgments(path)
    path = write_jsonl(tmp_path / "k.jsonl", [GOOD, {**GOOD, "winner": "C"}])
    with pytest.raises(UserError, match=r"k\.jsonl:2: field 'winner' is 'C'"):
        read_judgments(path)
    missing = dict(GOOD)
    del missing["reason"]
    with pytest.raises(UserError, match=r"m\.jsonl:1: missing field 'reason'"):
        read_judgments(write_jsonl(tmp_path / "m.jsonl", [missing]))


def test_csv_missing_column_and_bad_cell(tmp_path):
    df = read_judgments(write_jsonl(tmp_path / "j.jsonl", [GOOD] * 3))
    write_judgments(tmp_path / "j.csv", df)
    back = read_judgments(tmp_path / "j.csv")
    pd.testing.assert_frame_equal(back, df)  # round trip
    text = (tmp_path / "j.csv").read_text().splitlines()
    header = text[0].split(",")
    drop = header.index("winner")
    (tmp_path / "no_winner.csv").write_text(
        "\n".join(",".join(c for i, c in enumerate(line.split(",")) if i != drop) for line in text) + "\n")
    with pytest.raises(UserError, match=r"no_winner\.csv:1: missing column 'winner'"):
        read_judgments(tmp_path / "no_winner.csv")
    bad = df.astype({"duration": object})
    bad.loc[2, "duration"] = "long"
    write_judgments(tmp_path / "bad.csv", bad)
    with pytest.raises(UserError, match=r"bad\.csv:4: field 'duration'"):
        read_judgments(tmp_path / "bad.csv")


def test_unreadable_inputs(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        read_judgments(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(UserError, match="is empty"):
        read_judgments(tmp_path / "empty.jsonl")
    (tmp_path / "header.csv").write_text(",".join(COLUMNS) + "\n")
    with pytest.raises(UserError, match="no judgments"):
        read_judgments(tmp_path / "header.csv")
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(UserError, match=r"\.csv, \.jsonl or \.parquet"):
        read_judgments(tmp_path / "x.txt")


# ---------------------------------------------------------------- Mephisto unit data

def comparison(left_index, choice, onboarding=False, correct=None, reason="more specific"):
    pairing = {"pair_id": "p1", "dialogue_ids": ["a1", "b1"], "speakers_to_eval": ["A", "B"],
               "is_onboarding": onboarding}
    if correct is not None:
        pairing["correct_answer"] = correct
    return {"pairing": pairing, "left": left_index, "choice": choice, "reason": reason,
            "question": "Who would you rather talk to?", "question_key": "engaging",
            "start_time": 100.0, "end_time": 130.0}


def test_unit_data_maps_sides_onboarding_and_times():
    units = [{"worker_id": "7", "unit_id": "3", "assignment_id": "2", "task_run_id": "1",
              "data": {"outputs": {"comparisons": [comparison(1, "A"), comparison(0, "A", True, "B"),
                                                   comparison(0, "")]}}}]
    df = judgments_from_unit_data(units)
    assert len(df) == 2  # the unanswered comparison is no judgment
    first = df.iloc[0]
    assert (first["model_left"], first["model_right"], first["dialogue_left"]) == ("B", "A", "b1")
    assert first["winner_side"] == "right" and first["loser"] == "B" and first["duration"] == 30.0
    assert first["worker"] == "7" and first["run_id"] == "1" and first["pair_id"] == "p1"
    assert df.iloc[1]["is_onboarding"] and df.iloc[1]["onboarding_correct"] is False


def test_unit_data_in_the_acute_eval_task_state_shape():
    """The shape parlai_acute/mephisto_tasks/acute/state.py saves: integer dialogue ids,
    both 'left' and 'left_model', 'choice_side', gold pairs without dialogue ids."""
    data = {"schema": "parlai_acute.acute_eval/1", "worker_name": "w1", "question_key": "engaging",
            "plan": [], "blocked": False, "final_submission": None, "comparisons": [
                {"pairing": {"pair_id": "3|17", "pairing_index": 4, "dialogue_ids": [3, 17],
                             "speakers_to_eval": ["model_a", "model_b"], "is_onboarding": False},
                 "position": 1, "n_comparisons": 2, "left": 1, "left_model": "model_b",
                 "choice": "model_a", "choice_side": "right", "reason": "asks about me",
                 "question": "Who is more engaging?", "question_key": "engaging", "onboarding_correct": None,
                 "start_time": 10.0, "end_time": 50.0},
                {"pairing": {"pairing_index": 0, "speakers_to_eval": ["good", "bad"], "is_onboarding": True,
                             "correct_answer": "good"},
                 "position": 2, "n_comparisons": 2, "left": 0, "left_model": "good", "choice": "good",
                 "choice_side": "left", "reason": "coherent", "question_key": "engaging",
                 "onboarding_correct": True, "start_time": 50.0, "end_time": 60.0}]}
    df = judgments_from_unit_data([{"worker_id": "2", "unit_id": "9", "assignment_id": "4", "data": data}])
    first, gold = df.iloc[0], df.iloc[1]
    assert (first["model_left"], first["dialogue_left"], first["dialogue_right"]) == ("model_b", "17", "3")
    assert first["winner_side"] == "right" and first["pair_id"] == "3|17" and first["duration"] == 40.0
    assert gold["is_onboarding"] and gold["onboarding_correct"] is True and gold["dialogue_left"] == "onboarding-0-0"


def test_failed_onboarding_in_an_unfinished_unit_excludes_the_worker(mephisto_db):
    from mephisto.data_model.constants.assignment_state import AssignmentState
    from mephisto.data_model.unit import Unit

    worker = add_completed_unit(mephisto_db, "acute_test", "carol", [comparison(0, "B")])
    add_completed_unit(mephisto_db, "acute_test", "dave", [comparison(0, "B")])
    # carol's second unit: she failed the gold pair and the unit never completed
    add_completed_unit(mephisto_db, "acute_test", "carol", [comparison(0, "A", True, "B")])
    units = mephisto_db.find_units(task_id=mephisto_db.find_tasks(task_name="acute_test")[0].db_id)
    last = max(units, key=lambda unit: int(unit.db_id))  # find_units does not promise an order
    mephisto_db.update_unit(last.db_id, status=AssignmentState.EXPIRED)
    assert Unit.get(mephisto_db, last.db_id).get_status() == AssignmentState.EXPIRED
    df = judgments_from_mephisto_db("acute_test", mephisto_db)
    assert len(df) == 3 and df["is_onboarding"].sum() == 1, df[["worker", "unit_id", "is_onboarding"]]
    kept, excluded, _ = apply_exclusions(df, AnalysisConfig())
    assert kept["worker"].tolist() == ["dave"]  # workers appear by name; only dave remains
    assert set(excluded["excluded_because"]) == {FAILED_ONBOARDING}


def test_unit_data_errors_name_the_comparison():
    with pytest.raises(UserError, match="unit 3 comparison 0: field 'left'"):
        judgments_from_unit_data([{"unit_id": "3", "worker_id": "1", "data": [{**comparison(0, "A"), "left": 2}]}])
    with pytest.raises(UserError, match="correct_answer"):
        judgments_from_unit_data([{"unit_id": "3", "worker_id": "1", "data": [comparison(0, "A", True)]}])


# ---------------------------------------------------------------- a real Mephisto database

@pytest.fixture()
def mephisto_db(tmp_path, monkeypatch):
    """A fresh LocalMephistoDB in Mephisto's layout: DATA_DIR/database.db plus run data in DATA_DIR."""
    import mephisto.utils.dirs as dirs
    from mephisto.abstractions.databases.local_database import LocalMephistoDB

    data = tmp_path / "mephisto_data"
    data.mkdir()
    monkeypatch.setattr(dirs, "loaded_data_dir", str(data))
    return LocalMephistoDB(database_path=str(data / "database.db"))


def add_completed_unit(db, task_name, worker_name, comparisons):
    """A task run with one finished unit whose agent saved ``comparisons`` (static-task state)."""
    from mephisto.data_model.agent import Agent
    from mephisto.data_model.constants.assignment_state import AssignmentState

    tasks = db.find_tasks(task_name=task_name)
    task_id = tasks[0].db_id if tasks else db.new_task(task_name, "static_task")
    requesters = db.find_requesters(requester_name="tester")
    req = requesters[0].db_id if requesters else db.new_requester("tester", "mock")
    run = db.new_task_run(task_id, req, json.dumps("{}"), "mock", "static_task")
    assignment = db.new_assignment(task_id, run, req, "static_task", "mock")
    unit = db.new_unit(task_id, run, req, assignment, 0, 0.5, "mock", "static_task")
    workers = db.find_workers(worker_name=worker_name)
    worker = workers[0].db_id if workers else db.new_worker(worker_name, "mock")
    agent_id = db.new_agent(worker, unit, task_id, run, assignment, "static_task", "mock")
    db.update_unit(unit, agent_id=agent_id, status=AssignmentState.COMPLETED)
    agent = Agent.get(db, agent_id)
    agent.update_status("completed")
    agent.state.update_submit({"comparisons": comparisons})
    return worker


def test_judgments_from_real_mephisto_db(mephisto_db):
    w1 = add_completed_unit(mephisto_db, "acute_test", "alice", [comparison(0, "B"), comparison(1, "B")])
    add_completed_unit(mephisto_db, "acute_test", "bob", [comparison(0, "A", reason="")])
    df = judgments_from_mephisto_db("acute_test", mephisto_db)
    assert len(df) == 3 and set(df["worker"]) == {"alice", "bob"}
    assert df["winner"].tolist() == ["B", "B", "A"]
    assert df.iloc[0]["winner_side"] == "right" and df.iloc[1]["winner_side"] == "left"


def test_judgments_saved_by_the_acute_eval_task_state(mephisto_db):
    """The real AcuteEvalAgentState of parlai_acute.mephisto_tasks.acute stores a judgment;
    the analysis reads it back through Mephisto's DataBrowser."""
    from mephisto.data_model.agent import Agent
    from mephisto.data_model.constants.assignment_state import AssignmentState

    from parlai_acute.mephisto_tasks.acute.blueprint import BLUEPRINT_TYPE as T

    task = mephisto_db.new_task("acute_live", T)
    req = mephisto_db.new_requester("tester", "mock")
    run = mephisto_db.new_task_run(task, req, json.dumps("{}"), "mock", T)
    assignment = mephisto_db.new_assignment(task, run, req, T, "mock")
    unit = mephisto_db.new_unit(task, run, req, assignment, 0, 0.5, "mock", T)
    worker = mephisto_db.new_worker("alice", "mock")
    agent_id = mephisto_db.new_agent(worker, unit, task, run, assignment, T, "mock")
    mephisto_db.update_unit(unit, agent_id=agent_id, status=AssignmentState.COMPLETED)
    agent = Agent.get(mephisto_db, agent_id)
    agent.update_status("completed")
    agent.state.add_comparison({
        "pairing": {"pair_id": "3|17", "pairing_index": 4, "dialogue_ids": [3, 17],
                    "speakers_to_eval": ["model_a", "model_b"], "is_onboarding": False},
        "position": 1, "n_comparisons": 1, "left": 1, "left_model": "model_b", "choice": "model_a",
        "choice_side": "right", "reason": "it asked about me", "question": "Who is more engaging?",
        "question_key": "engaging", "onboarding_correct": None, "start_time": 1.0, "end_time": 3.0})
    df = judgments_from_mephisto_db("acute_live", mephisto_db)
    assert len(df) == 1
    got = df.iloc[0]
    assert (got["model_left"], got["winner"], got["winner_side"], got["dialogue_left"]) == \
        ("model_b", "model_a", "right", "17")
    assert got["worker"] == "alice" and got["reason"] == "it asked about me" and got["duration"] == 2.0


def test_unknown_and_empty_mephisto_tasks(mephisto_db):
    add_completed_unit(mephisto_db, "acute_test", "alice", [comparison(0, "B")])
    with pytest.raises(UserError, match=r"no Mephisto task named 'other' \(known: acute_test\)"):
        judgments_from_mephisto_db("other", mephisto_db)
    mephisto_db.new_task("empty_run", "static_task")
    with pytest.raises(UserError, match="has no judgments yet"):
        judgments_from_mephisto_db("empty_run", mephisto_db)


# ---------------------------------------------------------------- exclusions

def test_exclusion_rules():
    rows = [
        row("bad", "A", "B", "A", onboarding=True, correct=False), row("bad", "A", "B", "B"),
        row("good", "A", "B", "A", onboarding=True, correct=True), row("good", "A", "B", "B"),
        row("silent", "A", "B", "B", reason=""), row("silent", "B", "C", "C", reason=" ok."),
        row("terse", "A", "B", "B", reason=""), row("terse", "B", "C", "C", reason="fun"),
        row("good", "A", "A", "A"),
    ]
    kept, excluded, cap = apply_exclusions(to_frame(rows), AnalysisConfig())
    why = excluded.groupby("worker")["excluded_because"].apply(list).to_dict()
    assert why["bad"] == [FAILED_ONBOARDING, FAILED_ONBOARDING]
    assert why["silent"] == [NO_REASON, NO_REASON]
    assert why["good"] == [ONBOARDING, SAME_MODEL]
    assert sorted(kept["worker"]) == ["good", "terse", "terse"]  # one real reason is enough
    assert cap == 2  # default: the number of model pairs (A-B, B-C)


def test_per_worker_cap_keeps_earliest():
    rows = [row("w", "A", "B", "B", t=t) for t in (5.0, 1.0, 3.0)] + [row("v", "A", "B", "A", t=0.0)]
    kept, excluded, cap = apply_exclusions(to_frame(rows), AnalysisConfig())
    assert cap == 1
    assert sorted(kept["timestamp"]) == [0.0, 1.0]
    assert (excluded["excluded_because"] == OVER_CAP).sum() == 2
    kept, _, cap = apply_exclusions(to_frame(rows), AnalysisConfig(max_per_worker=2))
    assert cap == 2 and sorted(kept[kept.worker == "w"]["timestamp"]) == [1.0, 3.0]


def test_everything_excluded_or_empty_is_a_user_error():
    with pytest.raises(UserError, match="all 1 judgments were excluded"):
        analyze(to_frame([row("w", "A", "B", "A", reason="")]))
    with pytest.raises(UserError, match="no judgments"):
        analyze(to_frame([]))
    with pytest.raises(UserError, match="^bootstrap must be 0 or more"):
        AnalysisConfig(bootstrap=-1)


# ---------------------------------------------------------------- pipeline

def test_aa_copies_come_out_near_even():
    df = simulate_judgments({"A": 0.0, "A-copy": 0.0}, 4000, seed=21, workers=4000, left_bias=1.0)
    result = analyze(df, AnalysisConfig(bootstrap=200))
    m = result.questions[0].matchups.iloc[0]
    assert m["winrate_b"] == pytest.approx(0.5, abs=0.03)
    assert m["mark"] == ""
    bias = result.questions[0].side_bias
    assert bias["left_rate"] > 0.65 and bias["pvalue"] < 1e-6  # the interface bias is reported separately
    ranking = result.questions[0].ranking
    assert (ranking["ci_low"] < 0).all() and (ranking["ci_high"] > 0).all()


def test_same_model_on_both_sides_is_an_aa_check():
    rng = np.random.default_rng(8)
    rows = [row(f"w{i}", "A", "B", "B") for i in range(20)]
    rows += [normalize_row({"worker": f"w{i}", "model_left": "A", "model_right": "A", "dialogue_left": f"a{i}",
                            "dialogue_right": f"a{i + 100}", "winner": "A", "question_key": "engaging",
                            "winner_side": "left" if rng.random() < 0.5 else "right", "reason": "same-ish",
                            "is_onboarding": False, "timestamp": 1.0}, "test") for i in range(400)]
    result = analyze(to_frame(rows), AnalysisConfig(bootstrap=0, max_per_worker=1000))
    aa = result.aa_checks().iloc[0]
    assert aa["model"] == "A" and aa["n"] == 400
    assert aa["left_rate"] == pytest.approx(0.5, abs=0.08) and aa["pvalue"] > 0.001
    assert result.questions[0].matchups["n"].tolist() == [20]  # A/A rows never enter the grid


def test_outputs_record_configuration_and_version(tmp_path):
    truth = {"m0": 0.0, "m1": 0.4, "m2": 0.8}
    df = simulate_judgments(truth, 600, seed=2, workers=300)
    df.loc[df.index[:2], "question_key"] = "humanness"
    result = analyze(df, AnalysisConfig(bootstrap=100, seed=3))
    paths = write_outputs(result, tmp_path / "out")
    run = json.loads(paths["run.json"].read_text())
    assert run["parlai_acute_version"] == parlai_acute.__version__
    assert run["seed"] == 3 and run["config"]["bootstrap"] == 100
    for name in ("results.json", "ranking.json", "exclusions.json"):
        data = json.loads(paths[name].read_text())
        data = data.get("meta", data)  # results.json: {"meta": ..., "estimands": ..., "summary": ...}
        assert data["parlai_acute_version"] == parlai_acute.__version__ and data["config"]["seed"] == 3
    kept = read_judgments(paths["judgments.csv"])
    assert len(kept) == len(result.kept)
    grid = pd.read_csv(paths["winrate_grid.csv"], index_col=[0, 1])
    assert set(grid.index.get_level_values(0)) == {"engaging", "humanness"}
    eng = grid.loc["engaging"]
    assert eng.loc["m0", "m2"] + eng.loc["m2", "m0"] == pytest.approx(100)
    ranking = pd.read_csv(paths["ranking.csv"])
    assert ranking[ranking.question_key == "engaging"]["model"].tolist() == ["m2", "m1", "m0"]
    assert not list((tmp_path / "out").glob(".*.tmp"))  # atomic writes leave no temporaries


# ---------------------------------------------------------------- command line

def test_cli_on_judgments_file(tmp_path, capsys):
    df = simulate_judgments({"m0": 0.0, "m1": 1.0}, 300, seed=1, workers=300)
    write_judgments(tmp_path / "j.csv", df)
    code = main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "--outdir", str(tmp_path / "out"),
                 "--bootstrap", "50", "--seed", "9"])
    out = capsys.readouterr().out
    assert code == 0 and "300 judgments kept" in out and "1. m1" in out
    assert json.loads((tmp_path / "out" / "run.json").read_text())["config"]["source"] == str(tmp_path / "j.csv")


def test_cli_errors_are_one_line(tmp_path, capsys, mephisto_db):
    (tmp_path / "bad.jsonl").write_text(json.dumps({**GOOD, "winner": "Z"}) + "\n")
    code = main(["acute", "analyze", "--judgments", str(tmp_path / "bad.jsonl"), "--outdir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "bad.jsonl:1: field 'winner'" in err
    add_completed_unit(mephisto_db, "acute_test", "alice", [comparison(0, "B")])
    db_file = str(tmp_path / "mephisto_data" / "database.db")
    code = main(["acute", "analyze", "--task-name", "missing", "--mephisto-db", db_file,
                 "--outdir", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "no Mephisto task named 'missing'" in err and "Traceback" not in err
    code = main(["acute", "analyze", "--task-name", "x", "--mephisto-db", str(tmp_path / "nope.db"),
                 "--outdir", str(tmp_path / "o")])
    assert code == 2 and "does not exist" in capsys.readouterr().err


def test_cli_reads_a_finished_mephisto_run(tmp_path, capsys, mephisto_db):
    """Through --mephisto-db only: the unit data must be found beside the database."""
    import mephisto.utils.dirs as dirs

    for worker in range(6):
        add_completed_unit(mephisto_db, "acute_run", f"w{worker}",
                           [comparison(worker % 2, "B", reason="asks good questions")])
    dirs.loaded_data_dir = None  # as in a fresh process
    code = main(["acute", "analyze", "--task-name", "acute_run", "--mephisto-db",
                 str(tmp_path / "mephisto_data" / "database.db"), "--outdir", str(tmp_path / "o"), "--bootstrap", "20"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "6 judgments kept" in out and "B vs A: 100.0% (6/6)" in out
