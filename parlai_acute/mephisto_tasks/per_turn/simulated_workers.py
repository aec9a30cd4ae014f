"""SIMULATED workers for the per-turn task: Debian chromium (via Playwright) chatting like a person.

For demos, tests and benchmarks only; names get the ``simulated-`` prefix. A worker opens the
page, passes the practice turn, then for each turn types ``write(view)``, waits for the
candidates, asks ``choose(view)`` and clicks what it returns, and finishes after ``turns``
turns. ``view`` is what the page shows (``window.__perTurnView``): messages and candidate
texts by position, never model names -- a policy must judge from the text, like a person.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable

from parlai_acute.mephisto_tasks.live.browser import open_worker_page, wait_view


@dataclass
class Choice:
    picked: list[int] = field(default_factory=list)  # positions ticked / the one picked / [0] = appropriate
    none: bool = False  # "none of these" / "not appropriate"
    user_reply: str = ""
    justification: str = ""
    sensible: bool | None = None  # label_mode ssa: "does it make sense?"
    specific: bool | None = None  # label_mode ssa: asked only when sensible


Write = Callable[[dict], str]
Choose = Callable[[dict], Choice]
# view -> {"scores": {question key: 1..4}, "reasons": {key: text}, "persona": 0 | 1}
Survey = Callable[[dict], dict]


@dataclass
class PerTurnRun:
    worker: str
    url: str
    made: list[dict] = field(default_factory=list)  # {"turn", "message", "candidates": {position: text}, "choice"}
    onboarding: Choice | None = None
    survey: dict | None = None  # what the worker answered at the end
    status: str = ""  # the page's last status: complete, blocked, unavailable, chatting (left early)
    finished: bool = False
    message: str = ""


def _wait_view(page, condition: str, ms: int):
    return wait_view(page, "__perTurnView", condition, ms)


def _click_choice(page, view: dict, choice: Choice) -> None:
    if view.get("label_mode") == "ssa":  # the practice turn asks Meena's questions too
        sensible = bool(choice.picked) if choice.sensible is None else choice.sensible
        page.check("#sensible-yes" if sensible else "#sensible-no")
        if sensible:
            page.check("#specific-yes" if choice.specific else "#specific-no")
    elif view["protocol"] == "sm":
        page.check("#appropriate-yes" if choice.picked else "#appropriate-no")
    else:
        for p in choice.picked:
            page.check(f"#pick-{p}")
        if choice.none:
            page.check("#none")
    if choice.user_reply:
        page.fill("#user-reply", choice.user_reply)
    if choice.justification and page.is_visible("#justification"):
        page.fill("#justification", choice.justification)
    page.click("#submit-choice")


def run_worker(chromium, base_url: str, worker: str, assignment: str, write: Write, choose: Choose, *,
               turns: int, timeout: float = 120.0, leave_after: int | None = None,
               viewport: dict | None = None, page_hook: Callable | None = None,
               answer_survey: Survey | None = None) -> PerTurnRun:
    """Do one dialogue as ``worker``: ``turns`` judged turns then finish (or leave after ``leave_after``)."""
    url, name, page, ms = open_worker_page(chromium, base_url, worker, assignment, timeout,
                                           viewport or {"width": 1200, "height": 900})
    run = PerTurnRun(worker=name, url=url)
    page.set_default_timeout(ms)  # clicks and fills wait as long as views do (a loaded machine is slow)
    try:
        page.goto(url)
        view = _wait_view(page, "v.status", ms)
        while True:
            if page.evaluate("document.body.dataset.unavailable === 'true'"):
                run.status = "unavailable"
                break
            if page.evaluate("document.body.dataset.finished === 'true'") or view["status"] in (
                    "complete", "blocked", "unavailable"):
                view = _wait_view(page, "false", ms)  # until the page has submitted
                run.status, run.finished = view["status"], True
                break
            if page_hook is not None:
                page_hook(page, view)
            version = view["version"]
            if view["status"] == "onboarding":
                run.onboarding = choose(view)
                _click_choice(page, view, run.onboarding)
            elif view["status"] == "survey":
                if answer_survey is None:
                    raise AssertionError(f"{run.worker}: the task asks a survey but no answer_survey was given")
                run.survey = answer_survey(view)
                for key, score in run.survey["scores"].items():
                    page.check(f"#q-{key}-{score}")
                    if run.survey.get("reasons", {}).get(key):
                        page.fill(f"#reason-{key}", run.survey["reasons"][key])
                if view["survey"]["personas"]:
                    page.check(f"#persona-{run.survey['persona']}")
                page.click("#submit-survey")
            elif view["candidates"]:
                if leave_after is not None and len(run.made) >= leave_after:
                    run.status = "chatting"
                    break
                choice = choose(view)
                run.made.append({"turn": view["turn"], "message": view["messages"][-1]["text"],
                                 "candidates": {c["position"]: c["text"] for c in view["candidates"]},
                                 "choice": choice})
                _click_choice(page, view, choice)
            elif view["turns_done"] >= turns and view["can_finish"]:
                page.click("#finish")
            elif view["can_send"] and view["turns_done"] < turns:
                page.fill("#message", write(view))
                page.click("#send")
            else:
                raise AssertionError(f"{run.worker}: stuck at a view with nothing to do: {view}")
            view = _wait_view(page, f"v.version > {version} && !v.waiting && (v.error || v.ack !== null)", ms)
            if view.get("error"):
                raise AssertionError(f"{run.worker}: the server refused: {view['error']}")
        run.message = page.inner_text("#status")
        return run
    finally:
        with contextlib.suppress(Exception):
            page.close()
