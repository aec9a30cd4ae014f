"""Read back what a task stored, from every run of a task name, finished or not (shared by all tasks).

``DataBrowser.get_units_for_task_name`` only returns completed units; what was stored in a
unit that was cut short (worker left, launcher stopped) counts too, so this reads every agent
of every run instead.
"""
from __future__ import annotations

from typing import Any, Callable


def stored_units(db, task_name: str, keep: Callable[[dict], bool]) -> list[dict[str, Any]]:
    """One dict per agent whose saved data passes ``keep``: ids, worker name, status, times, ``data``.

    The task's blueprint must be registered (imported) first: agent states are loaded through it.
    """
    units, names = [], {}
    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            for agent in db.find_agents(task_run_id=run.db_id):
                data = agent.state.get_data() or {}
                if not keep(data):
                    continue
                if agent.worker_id not in names:
                    names[agent.worker_id] = db.get_worker(agent.worker_id)["worker_name"]
                units.append({"worker_id": agent.worker_id, "worker_name": names[agent.worker_id],
                              "unit_id": agent.unit_id, "assignment_id": agent.assignment_id,
                              "task_run_id": run.db_id, "status": agent.db_status,
                              "task_start": data.get("start_time"), "task_end": data.get("end_time"), "data": data})
    return units
