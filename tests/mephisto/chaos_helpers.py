"""What a paid crowd does all day, as scripted browser workers: reloads, second tabs, double clicks,
pages that go to sleep, and a launcher stopped mid-step and relaunched on the same port and data.

Every wait has a stated bound (:data:`STEP`, :data:`MODELS`, :data:`RELAUNCH`): a page that does not show what it
should within it fails the test with what it showed instead.
"""
from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

from parlai_acute.mephisto_tasks.live.browser import worker_url
from parlai_acute.mephisto_tasks.live.local_run import LocalRun, pid_alive

STEP = 20.0  # s: a reload, a reconnection or an answer shows the worker's current step within this
MODELS = 60.0  # s: a per-turn turn's candidates (SmolLM2 on two busy cores) are on the page within this
RELAUNCH = 150.0  # s: from a relaunch (models loaded again) to the page showing the same step
TOLD = 10.0  # s: a page in another browser hears that the assignment moved within this (it asks every 3 s)


class Stuck(AssertionError):
    pass


def wait(page, condition: str, bound: float = STEP, what: str = "") -> float:
    """Wait until the JS ``condition`` holds; returns the seconds it took; fails past ``bound``."""
    started = time.perf_counter()
    try:
        page.wait_for_function(f"() => {{ try {{ return !!({condition}); }} catch (e) {{ return false; }} }}",
                               timeout=bound * 1000)
    except Exception as exc:
        banner = page.evaluate("(document.getElementById('live-banner') || {}).textContent || ''")
        status = page.evaluate("(document.getElementById('status') || {}).textContent || ''")
        raise Stuck(f"page stuck over {bound:g} s waiting for {what or condition}; banner {banner!r}, "
                    f"status {status!r}") from exc
    took = time.perf_counter() - started
    if took > 2:
        print(f"chaos: {took:.1f} s waiting for {what or condition}")
    return took


def open_page(context, base_url: str, worker: str, assignment: str, view_var: str):
    page = context.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # the mock provider alerts on submit
    page.goto(worker_url(base_url, worker, assignment))
    wait(page, f"window.{view_var}", what="the first view")
    return page


def idle(page) -> str:
    return "!MephistoLive.busy() && document.body.dataset.connection !== 'reconnecting'"


def reload(page, view_var: str, same: str) -> float:
    """Reload and wait until the page shows the server's view again with ``same`` true; seconds taken."""
    started = time.perf_counter()
    page.reload()
    wait(page, f"window.{view_var} && ({same})", what=f"the same step after a reload ({same})")
    return time.perf_counter() - started


def elsewhere(page, bound: float = STEP) -> None:
    wait(page, "document.body.dataset.connection === 'elsewhere'", bound, "'open in another tab'")
    assert "open in another tab" in page.inner_text("#live-banner")


def other_browser(page) -> None:
    """A page told the assignment is open in another browser (no shared storage, no BroadcastChannel:
    only the server can say it) within :data:`TOLD`, with its "Continue here"."""
    elsewhere(page, TOLD)
    assert page.is_visible("#continue-here")


def continue_here(page, view_var: str) -> None:
    """Click "Continue here" and wait until the server's view names this page the owner."""
    page.click("#continue-here")
    wait(page, f"window.{view_var} && window.{view_var}.tab === MephistoLive.tab() && {idle(page)}",
         what="this page owning the assignment again")


def freeze(page, frozen: bool) -> None:
    """A laptop lid closed (or a frozen background tab): the page runs nothing and sends nothing."""
    session = page.context.new_cdp_session(page)
    session.send("Page.setWebLifecycleState", {"state": "frozen" if frozen else "active"})
    session.detach()


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def stop(run: LocalRun, sig: int, nodes: list[int] | None = None) -> int:
    """Stop the launcher with ``sig`` (SIGKILL: no handler runs, the router's watchdog ends Node)."""
    nodes = run.node_pids() if nodes is None else nodes
    started = time.perf_counter()
    os.kill(run.proc.pid, sig)
    code = run.wait_exit(timeout=120)
    print(f"chaos: launcher stopped by signal {sig} in {time.perf_counter() - started:.1f} s")
    deadline = time.time() + 30
    while (any(pid_alive(p) for p in nodes) or not port_free(run.port)) and time.time() < deadline:
        time.sleep(0.2)
    assert not any(pid_alive(p) for p in nodes), "the router outlived its launcher"
    return code


def relaunch(run: LocalRun, args: list[str], log: Path, group: str) -> LocalRun:
    """The same command, task name, data directory and port, as an operator restarts a task."""
    started = time.perf_counter()
    again = LocalRun(run.data_dir, args, run.port, log, group=group, task_name=run.task_name)
    again.wait_ready()
    print(f"chaos: relaunched in {time.perf_counter() - started:.1f} s")
    return again


def reconnecting(page) -> None:
    wait(page, "document.body.dataset.connection === 'reconnecting'", what="'Reconnecting to the task server'")
    assert "Reconnecting to the task server" in page.inner_text("#live-banner")


SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}
