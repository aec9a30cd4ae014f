"""Read back what the SSA labelling task stored: the labels table, and earlier labels for a relaunch.

:func:`labels_for_task` returns one record per label in the columns of the SSA labels table
(:mod:`parlai_acute.ssa.labels`: ``context`` is the turns joined with newlines, ParlAI's history
convention; ``decision_seconds`` from the item being shown to the label, server clock). Gold (onboarding)
items are not labels of any model and are left out; labels stored in a unit cut short count.
"""
from __future__ import annotations

from typing import Any

COLUMNS = ["item", "model", "worker", "sensible", "specific", "source", "context_id", "context", "reply",
           "conversation", "turn", "run_id", "unit_id", "decision_seconds", "timestamp"]


def unit_data_for_task(db, task_name: str) -> list[dict[str, Any]]:
    """One dict per agent that was given a plan (see :mod:`..stored_units`)."""
    from parlai_acute.mephisto_tasks.ssa.state import SsaLabelAgentState
    from parlai_acute.mephisto_tasks.live.stored_units import stored_units

    return stored_units(db, task_name, lambda data: data.get("schema") == SsaLabelAgentState.SCHEMA
                        and data.get("status") is not None)


def history(units: list[dict]) -> list[dict]:
    """Earlier labels as the scheduler needs them (who labelled which item, gold results), and each
    label as a labels-table row (what the stop rule reads again on a relaunch)."""
    rows = []
    for unit in units:
        for r in unit["data"].get("results") or []:
            if r["onboarding"]:
                rows.append({"worker": str(unit["worker_id"]), "passed_onboarding": bool(r.get("gold_passed"))})
            else:
                rows.append({"worker": str(unit["worker_id"]), "item": r["item_id"], "done": True})
        rows += [{"worker": str(unit["worker_id"]), "label": label} for label in labels_records([unit])]
    return rows


def labels_records(units: list[dict]) -> list[dict]:
    records = []
    for unit in units:
        for r in unit["data"].get("results") or []:
            if r["onboarding"]:
                continue
            shown, answered = r.get("shown_at"), r["answered_at"]
            records.append({"item": r["item_id"], "model": r["model"], "worker": unit["worker_name"],
                            "sensible": bool(r["sensible"]), "specific": bool(r["specific"]),
                            "source": r.get("source", "static"), "context_id": r.get("context_id", ""),
                            "context": "\n".join(r["context"]), "reply": r["reply"],
                            "conversation": r.get("conversation", ""), "turn": r.get("turn"),
                            "run_id": str(unit["task_run_id"]), "unit_id": str(unit["unit_id"]),
                            "decision_seconds": round(answered - shown, 4) if shown else None,
                            "timestamp": answered})
    return records


def labels_for_task(db, task_name: str) -> list[dict]:
    """Every label stored for ``task_name``, in the SSA labels table's columns."""
    return labels_records(unit_data_for_task(db, task_name))


def gold_results(units: list[dict]) -> list[dict]:
    """Each gold item answered: worker, passed, and the answers given."""
    return [{"worker": unit["worker_name"], "passed": bool(r.get("gold_passed")), "sensible": r["sensible"],
             "specific": r["specific"]}
            for unit in units for r in unit["data"].get("results") or [] if r["onboarding"]]
