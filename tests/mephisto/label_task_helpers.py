"""Helpers for the SSA labelling and multi-reference task tests: input files and reading a run back."""
from __future__ import annotations

import json
from pathlib import Path

from parlai_acute.mephisto_tasks.live import setup
from parlai_acute.ssa.items import GOLD_ITEMS

XSS = "<img src=x onerror=\"window.__xss=1\"><b>bold?</b> & <script>window.__xss=2</script>"
GOLD = {item["reply"] for item in GOLD_ITEMS}

SSA_ITEMS = [
    {"item_id": "c1:smol", "context": ["Hi! How was your weekend?"], "reply": "Great, I went hiking by the lake.",
     "model": "smollm2_greedy", "context_id": "c1"},
    {"item_id": "c1:generic", "context": ["Hi! How was your weekend?"], "reply": "I don't know.",
     "model": "generic_bot", "context_id": "c1"},
    {"item_id": "c2:smol", "context": ["I love cooking.", "What do you cook?", XSS],
     "reply": "Pasta, mostly. " + XSS, "model": "smollm2_greedy"},
    {"item_id": "c2:generic", "context": ["I love cooking.", "What do you cook?", "Pasta, mostly."],
     "reply": "ok", "model": "generic_bot"},
]


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def label_like_a_person(item) -> tuple[bool, bool]:
    """Gold replies make no sense; "I don't know" / "ok" make sense but are generic; the rest is specific."""
    reply = item["reply"]
    if reply in GOLD:
        return False, False
    return True, reply not in ("I don't know.", "ok")


def open_db(data_dir):
    return setup.open_db(data_dir)
