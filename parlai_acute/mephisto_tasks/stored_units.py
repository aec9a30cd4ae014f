"""Read back what a task stored, from every run of a task name, finished or not (shared by all tasks).

``DataBrowser.get_units_for_task_name`` only returns completed units; what was stored in a
unit that was cut short (worker left, launcher stopped) counts too, so this reads every agent
of every run instead.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable


def _agent_data(agent, tries: int = 20) -> dict:
    """The agent's saved data. Mephisto rewrites its own metadata file (``agent_meta.json``) in
    place, not atomically: a read racing a write sees an empty file, so read again shortly; a
    file left empty for good (process killed mid-write) costs only Mephisto's start/end times,
    never our own state file (``*_state.json``, always written atomically)."""
    for _ in range(tries):
        try:
            return agent.state.get_data() or {}
        except json.JSONDecodeError:
            agent._state = None  # reload from disk
            time.sleep(0.1)
    for path in sorted(Path(agent.get_data_dir()).glob("*_state.json")):
        return json.loads(path.read_text(encoding="utf-8"))
    return {}


def stored_units(db, task_name: str, keep: Callable[[dict], bool], *, with_agent: bool = False) -> list[dict[str, Any]]:
    """One dict per agent whose saved data passes ``keep``: ids, worker name, status, times, ``data``
    (and the Mephisto ``agent`` itself with ``with_agent``).

    Work continued in a later agent (a page that came back after a relaunch, see :mod:`.sessions`)
    is read once, from the agent that continues it. The task's blueprint must be registered
    (imported) first: agent states are loaded through it.
    """
    found = []
    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            for agent in db.find_agents(task_run_id=run.db_id):
                found.append((run, agent, _agent_data(agent)))
    continued = {str(a) for _, _, data in found for a in data.get("resumed_from") or ()}
    units, names = [], {}
    for run, agent, data in found:
        if data.get("superseded_by") or str(agent.db_id) in continued or not keep(data):
            continue
        if agent.worker_id not in names:
            names[agent.worker_id] = db.get_worker(agent.worker_id)["worker_name"]
        unit = {"worker_id": agent.worker_id, "worker_name": names[agent.worker_id], "unit_id": agent.unit_id,
                "assignment_id": agent.assignment_id, "task_run_id": run.db_id, "status": agent.db_status,
                "task_start": data.get("start_time"), "task_end": data.get("end_time"), "data": data}
        if with_agent:
            unit["agent"] = agent
        units.append(unit)
    return units
