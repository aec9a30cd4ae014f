"""`acute analyze` on the inputs users really have: spreadsheet CSVs, empty files, a file
where the output directory should be, a run's stored settings, and no Mephisto set up."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from parlai_acute.acute.judgments import read_judgments, write_judgments
from parlai_acute.scripts.main import main
from parlai_acute.acute.simulate import simulate_judgments

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def csv_text(tmp_path):
    df = simulate_judgments({"a": 0.0, "b": 1.0}, 5, seed=0)
    write_judgments(tmp_path / "plain.csv", df)
    return (tmp_path / "plain.csv").read_text(encoding="utf-8")


def test_csv_saved_with_a_byte_order_mark_is_read(tmp_path, csv_text):
    (tmp_path / "excel.csv").write_bytes(b"\xef\xbb\xbf" + csv_text.encode("utf-8"))
    df = read_judgments(tmp_path / "excel.csv")
    assert len(df) == 5 and df.equals(read_judgments(tmp_path / "plain.csv"))


@pytest.mark.parametrize("content", ["", "\n\n", "\ufeff"])
@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_empty_file_is_reported_as_empty(tmp_path, capsys, content, suffix):
    path = tmp_path / f"j{suffix}"
    path.write_text(content, encoding="utf-8")
    code = main(["acute", "analyze", "--judgments", str(path), "--outdir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert f"judgments file {path} is empty" in err and "missing column" not in err


def test_outdir_that_is_a_file_is_a_one_line_error_before_any_work(tmp_path, capsys, csv_text):
    (tmp_path / "j.csv").write_text(csv_text, encoding="utf-8")
    (tmp_path / "taken").write_text("keep me")
    for outdir in (tmp_path / "taken", tmp_path / "taken" / "sub"):
        code = main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "--outdir", str(outdir)])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
        assert f"{tmp_path / 'taken'} exists and is not a directory" in err
    assert (tmp_path / "taken").read_text() == "keep me"


def _run_cli(args, home, **env):
    environ = {k: v for k, v in os.environ.items() if k not in ("PARLAI_ACUTE_MEPHISTO_DATA",)}
    environ.update(HOME=str(home), PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", *args], capture_output=True,
                          text=True, env=environ, timeout=300)


def _tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_failed_analysis_of_a_missing_task_creates_nothing(tmp_path):
    """A fresh process and an empty HOME: no ~/.mephisto/config.yml, no empty database."""
    home = tmp_path / "home"
    home.mkdir()
    done = _run_cli(["acute", "analyze", "--task-name", "nosuchtask", "--outdir", str(tmp_path / "out")], home)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "no data directory configured" in done.stderr
    assert _tree(home) == [] and not (tmp_path / "out").exists()
    # configured, but the directory holds no database: still nothing created
    (home / ".mephisto").mkdir()
    (home / "data").mkdir()
    (home / ".mephisto" / "config.yml").write_text(f"core:\n  main_data_directory: {home / 'data'}\n")
    before = _tree(home)
    done = _run_cli(["acute", "analyze", "--task-name", "nosuchtask", "--outdir", str(tmp_path / "out")], home)
    assert done.returncode == 2 and "there is no Mephisto database in" in done.stderr, done.stderr
    assert _tree(home) == before  # no database.db appeared


def test_missing_task_in_a_real_database_leaves_home_alone(tmp_path):
    from mephisto.abstractions.databases.local_database import LocalMephistoDB

    data = tmp_path / "data"
    data.mkdir()
    LocalMephistoDB(database_path=str(data / "database.db")).new_task("other", "static_task")
    home = tmp_path / "home"
    home.mkdir()
    done = _run_cli(["acute", "analyze", "--task-name", "nosuchtask", "--mephisto-db", str(data / "database.db"),
                     "--outdir", str(tmp_path / "out")], home)
    assert done.returncode == 2 and "no Mephisto task named 'nosuchtask' (known: other)" in done.stderr, done.stderr
    assert _tree(home) == []
    done = _run_cli(["acute", "analyze", "--task-name", "nosuchtask", "--outdir", str(tmp_path / "out")], home,
                    PARLAI_ACUTE_MEPHISTO_DATA=str(data))  # the directory `acute launch` was told to use
    assert done.returncode == 2 and "no Mephisto task named 'nosuchtask'" in done.stderr, done.stderr
    assert _tree(home) == []


# ---------------------------------------------------------------- the run's own settings

@pytest.fixture()
def mephisto_db(tmp_path, monkeypatch):
    import mephisto.utils.dirs as dirs
    from mephisto.abstractions.databases.local_database import LocalMephistoDB

    data = tmp_path / "mephisto_data"
    data.mkdir()
    monkeypatch.setattr(dirs, "loaded_data_dir", str(data))
    return LocalMephistoDB(database_path=str(data / "database.db"))


def launched_run(db, task_name, **blueprint):
    """A task run stored the way Mephisto 1.1.1's Operator stores one: the run's whole config
    (``cfg.mephisto``, with the blueprint's structured args) as YAML in ``init_params``."""
    from parlai_acute.mephisto_tasks.acute.blueprint import BLUEPRINT_TYPE, AcuteEvalBlueprintArgs

    config = OmegaConf.create({"blueprint": OmegaConf.structured(AcuteEvalBlueprintArgs(**blueprint)),
                               "task": {"task_name": task_name}})
    tasks = db.find_tasks(task_name=task_name)
    task_id = tasks[0].db_id if tasks else db.new_task(task_name, BLUEPRINT_TYPE)
    requester = db.find_requesters(requester_name="tester")
    requester_id = requester[0].db_id if requester else db.new_requester("tester", "mock")
    run = db.new_task_run(task_id, requester_id, json.dumps(OmegaConf.to_yaml(config, resolve=True)), "mock",
                          BLUEPRINT_TYPE)
    return task_id, requester_id, run


def add_unit(db, task_id, requester_id, run, worker_name, comparisons):
    """A finished unit whose judgments were stored by the task's real AcuteEvalAgentState."""
    from mephisto.data_model.agent import Agent
    from mephisto.data_model.constants.assignment_state import AssignmentState

    from parlai_acute.mephisto_tasks.acute.blueprint import BLUEPRINT_TYPE as T

    assignment = db.new_assignment(task_id, run, requester_id, T, "mock")
    unit = db.new_unit(task_id, run, requester_id, assignment, 0, 0.5, "mock", T)
    workers = db.find_workers(worker_name=worker_name)
    worker = workers[0].db_id if workers else db.new_worker(worker_name, "mock")
    agent_id = db.new_agent(worker, unit, task_id, run, assignment, T, "mock")
    db.update_unit(unit, agent_id=agent_id, status=AssignmentState.COMPLETED)
    agent = Agent.get(db, agent_id)
    agent.update_status("completed")
    for item in comparisons:
        agent.state.add_comparison(item)


def comparison(number, choice):
    pairing = {"pair_id": f"p{number}", "dialogue_ids": [f"a{number}", f"b{number}"],
               "speakers_to_eval": ["smol", "generic"], "is_onboarding": False}
    return {"pairing": pairing, "left": number % 2, "choice": choice, "reason": "asks good questions",
            "question": "Who would you rather talk to?", "question_key": "engaging",
            "start_time": 100.0 + number, "end_time": 130.0 + number}


def test_analysis_of_a_run_uses_the_cap_it_was_launched_with(tmp_path, capsys, mephisto_db):
    """The demo's case: 2 workers x 3 judgments of one model pair, launched with a cap of 6."""
    from parlai_acute.mephisto_tasks.acute.store import run_settings, stored_cap

    task_id, requester_id, run = launched_run(mephisto_db, "demo", pairings_file=str(tmp_path / "gone.jsonl"),
                                              max_judgments_per_worker=6)
    for worker, choices in (("w1", ["smol", "smol", "generic"]), ("w2", ["smol", "smol", "smol"])):
        add_unit(mephisto_db, task_id, requester_id, run,
                 worker, [comparison(i, choice) for i, choice in enumerate(choices)])
    assert run_settings(mephisto_db, "demo")[0]["blueprint"]["max_judgments_per_worker"] == 6
    assert stored_cap(mephisto_db, "demo") == (6, f"task run {run}: mephisto.blueprint.max_judgments_per_worker=6")
    db_file = str(tmp_path / "mephisto_data" / "database.db")
    code = main(["acute", "analyze", "--task-name", "demo", "--mephisto-db", db_file, "--outdir",
                 str(tmp_path / "out"), "--bootstrap", "20"])
    out = capsys.readouterr().out
    assert code == 0 and "6 judgments kept, 0 excluded" in out, out  # the default cap of 1 kept 2 of 6
    assert "per-worker cap: 6 (as launched, task run" in out
    run_json = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run_json["per_worker_cap"] == 6 and "max_judgments_per_worker=6" in run_json["config"]["cap_source"]
    code = main(["acute", "analyze", "--task-name", "demo", "--mephisto-db", db_file, "--outdir",
                 str(tmp_path / "out2"), "--bootstrap", "20", "--max-per-worker", "1"])  # told otherwise
    out = capsys.readouterr().out
    assert code == 0 and "2 judgments kept, 4 excluded (over per-worker cap: 4)" in out


def test_unset_cap_is_the_model_pairs_of_the_runs_pairings_file(tmp_path, mephisto_db):
    from parlai_acute.mephisto_tasks.acute.store import stored_cap

    pairings = tmp_path / "pairings.jsonl"

    def dialogue(model):
        return {"speakers": [model, "other_speaker"],
                "dialogue": [{"id": "other_speaker", "text": "hi"}, {"id": model, "text": "hello"}]}

    lines = [{"is_onboarding": False, "speakers_to_eval": list(pair), "dialogue_ids": [n, n + 100],
              "dialogue_dicts": [dialogue(pair[0]), dialogue(pair[1])]}
             for n, pair in enumerate((("a", "b"), ("a", "c"), ("b", "c"), ("b", "a")))]
    pairings.write_text("".join(json.dumps(line) + "\n" for line in lines))
    launched_run(mephisto_db, "t", pairings_file=str(pairings))
    cap, where = stored_cap(mephisto_db, "t")
    assert cap == 3 and "3 model pairs" in where
    launched_run(mephisto_db, "t", pairings_file=str(pairings), max_judgments_per_worker=5)
    assert stored_cap(mephisto_db, "t")[0] == 5  # the largest cap of the task's runs
