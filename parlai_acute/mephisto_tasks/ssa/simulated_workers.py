"""SIMULATED labellers for the SSA task: Debian chromium (via Playwright) clicking like a person.

For demos, tests and benchmarks only; names get the ``simulated-`` prefix. A worker opens the
page and, for every item, asks ``decide(item)`` for (sensible, specific) and clicks the answers
in order. ``item`` is what the page shows (``window.__itemView["item"]``): context turns and the
reply as text, never model names -- a policy must judge from the text, like a person.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.live.browser import run_item_unit

Decide = Callable[[dict], tuple]


@dataclass
class LabelRun:
    worker: str = ""
    url: str = ""
    made: list[dict] = field(default_factory=list)  # {"position", "context", "reply", "sensible", "specific"}
    status: str = ""  # complete, blocked, unavailable, working (left early)
    finished: bool = False
    message: str = ""


def run_labeller(chromium, base_url: str, worker: str, assignment: str, decide: Decide, *, timeout: float = 60.0,
                 leave_after: int | None = None, page_hook: Callable | None = None) -> LabelRun:
    """Label every item of one unit as ``worker`` (or close the page after ``leave_after`` items)."""

    def act(page, view) -> dict:
        sensible, specific = decide(view["item"])
        shown = {"position": view["position"], "context": [t["text"] for t in view["item"]["context"]],
                 "reply": page.inner_text("#reply")}
        if sensible:
            page.click("#sensible-yes")
            page.click("#specific-yes" if specific else "#specific-no")
        else:
            page.click("#sensible-no")
        return dict(shown, sensible=bool(sensible), specific=bool(sensible and specific))

    return run_item_unit(chromium, base_url, worker, assignment, LabelRun(), act, timeout=timeout,
                         leave_after=leave_after, page_hook=page_hook, on_error=lambda run, view: True)
