"""Review from evidence on a real Mephisto database (mock provider): the per-worker table, rules
turned into actions, pay, and ``--apply`` through Mephisto's unit and worker API, idempotent."""
from __future__ import annotations

import json

import pytest

from parlai_acute.scripts.main import main
from review_helpers import PAY, add_unit, comparison, launched_run

RULES = {"rules": [{"when": "gold_accuracy < 1", "action": "reject",
                    "reason": "answered {gold_correct} of {gold_items} check comparisons correctly"},
                   {"when": "position_p < 0.05", "action": "block"}],
         "min_hourly_wage": 12}


@pytest.fixture()
def mephisto_db(tmp_path, monkeypatch):
    import mephisto.utils.dirs as dirs
    from mephisto.abstractions.databases.local_database import LocalMephistoDB

    data = tmp_path / "mephisto_data"
    data.mkdir()
    monkeypatch.setattr(dirs, "loaded_data_dir", str(data))
    return LocalMephistoDB(database_path=str(data / "database.db"))


@pytest.fixture()
def study(mephisto_db, tmp_path):
    """alice: careful (right on the check, sides mixed, 10 min); bob: wrong on the check, always the
    left side, "ok" as every reason (2 min); carol: careful but slow (20 min for one unit's pay);
    dave: left mid-unit (status disconnect) after 3 judgments."""
    db = mephisto_db
    task_id, requester_id, run = launched_run(db, "study", max_judgments_per_worker=20)
    check = comparison(99, "smol", onboarding=True)
    add_unit(db, task_id, requester_id, run, "alice",
             [check] + [comparison(i, "smol" if i % 4 else "generic") for i in range(8)], seconds=600)
    add_unit(db, task_id, requester_id, run, "bob",
             [comparison(99, "generic", onboarding=True)]
             + [comparison(i, ["smol", "generic"][i % 2], reason="ok") for i in range(8)], seconds=120)
    add_unit(db, task_id, requester_id, run, "carol",
             [check] + [comparison(i, "smol" if i % 4 else "generic") for i in range(8)], seconds=1200)
    add_unit(db, task_id, requester_id, run, "dave", [check] + [comparison(i, "smol") for i in range(3)],
             seconds=300, status="disconnect")
    rules = tmp_path / "rules.yaml"
    rules.write_text(json.dumps(RULES), encoding="utf-8")
    return db, str(tmp_path / "mephisto_data" / "database.db"), rules


def test_the_table_holds_each_workers_evidence(study):
    from parlai_acute import api

    db, db_file, rules = study
    plan = api.review("study", mephisto_db=db_file, rules=rules)
    t = plan.table.set_index("worker")
    assert plan.protocol == "acute" and list(t.index) == ["alice", "bob", "carol", "dave"]
    assert t.loc["alice", "judgments"] == 8 and t.loc["alice", "seconds_per_judgment"] == 30.0
    assert (t.loc["bob", "gold_items"], t.loc["bob", "gold_correct"]) == (1, 0)
    assert t.loc["bob", "first_position_share"] == 1.0 and t.loc["bob", "position_p"] < 0.01
    assert t.loc["alice", "position_p"] > 0.2 and t.loc["alice", "position_needs"] == 6
    assert "position test needs 6 judgments to fire at alpha 0.05, has 3" in t.loc["dave", "notes"]
    # leave-one-out: alice and carol answer alike, bob differs from both on half the pairs
    assert t.loc["alice", "agreement"] > t.loc["bob", "agreement"]
    assert t.loc["bob", "too_short"] == 8 and t.loc["bob", "exact_repeat"] == 7
    assert "failed onboarding" in t.loc["bob", "excluded_because"]
    assert t.loc["carol", "hours"] == pytest.approx(1 / 3) and t.loc["carol", "base_pay"] == PAY
    assert t.loc["carol", "wage_bonus"] == pytest.approx(12 / 3 - PAY)
    assert t.loc["dave", "base_pay"] == 0.0  # not submitted: paid through the wage bonus for his time
    assert t.loc["dave", "wage_bonus"] == pytest.approx(12 * 300 / 3600)
    decisions = {p["worker"]: p for p in plan.proposals}
    assert decisions["bob"]["decision"] == "reject" and decisions["bob"]["block"]
    assert "answered 0 of 1 check comparisons correctly" in decisions["bob"]["reasons"][0]
    assert decisions["bob"]["bonuses"] == [] and t.loc["bob", "base_pay"] == 0.0
    assert decisions["alice"]["decision"] == "approve" and not decisions["alice"]["block"]


def test_apply_carries_the_plan_out_once(study, tmp_path, capsys):
    from mephisto.data_model.agent import Agent
    from mephisto.data_model.worker import Worker

    db, db_file, rules = study
    log = tmp_path / "actions.jsonl"
    args = ["review", "--task-name", "study", "--mephisto-db", db_file, "--rules", str(rules), "--log", str(log)]
    assert main(args + ["--fee", "0.2"]) == 0  # dry run
    out = capsys.readouterr().out
    assert "dry run" in out and not log.exists()
    # issue 25 item 3: the run's effective hourly pay, its time per judgment to plan with, its cost with the fee
    assert "effective hourly pay: median " in out and "(`power ... --seconds-per-judgment`)" in out
    assert "+ provider fee 20% " in out
    assert {a.db_status for a in (Agent.get(db, x.db_id) for x in db.find_agents())} == {"completed", "disconnect"}

    assert main(args + ["--apply"]) == 0
    out = capsys.readouterr().out
    status = {db.get_worker(a.worker_id)["worker_name"]: Agent.get(db, a.db_id).db_status for a in db.find_agents()}
    assert status == {"alice": "approved", "bob": "rejected", "carol": "approved", "dave": "disconnect"}
    bob = Worker.get(db, db.find_workers(worker_name="bob")[0].db_id)
    assert bob.get_granted_qualification("parlai_acute_eval_block") is not None  # the run's own
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    bonuses = {e["worker"]: e["amount"] for e in entries if e["action"] == "bonus"}
    assert bonuses == {"alice": pytest.approx(1.5), "carol": pytest.approx(3.5), "dave": pytest.approx(1.0)}
    rejected = next(e for e in entries if e["action"] == "reject")
    assert rejected["worker"] == "bob" and rejected["evidence"]["gold_accuracy"] == 0.0

    assert main(args + ["--apply"]) == 0  # a second apply does nothing
    out = capsys.readouterr().out
    assert len(log.read_text().splitlines()) == len(entries)
    assert "0 actions done" in out, out


def test_work_continued_in_a_second_agent_is_decided_and_paid_once(mephisto_db, tmp_path):
    """A relaunch left one assignment with two completed agents (the issue's double payment): the
    work is one unit, approved once through the agent that holds it; its time is both agents'."""
    from mephisto.data_model.agent import Agent

    from parlai_acute import api
    from parlai_acute.mephisto_tasks.live.sessions import carried_over, mark_superseded

    db = mephisto_db
    task_id, requester_id, run = launched_run(db, "study", max_judgments_per_worker=20)
    first, assignment = add_unit(db, task_id, requester_id, run, "erin", [comparison(0, "smol"), comparison(1, "smol")],
                                 seconds=200)
    run2 = launched_run(db, "study", max_judgments_per_worker=20)[2]  # the relaunch
    second, _ = add_unit(db, task_id, requester_id, run2, "erin", [], seconds=300)
    old, new = Agent.get(db, first), Agent.get(db, second)
    new.state.data.update(carried_over(old.state.data, first))
    new.state.save_data()
    for i in (2, 3):
        new.state.add_comparison(comparison(i, "generic"))
    mark_superseded(old, second)
    db_file = str(tmp_path / "mephisto_data" / "database.db")

    plan = api.review("study", mephisto_db=db_file, min_hourly_wage=6, apply=True, log=tmp_path / "log.jsonl")
    erin = plan.table.set_index("worker").loc["erin"]
    assert (erin["units"], erin["judgments"], erin["seconds_worked"]) == (1, 4, 500.0)
    assert erin["base_pay"] == PAY and erin["wage_bonus"] == pytest.approx(6 * 500 / 3600 - PAY, abs=0.01)
    assert (Agent.get(db, first).db_status, Agent.get(db, second).db_status) == ("completed", "approved")
    skipped = next(e for e in plan.done if e["agent_id"] == str(first))
    assert skipped["result"] == f"skipped: continued in agent {second}, decided there"
    assert [e["action"] for e in plan.done if e["result"] == "done"] == ["approve", "bonus"]


def test_an_agent_that_held_no_work_is_not_a_unit_nor_paid(mephisto_db, tmp_path):
    """A run before the live runner expired them left, beside the worker's one piece of work, a
    "completed" agent that stored nothing (a second registration, a "no more work" page): approving
    from Mephisto's agents would pay it. Review counts one unit and approves one agent."""
    from mephisto.data_model.agent import Agent

    from parlai_acute import api

    db = mephisto_db
    task_id, requester_id, run = launched_run(db, "study", max_judgments_per_worker=20)
    work, _ = add_unit(db, task_id, requester_id, run, "gus", [comparison(0, "smol"), comparison(1, "generic")],
                       seconds=300)
    empty, _ = add_unit(db, task_id, requester_id, run, "gus", [], seconds=5)
    plan = api.review("study", mephisto_db=str(tmp_path / "mephisto_data" / "database.db"), apply=True,
                      log=tmp_path / "log.jsonl")
    assert plan.table.set_index("worker").loc["gus", "units"] == 1
    assert [e["agent_id"] for e in plan.done if e["result"] == "done"] == [str(work)]
    assert (Agent.get(db, work).db_status, Agent.get(db, empty).db_status) == ("approved", "completed")
    skipped = next(e for e in plan.done if e["agent_id"] == str(empty))
    assert skipped["result"] == "skipped: held no work (status completed)"


def test_every_live_task_is_reviewed_by_its_protocol_and_others_are_named(mephisto_db):
    from parlai_acute.errors import UserError
    from parlai_acute.mephisto_tasks.live.review import protocol_of

    db = mephisto_db
    for task_type, name in (("parlai_acute_eval", "acute"), ("parlai_acute_per_turn", "per-turn"),
                            ("parlai_acute_ssa_label", "ssa"), ("parlai_acute_multiref", "multiref")):
        db.new_task(f"t_{task_type}", task_type)
        assert protocol_of(db, f"t_{task_type}").name == name
    db.new_task("static", "static_task")
    with pytest.raises(UserError, match="which no protocol of parlai_acute reviews; review it with `parlai-acute "
                                        "mephisto review`"):
        protocol_of(db, "static")
    with pytest.raises(UserError, match="no Mephisto task named 'nope'"):
        protocol_of(db, "nope")


def test_agent_dirs_are_mephistos_own(study):
    """stored_units finds each agent's files without Mephisto rebuilding its TaskRun per agent."""
    from parlai_acute.mephisto_tasks.live.stored_units import agent_dir

    db = study[0]
    for task in db.find_tasks(task_name="study"):
        for run in db.find_task_runs(task_id=task.db_id):
            agents = db.find_agents(task_run_id=run.db_id)
            assert len(agents) == 4
            for agent in agents:
                assert str(agent_dir(run, agent)) == agent.get_data_dir()


def test_a_bad_rules_file_is_one_line_and_changes_nothing(study, tmp_path, capsys):
    from mephisto.data_model.agent import Agent

    db, db_file, _ = study
    rules = tmp_path / "bad.yaml"
    rules.write_text("- when: gold_accuracy << 1\n  action: reject\n", encoding="utf-8")
    code = main(["review", "--task-name", "study", "--mephisto-db", db_file, "--rules", str(rules), "--apply"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'when' must be COLUMN OP VALUE" in err, err
    assert {Agent.get(db, a.db_id).db_status for a in db.find_agents()} == {"completed", "disconnect"}
