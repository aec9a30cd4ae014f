"""Gold items of the SSA labelling task: a context and a plainly nonsensical reply.

A worker who says such a reply makes sense fails, is told so and gets the block qualification
(as in ACUTE-Eval and the per-turn task). The gold item is the first item of a worker's first
unit and looks like any other item. Written for this project; a lab can pass its own JSON list
of ``{"context": [...], "reply": "...", "sensible": false}`` (optionally ``"specific"``).
"""
from __future__ import annotations

import json
from pathlib import Path

from parlai_acute.errors import UserError

ITEMS = [
    {"context": ["Hi! I just got back from a week of hiking in the Alps."],
     "reply": "Bananas are yellow because the sea is made of glass.", "sensible": False},
    {"context": ["What are you cooking tonight?", "Pasta with tomato sauce, I think.",
                 "Nice, do you make the sauce yourself?"],
     "reply": "Purple seven jumps over the quiet Tuesday of my car.", "sensible": False},
    {"context": ["My sister is getting married next month and I have to give a speech."],
     "reply": "The the the the the the the.", "sensible": False},
]


def load_items(path: str | None) -> list[dict]:
    """The packaged gold items, or a lab's own JSON list of the same objects."""
    if not path:
        return ITEMS
    try:
        items = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the onboarding file {path}: {exc}; pass a JSON list of gold items") from None
    if not isinstance(items, list) or not items:
        raise UserError(f"onboarding file {path} must be a non-empty JSON list of gold items")
    for i, item in enumerate(items):
        ok = (isinstance(item, dict) and isinstance(item.get("context"), list) and item["context"]
              and all(isinstance(t, str) and t.strip() for t in item["context"])
              and isinstance(item.get("reply"), str) and item["reply"].strip()
              and isinstance(item.get("sensible"), bool) and isinstance(item.get("specific", False), bool))
        if not ok:
            raise UserError(f"onboarding file {path}, item {i}: needs context (non-empty list of turns), reply "
                            f"and sensible (true/false)")
    return items


def passed(item: dict, sensible: bool, specific: bool) -> bool:
    """Did the worker give the gold answer (sensibleness, and specificity where the item says)?"""
    if sensible != item["sensible"]:
        return False
    return "specific" not in item or specific == item["specific"]
