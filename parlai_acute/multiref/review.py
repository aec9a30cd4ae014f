"""Multi-reference collection's evidence for the review table (:mod:`parlai_acute.review`): every
reply written (the message checks; time per reply on the server's clock), the gold items' results,
and the sets cut short (left out of the export)."""
from __future__ import annotations


def evidence(units: list[dict]) -> list[dict]:
    """Evidence rows (:data:`parlai_acute.review.evidence.ROW`) of stored multi-reference units (as
    ``mephisto_tasks.multiref.store.unit_data_for_task`` reads them)."""
    rows = []
    for unit in units:
        data = unit["data"]
        results = list(data.get("results") or [])
        current = data.get("current") or {}
        sets = [(r, True) for r in results] + ([(current, False)] if current.get("replies") else [])
        for record, complete in sets:
            if record.get("onboarding"):
                rows.append({"worker": unit["worker_name"], "unit_id": str(unit["unit_id"]),
                             "item": record.get("item_id"), "gold": bool(record.get("gold_passed"))})
                continue
            for reply in record.get("replies") or []:
                rows.append({"worker": unit["worker_name"], "unit_id": str(unit["unit_id"]),
                             "item": record.get("item_id"), "question": "reply", "answer": "written",
                             "seconds": reply.get("server_seconds"), "message": reply.get("text") or "",
                             "excluded": "" if complete else "set cut short (left out of the export)"})
    return rows
