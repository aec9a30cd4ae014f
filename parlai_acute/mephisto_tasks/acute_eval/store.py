"""Read back what the ACUTE-Eval task stored, from every run of a task name, finished or not.

``DataBrowser.get_units_for_task_name`` only returns completed units; judgments made in a
unit that was cut short (worker left, launcher stopped) are stored too and count, so this
reads every agent of every run instead.
"""
from __future__ import annotations

from typing import Any


def unit_data_for_task(db, task_name: str) -> list[dict[str, Any]]:
    """One dict per agent that stored anything, in the shape ``judgments_from_unit_data`` reads."""
    from parlai_acute.mephisto_tasks.acute_eval import blueprint  # noqa: F401  (registers the blueprint)

    units, names = [], {}
    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            for agent in db.find_agents(task_run_id=run.db_id):
                data = agent.state.get_data() or {}
                # our live state keeps "comparisons" at the top; a static task's submit nests it in "outputs"
                if not (data.get("comparisons") or (data.get("outputs") or {}).get("comparisons")):
                    continue
                if agent.worker_id not in names:
                    names[agent.worker_id] = db.get_worker(agent.worker_id)["worker_name"]
                units.append({"worker_id": agent.worker_id, "worker_name": names[agent.worker_id],
                              "unit_id": agent.unit_id,
                              "assignment_id": agent.assignment_id, "task_run_id": run.db_id,
                              "status": agent.db_status, "task_start": data.get("start_time"),
                              "task_end": data.get("end_time"), "data": data})
    return units


def history(units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Earlier judgments as the scheduler needs them (who judged which pair, onboarding results)."""
    rows = []
    for unit in units:
        for comp in unit["data"].get("comparisons", []):
            rows.append({"worker": str(unit["worker_id"]), "pair_id": comp["pairing"]["pair_id"],
                         "is_onboarding": comp["pairing"]["is_onboarding"],
                         "onboarding_correct": comp.get("onboarding_correct")})
    return rows


def judgments_for_task(db, task_name: str):
    """Tidy judgments table (parlai_acute.acute.judgments schema) of everything stored for ``task_name``."""
    from parlai_acute.acute.judgments import judgments_from_unit_data

    return judgments_from_unit_data(unit_data_for_task(db, task_name))
