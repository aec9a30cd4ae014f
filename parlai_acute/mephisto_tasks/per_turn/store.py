"""Read back what the per-turn task stored: the turns table, earlier dialogues for a relaunch, and
ParlAI Conversations logs of every dialogue (so per-turn chats feed ACUTE pairings and metrics).

A dialogue whose state says ``chatting`` or ``partial`` ended before the worker finished it
(left, or the run was stopped): its judged turns are kept and marked ``partial``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from parlai_acute.per_turn.turns import COLUMNS


def unit_data_for_task(db, task_name: str) -> list[dict[str, Any]]:
    """One dict per agent that started onboarding or a dialogue (see :mod:`..stored_units`)."""
    from parlai_acute.mephisto_tasks.live.stored_units import stored_units

    return stored_units(db, task_name, lambda data: data.get("schema", "").startswith("parlai_acute.per_turn")
                        and data.get("status") is not None)


def dialogue_status(data: dict) -> str:
    """complete: the worker finished the chat (a survey left unanswered does not undo that)."""
    return "complete" if data.get("status") in ("complete", "survey") else "partial"


def history(units: list[dict]) -> list[dict]:
    """Earlier dialogues as the scheduler needs them (who, which set, how far, onboarding), each with
    its stored unit (what the stop rule reads again on a relaunch)."""
    rows = []
    for unit in units:
        data = unit["data"]
        ob = data.get("onboarding") or {}
        row = {"worker": str(unit["worker_id"]), "passed_onboarding": bool(ob.get("passed")), "set": None,
               "status": dialogue_status(data), "turns": len(data.get("turns") or []), "unit": unit}
        if data.get("model_set"):
            row["set"] = "|".join(sorted(data["model_set"]))
        rows.append(row)
    return rows


def stop_rows(units: list[dict], protocol: str) -> list[dict]:
    """What the stop rule reads (:mod:`parlai_acute.monitoring.stopping`): the complete dialogues' turns, or
    (interactive SSA, ``protocol`` ssa) their labels; a dialogue counts once, when it is complete."""
    done = [u for u in units if u["data"].get("model_set") and dialogue_status(u["data"]) == "complete"]
    return ssa_label_records(done) if protocol == "ssa" else turns_records(done)


def turns_records(units: list[dict]) -> list[dict]:
    """One record per (dialogue, turn, candidate) in the columns of :mod:`parlai_acute.per_turn.turns`."""
    records = []
    for unit in units:
        data = unit["data"]
        if not data.get("model_set"):
            continue
        model_set = "|".join(sorted(data["model_set"]))
        status = dialogue_status(data)
        for turn in data.get("turns") or []:
            decision = None
            if turn.get("shown_at") and turn.get("decided_at"):
                decision = round(turn["decided_at"] - turn["shown_at"], 4)
            for c in turn["candidates"]:
                incomplete = c["position"] is None
                records.append({
                    "run_id": str(unit["task_run_id"]), "unit_id": str(unit["unit_id"]),
                    "dialogue": data["dialogue_id"], "worker": unit["worker_name"], "turn": turn["turn"],
                    "setting": data["setting"], "protocol": data["protocol"], "model_set": model_set,
                    "model": c["model"], "position": c["position"], "picked": bool(c.get("picked")),
                    "continued": bool(c.get("continued")), "fallback": turn["fallback"], "incomplete": incomplete,
                    "error": c.get("error") or "", "text": c.get("text") or "",
                    "worker_message": turn["worker_message"], "user_reply": turn.get("user_reply") or "",
                    "justification": turn.get("justification") or "", "decision_seconds": decision,
                    "latency_seconds": c.get("latency"), "timestamp": turn.get("decided_at"),
                    "dialogue_status": status})
    assert all(set(r) == set(COLUMNS) for r in records[:1])
    return records


def labels_for_task(db, task_name: str) -> list[dict]:
    """Interactive SSA labels of everything stored for ``task_name`` (for ``ssa analyze``)."""
    return ssa_label_records(unit_data_for_task(db, task_name))


def ratings_for_task(db, task_name: str) -> list[dict]:
    """End-of-chat survey answers of everything stored for ``task_name`` (for ``convai2 analyze``)."""
    return ratings_records(unit_data_for_task(db, task_name))


def turns_for_task(db, task_name: str) -> list[dict]:
    """The turns records of everything stored for ``task_name`` (for ``per-turn analyze``)."""
    return turns_records(unit_data_for_task(db, task_name))


def ssa_label_records(units: list[dict]) -> list[dict]:
    """Interactive SSA (label_mode ssa): one label per model reply, as the SSA labels table has them.

    The item is the reply in its conversation (``dialogue:turn``); its context is the
    conversation before it, worker turns and continuing replies alternating.
    """
    records = []
    for unit in units:
        data = unit["data"]
        said = [m["text"] for m in data.get("messages") or [] if m.get("seed")]
        for turn in data.get("turns") or []:
            said.append(turn["worker_message"])
            shown = next((c for c in turn["candidates"] if c["position"] is not None), None)
            if "ssa" in turn and shown is not None:
                records.append({"item": f"{data['dialogue_id']}:{turn['turn']}", "model": shown["model"],
                                "context": "\n".join(said), "reply": shown["text"], "worker": unit["worker_name"],
                                "sensible": bool(turn["ssa"]["sensible"]), "specific": bool(turn["ssa"]["specific"]),
                                "conversation": data["dialogue_id"], "turn": turn["turn"], "source": "interactive",
                                "timestamp": turn.get("decided_at"), "unit_id": str(unit["unit_id"]),
                                "decision_seconds": (turn["decided_at"] - turn["shown_at"]) if turn.get("shown_at")
                                else None,
                                "run_id": str(unit["task_run_id"])})
            continued = turn["user_reply"] if turn["fallback"] == "user" else next(
                (c["text"] for c in turn["candidates"] if c.get("continued")), "")
            if continued:
                said.append(continued)
    return records


def ratings_records(units: list[dict]) -> list[dict]:
    """End-of-chat survey answers (ConvAI2) in the columns of :mod:`parlai_acute.convai2.ratings`:
    one row per (dialogue, question), each carrying whether the model's persona was picked."""
    records = []
    for unit in units:
        data = unit["data"]
        answers = data.get("survey")
        if not answers or not data.get("model_set"):
            continue
        base = {"dialogue": data["dialogue_id"], "worker": unit["worker_name"], "model": "|".join(data["model_set"]),
                "turns": len(data.get("turns") or []), "timestamp": answers.get("answered_at"),
                "persona_choice_correct": answers.get("persona_correct")}
        for key, score in answers["scores"].items():
            records.append(dict(base, question=key, score=score, reason=answers["reasons"].get(key, "")))
    return records


def episodes(units: list[dict]) -> list[list[dict]]:
    """Each dialogue as a list of turn dicts in ParlAI's Conversations style.

    Worker turns have id ``human``; the turns that continued the conversation have id ``bot``
    -- except a reply the worker wrote (SATA-User), which is theirs: id ``human``, so logs
    readers (:func:`parlai_acute.logs.turn_role`), ACUTE pairings (cut before it) and SSA items
    never credit it to a model. Continuations carry ``per_turn``: the turn index, who wrote the
    continuation (a model, or ``human``), the fallback used and every candidate with its model,
    position, and whether it was picked.
    """
    out = []
    for unit in units:
        data = unit["data"]
        if not data.get("model_set"):
            continue
        turns = [{"id": "bot", "text": m["text"], "seed": True} for m in data.get("messages") or []
                 if m.get("seed")]
        for turn in data.get("turns") or []:
            turns.append({"id": "human", "text": turn["worker_message"]})
            continued = next((c for c in turn["candidates"] if c.get("continued")), None)
            text = turn["user_reply"] if turn["fallback"] == "user" else (continued or {}).get("text", "")
            if not text:
                continue
            written = turn["fallback"] == "user"  # the worker wrote it: their turn, never a model's
            turns.append({"id": "human" if written else "bot", "text": text, "per_turn": {
                "turn": turn["turn"], "fallback": turn["fallback"],
                "continued_by": "human" if written else continued["model"],
                "candidates": [{k: c.get(k) for k in ("model", "text", "position", "picked", "continued", "error")}
                               for c in turn["candidates"]]}})
        out.append({"turns": turns, "dialogue_id": data["dialogue_id"], "worker": unit["worker_name"],
                    "model_set": list(data["model_set"]), "status": dialogue_status(data),
                    "seed": data.get("seed") or {}, "worker_context": data.get("worker_context", ""),
                    "config": data.get("config") or {}})
    return out


def write_conversations(units: list[dict], outfile: str | Path) -> Path | None:
    """All dialogues as one ParlAI Conversations log (``.jsonl`` + ``.metadata``), written atomically."""
    from parlai.core.message import Message

    from parlai_acute.worlds.conversations_log import save_conversations

    logs = []
    for ep in episodes(units):
        parleys, turns = [], ep["turns"]
        context = [Message({"id": "context", "text": ep["worker_context"], "episode_done": False})] \
            if ep["worker_context"] else []
        if context:
            parleys.append(context)
        for i in range(0, len(turns), 2):
            pair = []
            for t in turns[i:i + 2]:
                msg = Message(dict(t, episode_done=False, dialogue_id=ep["dialogue_id"], worker=ep["worker"],
                                   model_set=ep["model_set"], dialogue_status=ep["status"]))
                pair.append(msg)
            parleys.append(pair)
        if parleys:
            logs.append(parleys)
    if not logs:
        return None
    first = episodes(units)[0]["config"]
    return save_conversations(logs, outfile, {"per_turn_config": first}, self_chat=False)
