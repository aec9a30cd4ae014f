"""Read back what the ACUTE-Eval task stored, from every run of a task name, finished or not
(judgments made in a unit that was cut short count too: see :mod:`..stored_units`)."""
from __future__ import annotations

from typing import Any


def unit_data_for_task(db, task_name: str) -> list[dict[str, Any]]:
    """One dict per agent that stored anything, in the shape ``judgments_from_unit_data`` reads."""
    from parlai_acute.mephisto_tasks.acute_eval import blueprint  # noqa: F401  (registers the blueprint)
    from parlai_acute.mephisto_tasks.stored_units import stored_units

    # our live state keeps "comparisons" at the top; a static task's submit nests it in "outputs"
    return stored_units(db, task_name, lambda data: bool(data.get("comparisons")
                                                         or (data.get("outputs") or {}).get("comparisons")))


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
