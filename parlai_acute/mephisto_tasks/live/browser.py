"""What every task's SIMULATED workers share: Debian's Chromium, their name prefix, their address.

For demos, tests and benchmarks only. Every simulated worker's name starts with ``simulated-``
so their answers can never be mistaken for people's.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator

PREFIX = "simulated-"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@contextlib.contextmanager
def browser(headless: bool = True) -> Iterator:
    """A headless Debian chromium (Playwright's own browser download does not work offline)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=headless)
        try:
            yield instance
        finally:
            instance.close()


_HTTP = ThreadPoolExecutor(max_workers=64, thread_name_prefix="simulated-http")


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


async def post_json(url: str, body: dict) -> dict:
    """POST ``body`` as JSON from a protocol client (``/request_agent``, ``/submit_task``) and return the answer.

    Not ``asyncio.to_thread``: that uses the loop's default executor (cores + 4 threads), which the
    loop also needs to resolve ``localhost`` for every websocket; 200 clients' POSTs queued there
    held the websockets back (49 of 200 did not open within 10 s), as 200 browsers never would."""
    return await asyncio.get_running_loop().run_in_executor(_HTTP, _post, url, body)


HEARTBEAT_S = 3.0  # the page's HEARTBEAT_MS (mephisto_live.js): a heartbeat every 3 s, and a ping at a random moment in each


async def keep_pinging(send: Callable, tab: str, on_ping: Callable[[], None] | None = None) -> None:
    """What a shown page sends while it waits for nothing (``watch`` in ``mephisto_live.js``), for every
    protocol client (ACUTE-Eval, per-turn and the item tasks): every :data:`HEARTBEAT_S` a heartbeat,
    then, at a random moment before the next one, a heartbeat and an ownership ping (``{"type": "ping"}``,
    answered with ``{"type": "owner"}``). ``send(packet_type, data)`` sends one packet; ``on_ping`` is
    called after each ping (a benchmark counts them). Pages start at random moments, so the 3 s grid of
    each is shifted at random too. Runs until cancelled."""
    import random

    await asyncio.sleep(random.uniform(0, HEARTBEAT_S))
    while True:
        await send("heartbeat", {})
        delay = random.uniform(0, HEARTBEAT_S)
        await asyncio.sleep(delay)
        await send("heartbeat", {})
        await send("mephisto_bound_live_update", {"type": "ping", "tab": tab})
        if on_ping is not None:
            on_ping()
        await asyncio.sleep(HEARTBEAT_S - delay)


async def stop_pinging(pinger) -> None:
    """Cancel a :func:`keep_pinging` task (None: nothing to stop) and wait for it to end."""
    if pinger is not None:
        pinger.cancel()
        await asyncio.gather(pinger, return_exceptions=True)


def simulated_name(worker: str) -> str:
    return worker if worker.startswith(PREFIX) else PREFIX + worker


def worker_url(base_url: str, worker: str, assignment: str) -> str:
    """Mock-provider address of one unit attempt (what a person would open)."""
    return f"{base_url.rstrip('/')}/?worker_id={simulated_name(worker)}&assignment_id={assignment}"


def open_worker_page(chromium, base_url: str, worker: str, assignment: str, timeout: float,
                     viewport: dict | None = None) -> tuple[str, str, object, int]:
    """(url, worker name, page, timeout in ms) of a new page for one unit attempt; the mock provider's
    alert on submit is accepted."""
    url = worker_url(base_url, worker, assignment)
    page = chromium.new_page(viewport=viewport or {"width": 1000, "height": 800})
    page.on("dialog", lambda dialog: dialog.accept())
    return url, url.split("worker_id=")[1].split("&")[0], page, int(timeout * 1000)


def wait_view(page, variable: str, condition: str, ms: int) -> dict:
    """The page's view (``window.<variable>``) once ``condition`` (JavaScript over ``v``) holds, or the
    page has finished or is unavailable."""
    page.wait_for_function(f"() => {{ const v = window.{variable}; return document.body.dataset.finished === 'true'"
                           f" || document.body.dataset.unavailable === 'true' || (v && ({condition})); }}", timeout=ms)
    return page.evaluate(f"window.{variable}")


def run_item_unit(chromium, base_url: str, worker: str, assignment: str, run, act: Callable, *, timeout: float,
                  leave_after: int | None, page_hook: Callable | None, on_error: Callable) -> object:
    """One unit of an item task's page (``frontend/item_page.js``: SSA labelling, multi-reference) done as
    ``worker``: ``act(page, view)`` answers the item shown and returns what it did (appended to
    ``run.made``); ``on_error(run, view)`` meets a refusal (return True to stop). Fills ``run``'s
    ``worker``, ``url``, ``status``, ``finished`` and ``message``; closes the page after
    ``leave_after`` answers when given."""
    url, run.worker, page, ms = open_worker_page(chromium, base_url, worker, assignment, timeout)
    run.url = url
    try:
        page.goto(url)
        view = wait_view(page, "__itemView", "v.status", ms)
        while True:
            if page.evaluate("document.body.dataset.unavailable === 'true'"):
                run.status = "unavailable"
                break
            if view["status"] != "working":
                view = wait_view(page, "__itemView", "false", ms)  # until the page has submitted
                run.status, run.finished = view["status"], True
                break
            if leave_after is not None and len(run.made) >= leave_after:
                run.status = "working"
                break
            if page_hook is not None:
                page_hook(page, view)
            version = view["version"]
            run.made.append(act(page, view))
            # the answer's own view: a step on the way (SSA's "it makes sense") is acknowledged too, but
            # while the answer that follows it is on its way the page is busy
            view = wait_view(page, "__itemView", f"v.version > {version} && (v.error || v.ack !== null)"
                             " && !MephistoLive.busy()", ms)
            if view.get("error") and on_error(run, view):
                break
            if view.get("warning") and hasattr(run, "warnings"):
                run.warnings.append(view["warning"])
        run.message = page.inner_text("#status")
        return run
    finally:
        with contextlib.suppress(Exception):
            page.close()
