"""Review and release of a per-turn run stored in a real Mephisto database (mock provider) by the
task's own agent state: the Conversations log is in the bundle, with no worker id in any byte."""
from __future__ import annotations

import json

import pytest

from parlai_acute.scripts.main import main

WORKER = "A3EXAMPLEMTURKID"


def turn(k, message, picked, user_reply=""):
    candidates = [{"model": m, "text": f"Model {m} says something at turn {k}.", "position": p,
                   "picked": p == picked, "continued": p == picked, "error": "", "latency": 0.5}
                  for p, m in enumerate(["a", "b"])]
    return {"turn": k, "worker_message": message, "candidates": candidates,
            "fallback": "picked" if picked is not None else "user", "user_reply": user_reply, "justification": "",
            "shown_at": 100.0 + 10 * k, "decided_at": 104.0 + 10 * k}


@pytest.fixture()
def per_turn_run(tmp_path, monkeypatch):
    import mephisto.utils.dirs as dirs
    from mephisto.abstractions.databases.local_database import LocalMephistoDB
    from mephisto.data_model.agent import Agent

    from parlai_acute.mephisto_tasks.per_turn.state import PerTurnAgentState

    data_dir = tmp_path / "mephisto_data"
    data_dir.mkdir()
    monkeypatch.setattr(dirs, "loaded_data_dir", str(data_dir))
    db = LocalMephistoDB(database_path=str(data_dir / "database.db"))
    kind = "parlai_acute_per_turn"
    task = db.new_task("chat", kind)
    requester = db.new_requester("tester", "mock")
    run = db.new_task_run(task, requester, "{}", "mock", kind)
    for n, (worker, status, turns) in enumerate([
            (WORKER, "complete", [turn(0, "Hello, how are you today?", 0),
                                  turn(1, f"I am {WORKER}, mail me at me@example.com", 1)]),
            ("dave_sandbox", "partial", [turn(0, "hi", 0), turn(1, "hi", 0)])]):
        assignment = db.new_assignment(task, run, requester, kind, "mock")
        unit = db.new_unit(task, run, requester, assignment, 0, 1.0, "mock", kind)
        worker_id = db.new_worker(worker, "mock")
        agent_id = db.new_agent(worker_id, unit, task, run, assignment, kind, "mock")
        agent = Agent.get(db, agent_id)
        agent.update_status("completed")
        state = PerTurnAgentState(agent)
        state.data.update({"worker_name": worker, "dialogue_id": f"d{n}", "assignment": f"{assignment} (unit {unit})",
                           "status": status, "setting": "pm", "protocol": "soba", "model_set": ["a", "b"],
                           "onboarding": {"item": 0, "picked": [1], "passed": n == 0}, "turns": turns,
                           "config": {"protocol": "soba"}})
        state.save_data()
        state.update_metadata("task_start", 1_700_000_000.0)
        state.update_metadata("task_end", 1_700_000_000.0 + 900)
    return str(data_dir / "database.db")


def test_review_of_a_per_turn_run(per_turn_run, capsys):
    from parlai_acute import api

    plan = api.review("chat", mephisto_db=per_turn_run, rules=[{"when": "gold_accuracy < 1", "action": "soft_reject"}])
    t = plan.table.set_index("worker")
    assert plan.protocol == "per-turn"
    assert (t.loc[WORKER, "judgments"], t.loc[WORKER, "seconds_per_judgment"], t.loc[WORKER, "gold_correct"]) == (2, 4.0, 1)
    assert t.loc["dave_sandbox", "greetings_only"] == 2 and t.loc["dave_sandbox", "exact_repeat"] == 1
    assert "partial dialogue" in t.loc["dave_sandbox", "excluded_because"]
    assert {p["worker"]: p["decision"] for p in plan.proposals} == {WORKER: "approve", "dave_sandbox": "soft_reject"}


def test_release_of_a_per_turn_run_has_its_log_and_no_worker_id(per_turn_run, tmp_path, capsys):
    bundle = tmp_path / "bundle"
    assert main(["release", "--task-name", "chat", "--mephisto-db", per_turn_run, "-o", str(bundle)]) == 0
    names = {p.name for p in bundle.iterdir()}
    assert {"turns.csv", "conversations.jsonl", "workers.csv", "datasheet.md"} <= names, names
    for path in bundle.iterdir():
        data = path.read_bytes()
        assert WORKER.encode() not in data and b"dave_sandbox" not in data, path.name
        assert str(tmp_path).encode() not in data, path.name  # no path of this machine (the log's metadata_path)
    flags = json.loads((bundle / "pii_flags.json").read_text())
    assert {(f["file"], f["kind"]) for f in flags} >= {("turns.csv", "email"), ("conversations.jsonl", "email")}
    log = [json.loads(line) for line in (bundle / "conversations.jsonl").read_text().splitlines()]
    assert len(log) == 2 and "me@example.com" in json.dumps(log)  # flagged, not changed
