"""A real Mephisto database on the mock provider holding ACUTE-Eval units, written by the task's own
agent state (as ``tests/acute/test_analyze_inputs.py`` builds one): what review and release read."""
from __future__ import annotations

import json

from omegaconf import OmegaConf

PAY = 0.5  # each unit's pay


def launched_run(db, task_name, **blueprint):
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


def add_unit(db, task_id, requester_id, run, worker_name, comparisons, *, seconds=600.0, status="completed",
             assignment=None):
    """A unit whose judgments were stored by the task's real AcuteEvalAgentState, with Mephisto's
    start and end times ``seconds`` apart; returns (agent id, assignment id)."""
    from mephisto.data_model.agent import Agent
    from mephisto.data_model.constants.assignment_state import AssignmentState

    from parlai_acute.mephisto_tasks.acute.blueprint import BLUEPRINT_TYPE as T

    assignment = assignment or db.new_assignment(task_id, run, requester_id, T, "mock")
    unit = db.new_unit(task_id, run, requester_id, assignment, 0, PAY, "mock", T)
    workers = db.find_workers(worker_name=worker_name)
    worker = workers[0].db_id if workers else db.new_worker(worker_name, "mock")
    agent_id = db.new_agent(worker, unit, task_id, run, assignment, T, "mock")
    db.update_unit(unit, agent_id=agent_id, status=AssignmentState.COMPLETED)
    agent = Agent.get(db, agent_id)
    agent.update_status(status)
    for item in comparisons:
        agent.state.add_comparison(item)
    agent.state.update_metadata("task_start", 1_700_000_000.0)
    agent.state.update_metadata("task_end", 1_700_000_000.0 + seconds)
    return agent_id, assignment


def comparison(number, choice, *, left=None, reason="asks good questions", onboarding=False, seconds=30.0):
    pairing = {"pair_id": f"p{number}", "dialogue_ids": [f"a{number}", f"b{number}"],
               "speakers_to_eval": ["smol", "generic"], "is_onboarding": onboarding}
    if onboarding:
        pairing["correct_answer"] = "smol"
    return {"pairing": pairing, "left": number % 2 if left is None else left, "choice": choice, "reason": reason,
            "question": "Who would you rather talk to?", "question_key": "engaging",
            "start_time": 100.0 + number, "end_time": 100.0 + number + seconds}
