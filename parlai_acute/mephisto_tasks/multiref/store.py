"""Read back what the multi-reference task stored: tidy reply records, the DailyDialog multi-reference
export, per-worker timing, and earlier work for a relaunch.

A *set* is one worker's replies to one context. A set cut short (the worker left, the run was
stopped) is kept in the stored data and in :func:`reply_records` (``set_complete`` false), but
left out of the export: the modes compare sets of exactly R replies.
"""
from __future__ import annotations

import statistics
from typing import Any

REPLY_COLUMNS = ["worker", "mode", "context_id", "dialogue_id", "turn_index", "reply_index", "text", "set_complete",
                 "received_at", "server_seconds", "fast", "warned", "client_reported", "client_keys",
                 "client_clicks", "client_typing_seconds", "client_via", "unit_id", "run_id"]
WORKER_COLUMNS = ["worker", "replies", "sets_complete", "sets_partial", "median_server_seconds",
                  "median_client_typing_seconds", "median_client_keys", "fast_replies", "warned_replies"]


def unit_data_for_task(db, task_name: str) -> list[dict[str, Any]]:
    """One dict per agent that was given a plan (see :mod:`..stored_units`)."""
    from parlai_acute.mephisto_tasks.multiref.state import MultirefAgentState
    from parlai_acute.mephisto_tasks.live.stored_units import stored_units

    return stored_units(db, task_name, lambda data: data.get("schema") == MultirefAgentState.SCHEMA
                        and data.get("status") is not None)


def _sets(unit: dict):
    """(context record, replies, complete) for every set of the unit, finished or cut short."""
    data = unit["data"]
    for r in data.get("results") or []:
        yield r, r["replies"], True
    current = data.get("current") or {}
    if current.get("replies"):
        entry = data["plan"][len(data.get("results") or [])]
        yield dict(current, item_id=entry["item_id"], index=entry["index"]), current["replies"], False


def history(units: list[dict]) -> list[dict]:
    """Earlier sets as the scheduler needs them: complete ones count, cut-short ones are never given
    to the same worker again."""
    return [{"worker": str(unit["worker_id"]), "item": record["item_id"], "done": complete}
            for unit in units for record, _, complete in _sets(unit)]


def _typing_seconds(timing: dict):
    keys, submitted = timing.get("keys") or [], timing.get("submitted")
    return round((submitted - keys[0]) / 1000.0, 4) if keys and submitted is not None else None


def reply_records(units: list[dict]) -> list[dict]:
    """One record per stored reply (tidy), complete sets and cut-short ones alike."""
    rows = []
    for unit in units:
        mode = (unit["data"].get("config") or {}).get("mode", "")
        for record, replies, complete in _sets(unit):
            context_id, dialogue_id, turn = record["item_id"], record.get("dialogue_id"), record.get("turn_index")
            for reply in replies:
                timing = reply.get("client_timing") or {}
                rows.append({"worker": unit["worker_name"], "mode": mode, "context_id": context_id,
                             "dialogue_id": dialogue_id, "turn_index": turn, "reply_index": reply["index"],
                             "text": reply["text"], "set_complete": complete, "received_at": reply["received_at"],
                             "server_seconds": reply["server_seconds"], "fast": reply["fast"],
                             "warned": reply["warned"], "client_reported": bool(timing.get("client_reported")),
                             "client_keys": len(timing.get("keys") or []),
                             "client_clicks": len(timing.get("clicks") or []),
                             "client_typing_seconds": _typing_seconds(timing), "client_via": timing.get("via"),
                             "unit_id": str(unit["unit_id"]), "run_id": str(unit["task_run_id"])})
    return rows


def worker_timing(rows: list[dict]) -> list[dict]:
    """Per worker: replies, sets, median seconds per reply (server clock; client typing as reported), flags."""
    out = []
    for worker in sorted({r["worker"] for r in rows}):
        mine = [r for r in rows if r["worker"] == worker]
        sets = {(r["unit_id"], r["context_id"]): r["set_complete"] for r in mine}
        typing = [r["client_typing_seconds"] for r in mine if r["client_typing_seconds"] is not None]
        out.append({"worker": worker, "replies": len(mine), "sets_complete": sum(sets.values()),
                    "sets_partial": sum(not c for c in sets.values()),
                    "median_server_seconds": round(statistics.median(r["server_seconds"] for r in mine), 4),
                    "median_client_typing_seconds": round(statistics.median(typing), 4) if typing else None,
                    "median_client_keys": statistics.median(r["client_keys"] for r in mine),
                    "fast_replies": sum(r["fast"] for r in mine), "warned_replies": sum(r["warned"] for r in mine)})
    return out


def references_for_task(db, task_name: str) -> list[dict]:
    """The rows of the references table (:mod:`parlai_acute.multiref.references`) a run stored: every
    reply of a complete set to a context with an original next turn (gold items left out)."""
    rows = []
    for unit in unit_data_for_task(db, task_name):
        mode = (unit["data"].get("config") or {}).get("mode", "")
        for r in unit["data"].get("results") or []:
            if r["onboarding"] or not r.get("reference"):
                continue
            rows += [{"mode": mode, "context_id": r["item_id"], "context": list(r["context"]),
                      "original": r["reference"], "reply": reply["text"], "worker": unit["worker_name"],
                      "dialogue": r.get("dialogue_id") or ""} for reply in r["replies"]]
    return rows


def multiref_dialogues(units: list[dict]) -> list[dict]:
    """The complete sets in the DailyDialog multi-reference layout, one object per dialogue::

        {"id": "dd-17", "fold": "test", "modes": ["4R1W"], "dialogue": [
            {"text": "..."},                                           # a context turn not collected for
            {"text": "...", "responses": ["...", ...], "response_workers": ["w1", ...]},
            {"text": "<the original reply>"}]}

    A dialogue's turns are its longest collected context plus that context's original reply.
    """
    dialogues: dict[str, dict] = {}
    for unit in units:
        mode = (unit["data"].get("config") or {}).get("mode", "")
        for r in unit["data"].get("results") or []:
            if r["onboarding"]:
                continue
            d = dialogues.setdefault(r["dialogue_id"], {"order": r["index"], "turns": [], "responses": {},
                                                        "modes": set()})
            d["order"] = min(d["order"], r["index"])
            d["modes"].add(mode)
            turns = list(r["context"]) + ([r["reference"]] if r["reference"] else [])
            if len(turns) > len(d["turns"]):
                d["turns"] = turns
            got = d["responses"].setdefault(r["turn_index"], [])
            got.extend((reply["text"], unit["worker_name"]) for reply in r["replies"])
    out = []
    for dialogue_id, d in sorted(dialogues.items(), key=lambda kv: kv[1]["order"]):
        turns = []
        for i, text in enumerate(d["turns"]):
            turn = {"text": text}
            if i in d["responses"]:
                turn["responses"] = [t for t, _ in d["responses"][i]]
                turn["response_workers"] = [w for _, w in d["responses"][i]]
            turns.append(turn)
        out.append({"id": dialogue_id, "fold": "test", "modes": sorted(d["modes"]), "dialogue": turns})
    return out
