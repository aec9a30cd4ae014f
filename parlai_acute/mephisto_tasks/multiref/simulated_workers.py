"""SIMULATED writers for the multi-reference task: Debian chromium (via Playwright) typing like a person.

For demos, tests and benchmarks only; names get the ``simulated-`` prefix. For each context the
worker asks ``write(item, j)`` for reply j (1-based), types it key by key (so the page times real
key presses) and submits it with Enter or the button, alternating. ``item`` is what the page
shows (``window.__itemView["item"]``): the context turns and the replies written so far.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.browser import worker_url
from parlai_acute.mephisto_tasks.ssa_label.simulated_workers import wait_view

Write = Callable[[dict, int], str]


@dataclass
class WriteRun:
    worker: str
    url: str
    made: list[dict] = field(default_factory=list)  # {"position", "context", "index", "typed", "text", "via"}
    warnings: list[str] = field(default_factory=list)
    status: str = ""
    finished: bool = False
    message: str = ""


def run_writer(chromium, base_url: str, worker: str, assignment: str, write: Write, *, timeout: float = 60.0,
               leave_after: int | None = None, page_hook: Callable | None = None) -> WriteRun:
    """Write every reply of one unit as ``worker`` (or close the page after ``leave_after`` replies)."""
    url = worker_url(base_url, worker, assignment)
    run = WriteRun(worker=url.split("worker_id=")[1].split("&")[0], url=url)
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
                view = wait_view(page, "false", ms)
                run.status, run.finished = view["status"], True
                break
            if leave_after is not None and len(run.made) >= leave_after:
                run.status = "working"
                break
            if page_hook is not None:
                page_hook(page, view)
            item = view["item"]
            index = len(item["written"]) + 1
            text = write(item, index)
            via = "enter" if len(run.made) % 2 == 0 else "button"
            page.click("#reply")
            page.locator("#reply").press_sequentially(text)
            version = view["version"]
            if via == "enter":
                page.press("#reply", "Enter")
            else:
                page.click("#add")
            run.made.append({"position": view["position"], "context": [t["text"] for t in item["context"]],
                             "index": index, "typed": text, "text": " ".join(text.split()), "via": via})
            view = wait_view(page, f"v.version > {version} && (v.error || v.ack !== null)", ms)
            if view.get("error"):
                raise AssertionError(f"{run.worker}: the server refused: {view['error']}")
            if view.get("warning"):
                run.warnings.append(view["warning"])
        run.message = page.inner_text("#status")
        return run
    finally:
        with contextlib.suppress(Exception):
            page.close()
