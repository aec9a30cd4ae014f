"""SIMULATED labellers for the SSA task: Debian chromium (via Playwright) clicking like a person.

For demos, tests and benchmarks only; names get the ``simulated-`` prefix. A worker opens the
page and, for every item, asks ``decide(item)`` for (sensible, specific) and clicks the answers
in order. ``item`` is what the page shows (``window.__itemView["item"]``): context turns and the
reply as text, never model names -- a policy must judge from the text, like a person.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.browser import worker_url

Decide = Callable[[dict], tuple]


@dataclass
class LabelRun:
    worker: str
    url: str
    made: list[dict] = field(default_factory=list)  # {"position", "context", "reply", "sensible", "specific"}
    status: str = ""  # complete, blocked, unavailable, working (left early)
    finished: bool = False
    message: str = ""


def wait_view(page, condition: str, ms: int):
    page.wait_for_function(f"() => {{ const v = window.__itemView; return document.body.dataset.finished === 'true'"
                           f" || document.body.dataset.unavailable === 'true' || (v && ({condition})); }}", timeout=ms)
    return page.evaluate("window.__itemView")


def run_labeller(chromium, base_url: str, worker: str, assignment: str, decide: Decide, *, timeout: float = 60.0,
                 leave_after: int | None = None, page_hook: Callable | None = None) -> LabelRun:
    """Label every item of one unit as ``worker`` (or close the page after ``leave_after`` items)."""
    url = worker_url(base_url, worker, assignment)
    run = LabelRun(worker=url.split("worker_id=")[1].split("&")[0], url=url)
    page = chromium.new_page(viewport={"width": 1000, "height": 800})
    page.on("dialog", lambda dialog: dialog.accept())  # the mock provider alerts on submit
    ms = int(timeout * 1000)
    try:
        page.goto(url)
        view = wait_view(page, "v.status", ms)
        while True:
            if page.evaluate("document.body.dataset.unavailable === 'true'"):
                run.status = "unavailable"
                break
            if view["status"] != "working":
                view = wait_view(page, "false", ms)  # until the page has submitted
                run.status, run.finished = view["status"], True
                break
            if leave_after is not None and len(run.made) >= leave_after:
                run.status = "working"
                break
            if page_hook is not None:
                page_hook(page, view)
            sensible, specific = decide(view["item"])
            shown = {"position": view["position"], "context": [t["text"] for t in view["item"]["context"]],
                     "reply": page.inner_text("#reply")}
            version = view["version"]
            if sensible:
                page.click("#sensible-yes")
                page.click("#specific-yes" if specific else "#specific-no")
            else:
                page.click("#sensible-no")
            run.made.append(dict(shown, sensible=bool(sensible), specific=bool(sensible and specific)))
            view = wait_view(page, f"v.version > {version} && (v.error || v.ack !== null)", ms)
            if view.get("error"):
                raise AssertionError(f"{run.worker}: the server refused: {view['error']}")
        run.message = page.inner_text("#status")
        return run
    finally:
        with contextlib.suppress(Exception):
            page.close()
