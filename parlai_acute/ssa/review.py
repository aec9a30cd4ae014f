"""SSA labelling's evidence for the review table (:mod:`parlai_acute.review`): one row per label
(sensible/specific as the answer: straight-lining and leave-one-out agreement on the same item),
its time, and the gold items' results."""
from __future__ import annotations


def answer(sensible, specific) -> str:
    return "not sensible" if not sensible else ("sensible, specific" if specific else "sensible, generic")


def evidence(units: list[dict]) -> list[dict]:
    """Evidence rows (:data:`parlai_acute.review.evidence.ROW`) of stored SSA labelling units (as
    ``mephisto_tasks.ssa.store.unit_data_for_task`` reads them)."""
    rows = []
    for unit in units:
        for r in unit["data"].get("results") or []:
            shown, answered = r.get("shown_at"), r.get("answered_at")
            rows.append({"worker": unit["worker_name"], "unit_id": str(unit["unit_id"]), "item": r["item_id"],
                         "question": "ssa", "answer": answer(r.get("sensible"), r.get("specific")),
                         "seconds": answered - shown if shown and answered else None,
                         "gold": bool(r.get("gold_passed")) if r.get("onboarding") else None,
                         "straight": True, "excluded": ""})
    return rows
