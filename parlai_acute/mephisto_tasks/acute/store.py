"""Read back what the ACUTE-Eval task stored, from every run of a task name, finished or not
(judgments made in a unit that was cut short count too: see :mod:`..stored_units`).

The settings a run was launched with are stored too: Mephisto 1.1.1's Operator writes the
run's whole Hydra config (``mephisto.blueprint/architect/provider/task``) as YAML into the
``init_params`` column of the ``task_runs`` table, read back as ``TaskRun.args``.
:func:`run_settings` returns the blueprint's part and :func:`stored_cap` the per-worker
cap the run enforced, so an analysis of the run applies the same cap.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from parlai_acute.acute.judgments import judgments_from_unit_data
from parlai_acute.errors import UserError


def unit_data_for_task(db, task_name: str) -> list[dict[str, Any]]:
    """One dict per agent that stored anything, in the shape ``judgments_from_unit_data`` reads."""
    from parlai_acute.mephisto_tasks.live.stored_units import stored_units

    # our live state keeps "comparisons" at the top; a static task's submit nests it in "outputs"
    return stored_units(db, task_name, lambda data: bool(data.get("comparisons")
                                                         or (data.get("outputs") or {}).get("comparisons")))


def review_units(db, task_name: str) -> tuple[list[dict[str, Any]], dict]:
    """The stored units and the per-worker cap the run was launched with (the review's exclusions
    are the analysis's: :mod:`parlai_acute.acute.review`)."""
    return unit_data_for_task(db, task_name), {"per_worker_cap": stored_cap(db, task_name)[0]}


def history(units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Earlier judgments as the scheduler needs them (who judged which pair, onboarding results,
    which model won: adaptive selection and the stop rule continue from them)."""
    rows = []
    for unit in units:
        for comp in unit["data"].get("comparisons", []):
            rows.append({"worker": str(unit["worker_id"]), "pair_id": comp["pairing"]["pair_id"],
                         "is_onboarding": comp["pairing"]["is_onboarding"],
                         "onboarding_correct": comp.get("onboarding_correct"),
                         "models": comp["pairing"].get("speakers_to_eval"), "winner": comp.get("choice"),
                         "dialogues": comp["pairing"].get("dialogue_ids"),
                         "outcome": comp.get("outcome") or "win",
                         "timestamp": comp.get("end_time")})
    return rows


def judgments_for_task(db, task_name: str) -> pd.DataFrame:
    """Tidy judgments table (parlai_acute.acute.judgments schema) of everything stored for
    ``task_name``; empty while nothing is stored (a live run's progress)."""
    return judgments_from_unit_data(unit_data_for_task(db, task_name))


def judgment_records(db, task_name: str) -> tuple[list[dict], dict]:
    """The judgments of :func:`judgments_for_task` as records, and the per-worker cap the run was
    launched with (what the protocol's estimands apply; for ``parlai_acute.api``)."""
    return (judgments_for_task(db, task_name).to_dict(orient="records"),
            {"per_worker_cap": stored_cap(db, task_name)})


def judgments_from_mephisto_db(task_name: str, db=None) -> pd.DataFrame:
    """Every judgment stored for ``task_name`` in the Mephisto database ``db`` (default:
    Mephisto's configured one, :func:`..database.open_mephisto_db`), from every run of the
    task, finished units or not: what an analysis of the run reads.

    Each comparison is stored the moment it is submitted, so a unit cut short (the worker
    left, the launcher was stopped) still holds real judgments: they count. An unknown task
    or one without judgments is a UserError.
    """
    if db is None:
        from parlai_acute.mephisto_tasks.live.database import open_mephisto_db

        db = open_mephisto_db()
    if not db.find_tasks(task_name=task_name):
        known = sorted({task.task_name for task in db.find_tasks()})
        raise UserError(f"no Mephisto task named {task_name!r} (known: {', '.join(known) or 'none'}); "
                        f"pass the task name used by `parlai-acute acute launch`")
    df = judgments_for_task(db, task_name)
    if df.empty:
        raise UserError(f"Mephisto task {task_name!r} has no judgments yet; wait for workers to "
                        f"submit, or check the run with `mephisto review`")
    return df


def run_settings(db, task_name: str) -> list[dict[str, Any]]:
    """The blueprint settings of each run of ``task_name`` (oldest first), as stored by
    Mephisto when the run was launched: {"task_run_id", "blueprint": {...}}. Runs stored
    without settings give an empty ``blueprint``."""
    from omegaconf import OmegaConf

    runs = []
    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            blueprint = OmegaConf.select(run.args, "blueprint", default=None) if OmegaConf.is_config(run.args) else None
            settings = OmegaConf.to_container(blueprint, resolve=True) if OmegaConf.is_config(blueprint) else {}
            runs.append({"task_run_id": str(run.db_id), "blueprint": settings})
    return sorted(runs, key=lambda r: int(r["task_run_id"]) if r["task_run_id"].isdigit() else r["task_run_id"])


def stored_cap(db, task_name: str) -> tuple[int | None, str]:
    """The per-worker cap the runs of ``task_name`` enforced, and where it came from.

    Each run's ``max_judgments_per_worker``; when unset, the run's scheduler used the number
    of model pairs in its pairings file, read from that file if it is still there. Over
    several runs the largest cap (the scheduler enforces one cap over all runs, so no
    worker can exceed the largest). ``(None, reason)`` when no run says.
    """
    from parlai_acute.mephisto_tasks.acute.scheduler import model_pairs

    caps, sources = [], []
    for run in run_settings(db, task_name):
        blueprint = run["blueprint"]
        cap = blueprint.get("max_judgments_per_worker")
        if cap is not None:
            caps.append(int(cap))
            sources.append(f"task run {run['task_run_id']}: mephisto.blueprint.max_judgments_per_worker={cap}")
            continue
        pairings = blueprint.get("pairings_file")
        if pairings and Path(pairings).is_file():
            from parlai_acute.acute.pairings import read_pairings

            cap = model_pairs(read_pairings(pairings))
            caps.append(cap)
            sources.append(f"task run {run['task_run_id']}: default, {cap} model pairs in {pairings}")
    if not caps:
        return None, "no run of the task recorded its per-worker cap"
    best = max(caps)
    return best, next(s for c, s in zip(caps, sources) if c == best)


def run_pairings_file(task_name: str, database_path=None) -> str | None:
    """The pairings file the latest run of ``task_name`` was launched with (None if unknown)."""
    from parlai_acute.mephisto_tasks.live.database import open_mephisto_db

    files = [r["blueprint"].get("pairings_file") for r in run_settings(open_mephisto_db(database_path), task_name)]
    return next((f for f in reversed(files) if f), None)
