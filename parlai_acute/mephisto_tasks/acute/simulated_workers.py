"""SIMULATED crowdworkers: Debian chromium (via Playwright) doing the ACUTE-Eval page like a person.

For demos and tests only. Every worker name gets the prefix ``simulated-`` so their judgments
can never be mistaken for people's. A worker opens the page, waits for each comparison,
asks ``decide(view)`` for a side and a reason, clicks and types them, submits, and goes on
until the page says it is finished (or that there is no work for them).

``view`` is what the page shows (``window.__acuteView``, see :mod:`.runner`): the question,
``comparison.position``/``n`` and both sides' turns with ``evaluated`` flags -- never the
model names, exactly like a person, so ``decide`` must judge from the text.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.live.browser import PREFIX, browser, worker_url  # noqa: F401  (re-used by tests)

Decide = Callable[[dict], "tuple[str, str]"]  # view -> ("left" | "right", reason)


@dataclass
class WorkerRun:
    worker: str
    url: str
    made: list[dict] = field(default_factory=list)  # {"position", "choice", "reason", "view"}
    finished: bool = False  # the page said "thank you" after submitting the unit
    unavailable: bool = False  # the page said there is no work / not qualified
    message: str = ""  # the last status line shown


def run_worker(chromium, base_url: str, worker: str, assignment: str, decide: Decide, *,
               timeout: float = 30.0, screenshot: str | None = None, max_comparisons: int | None = None,
               page_hook: Callable | None = None) -> WorkerRun:
    """Do one unit as ``worker``; stop after ``max_comparisons`` (leaving the page) if given."""
    url = worker_url(base_url, worker, assignment)
    run = WorkerRun(worker=url.split("worker_id=")[1].split("&")[0], url=url)
    page = chromium.new_page(viewport={"width": 1200, "height": 900})
    page.on("dialog", lambda dialog: dialog.accept())  # the mock provider alerts on submit
    try:
        page.goto(url)
        ms = int(timeout * 1000)
        while True:
            page.wait_for_function(
                "() => document.body.dataset.finished === 'true' || document.body.dataset.unavailable === 'true'"
                " || (window.__acuteView && !window.__acuteView.finished"
                "     && !document.getElementById('task').hidden && !document.getElementById('submit').disabled)",
                timeout=ms)
            run.message = page.inner_text("#status")
            if page.evaluate("document.body.dataset.unavailable === 'true'"):
                run.unavailable = True
                return run
            if page.evaluate("document.body.dataset.finished === 'true'"):
                run.finished = True
                return run
            view = page.evaluate("window.__acuteView")
            if page_hook is not None:
                page_hook(page, view)
            if max_comparisons is not None and len(run.made) >= max_comparisons:
                return run
            side, reason = decide(view)
            position = view["comparison"]["position"]
            page.check(f"#choice-{side}")
            page.fill("#reason", reason)
            page.click("#submit")
            page.wait_for_function(
                f"() => window.__acuteView && (window.__acuteView.done >= {position} || window.__acuteView.error)",
                timeout=ms)
            error = page.evaluate("window.__acuteView.error")
            if error:
                raise AssertionError(f"{run.worker}: the page refused the judgment: {error}")
            run.made.append({"position": position, "choice": side, "reason": reason, "view": view})
            if screenshot and len(run.made) == 1:
                page.screenshot(path=screenshot, full_page=True)
    finally:
        if screenshot and not run.made:
            with contextlib.suppress(Exception):
                page.screenshot(path=screenshot, full_page=True)
        page.close()


def side_with_text(view: dict, needle: str) -> str:
    """'left' or 'right': the side whose evaluated speaker says something containing ``needle``."""
    for side, name in zip(view["comparison"]["sides"], ("left", "right")):
        if any(t["evaluated"] and needle in t["text"] for t in side["turns"]):
            return name
    raise LookupError(f"no evaluated turn contains {needle!r}")
