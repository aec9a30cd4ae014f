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


def _read_json(path: Path, tries: int = 20):
    """A JSON file's content, or None when absent. Mephisto rewrites its own metadata file
    (``agent_meta.json``) in place, not atomically: a read racing a write sees an empty or
    partial file, so read again shortly; a file left broken for good (process killed
    mid-write) costs only Mephisto's start/end times, never our own state file (always
    written atomically)."""
    for _ in range(tries):
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            time.sleep(0.1)
    return None


def _agent_data(directory: Path) -> dict:
    """An agent's saved data, read from its files: our task state (``*_state.json``, see
    :mod:`.json_state`) or a static task's ``agent_data.json``, and Mephisto's start/end times.
    Read directly rather than through ``agent.state``, which would need the task's blueprint
    imported (and ParlAI with it) just to read a finished run."""
    data = {}
    # ours first; then a static Mephisto blueprint's (e.g. ParlAI's own acute_eval task)
    for path in [*sorted(directory.glob("*_state.json")), directory / "agent_data.json"]:
        if path.is_file():
            data = _read_json(path, tries=1) or {}
            break
    meta = _read_json(directory / "agent_meta.json") or {}
    return dict(data, start_time=meta.get("task_start"), end_time=meta.get("task_end"))


def agent_dir(run, agent) -> Path:
    """The agent's data directory, as ``agent.get_data_dir()`` makes it (run dir / assignment / agent)
    from the run already at hand: Mephisto's own call builds the agent's TaskRun again, parsing its
    stored YAML config, 28 ms per agent (11 s for 400 agents)."""
    return Path(run.get_run_dir()) / str(agent.assignment_id) / str(agent.db_id)


def stored_units(db, task_name: str, keep: Callable[[dict], bool], *, with_agent: bool = False) -> list[dict[str, Any]]:
    """One dict per agent whose saved data passes ``keep``: ids, worker name, status, times, ``data``
    (and the Mephisto ``agent`` itself with ``with_agent``).

    Work continued in a later agent (a page that came back after a relaunch, see :mod:`.sessions`)
    is read once, from the agent that continues it. No task blueprint needs to be imported: the
    files are read directly."""
    found = []
    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            for agent in db.find_agents(task_run_id=run.db_id):
                found.append((run, agent, _agent_data(agent_dir(run, agent))))
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


def stop_decisions(db, task_name: str) -> list[dict]:
    """The stop decisions the task's units stored (``stop_decision``, :mod:`parlai_acute.monitoring.stopping`),
    oldest first: one per run whose stop rule fired."""
    units = stored_units(db, task_name, lambda data: bool(data.get("stop_decision")))
    return sorted((u["data"]["stop_decision"] for u in units), key=lambda d: d.get("time") or 0)
