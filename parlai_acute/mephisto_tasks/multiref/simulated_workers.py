"""SIMULATED writers for the multi-reference task: Debian chromium (via Playwright) typing like a person.

For demos, tests and benchmarks only; names get the ``simulated-`` prefix. For each context the
worker asks ``write(item, j)`` for reply j (1-based), types it key by key (so the page times real
key presses) and submits it with Enter or the button, alternating. ``item`` is what the page
shows (``window.__itemView["item"]``): the context turns and the replies written so far.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.live.browser import run_item_unit

Write = Callable[[dict, int], str]


@dataclass
class WriteRun:
    worker: str = ""
    url: str = ""
    made: list[dict] = field(default_factory=list)  # {"position", "context", "index", "typed", "text", "via"}
    warnings: list[str] = field(default_factory=list)
    status: str = ""
    finished: bool = False
    message: str = ""


def run_writer(chromium, base_url: str, worker: str, assignment: str, write: Write, *, timeout: float = 60.0,
               leave_after: int | None = None, page_hook: Callable | None = None) -> WriteRun:
    """Write every reply of one unit as ``worker`` (or close the page after ``leave_after`` replies)."""
    run = WriteRun()

    def act(page, view) -> dict:
        item = view["item"]
        index = len(item["written"]) + 1
        text = write(item, index)
        via = "enter" if len(run.made) % 2 == 0 else "button"
        page.click("#reply")
        page.locator("#reply").press_sequentially(text)
        if via == "enter":
            page.press("#reply", "Enter")
        else:
            page.click("#add")
        return {"position": view["position"], "context": [t["text"] for t in item["context"]], "index": index,
                "typed": text, "text": " ".join(text.split()), "via": via}

    def refused(run, view):
        raise AssertionError(f"{run.worker}: the server refused: {view['error']}")

    return run_item_unit(chromium, base_url, worker, assignment, run, act, timeout=timeout, leave_after=leave_after,
                         page_hook=page_hook, on_error=refused)
