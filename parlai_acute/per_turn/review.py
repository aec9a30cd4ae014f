"""Per-turn evaluation's evidence for the review table (:mod:`parlai_acute.review`): per judged turn,
the choice (its position when one reply was picked of several, the pattern of picks for SATA's
straight-lining), the decision time and the justification; the worker's messages and own replies
for the message checks; the practice (onboarding) result; interactive SSA labels when the run
labelled replies; and the stop rule's exclusion: a dialogue counts once it is complete."""
from __future__ import annotations

def evidence(units: list[dict]) -> list[dict]:
    """Evidence rows (:data:`parlai_acute.review.evidence.ROW`) of stored per-turn units (as
    ``mephisto_tasks.per_turn.store.unit_data_for_task`` reads them)."""
    rows = []
    for unit in units:
        data, worker, unit_id = unit["data"], unit["worker_name"], str(unit["unit_id"])
        practice = data.get("onboarding") or {}
        if practice.get("picked") is not None or "passed" in practice:
            rows.append({"worker": worker, "unit_id": unit_id, "item": f"practice:{practice.get('item')}",
                         "gold": bool(practice.get("passed"))})
        complete = data.get("status") in ("complete", "survey")
        protocol = data.get("protocol", "")
        for turn in data.get("turns") or []:
            shown = [c for c in turn.get("candidates") or [] if c.get("position") is not None]
            picked = sorted(c["position"] for c in shown if c.get("picked"))
            seconds = None
            if turn.get("shown_at") and turn.get("decided_at"):
                seconds = turn["decided_at"] - turn["shown_at"]
            single = len(picked) == 1 and len(shown) > 1
            answer = ("none" if not picked else "all" if len(picked) == len(shown)
                      else "positions " + ",".join(map(str, picked))) if shown else None
            if "ssa" in turn:  # interactive SSA: the label of the one reply shown is the answer
                label = turn["ssa"]
                answer = ("not sensible" if not label.get("sensible") else
                          "sensible, specific" if label.get("specific") else "sensible, generic")
            rows.append({"worker": worker, "unit_id": unit_id, "item": f"{data.get('dialogue_id')}:{turn['turn']}",
                         "question": protocol, "answer": answer, "seconds": seconds,
                         "first": (picked[0] == 0) if single else None, "options": len(shown) if single else None,
                         "reason": turn.get("justification") if turn.get("justification") is not None else None,
                         "straight": protocol.startswith("sata") or protocol == "sm" or "ssa" in turn,
                         "excluded": "" if complete else "partial dialogue (the stop rule counts complete ones)"})
            for text in (turn.get("worker_message"), turn.get("user_reply")):
                if text:
                    rows.append({"worker": worker, "unit_id": unit_id, "message": text})
    return rows
