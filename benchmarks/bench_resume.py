"""perturn_resume_seconds: how long a worker stares at a page that is not their dialogue.

The real per-turn launcher (two cheap GenericBot models: the models' speed is not measured here)
and a headless Chromium worker who has chatted one turn and has the next turn's candidates on the
page. Measured on the worker's clock (the benchmark's):

* reload: ``page.reload()`` -> the conversation and the candidates shown again (the page's own
  view rendered: messages in the chat, candidate cards present), repeated; ``value`` is the
  slowest of the reloads (target < 2 s);
* relaunch: the launcher stopped with SIGTERM while the page stays open, started again on the
  same port and data -> the same page shows the dialogue again by itself (no reload), counted from
  the relaunch command (``relaunch_s``, includes the launcher's own start) and from the moment the
  relaunched task said it was ready (``after_ready_s``).
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

RELOADS = 7
TARGET_S = 2.0
GENERIC = "generic_bot=parlai_acute.agents.generic_bot:GenericBotAgent"
OTHER = "other_bot=parlai_acute.agents.generic_bot:GenericBotAgent"
SHOWN = ("() => { const v = window.__perTurnView; return v && v.turns_done === 1 && (v.candidates || []).length === 2"
         " && document.querySelectorAll('#messages .msg').length === 3"
         " && document.querySelectorAll('#candidates .card').length >= 2; }")


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.mephisto_tasks.live.browser import browser, worker_url
    from parlai_acute.mephisto_tasks.live.local_run import LocalRun, free_port

    args = ["--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=2", "mephisto.blueprint.max_turns=3",
            "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1"]
    with tempfile.TemporaryDirectory(prefix="bench_resume_") as tmp:
        tmp = Path(tmp)
        first = LocalRun(tmp / "data", args, free_port(), tmp / "launch0.log", group="per-turn",
                         task_name="bench_resume")
        runs = [first]
        try:
            first.wait_ready()
            with browser() as chromium:
                page = chromium.new_page()
                page.on("dialog", lambda dialog: dialog.accept())
                page.goto(worker_url(first.url, "resumer", "r1"))
                page.wait_for_function("() => window.__perTurnView && window.__perTurnView.can_send", timeout=60000)
                for text in ("Hello, how are you today?", "What do you like to cook?"):
                    page.fill("#message", text)
                    page.click("#send")
                    page.wait_for_function("() => (window.__perTurnView.candidates || []).length === 2 && "
                                           "!MephistoLive.busy()", timeout=60000)
                    if page.evaluate("window.__perTurnView.turns_done") == 0:
                        page.click("#pick-0")
                        page.click("#submit-choice")
                        page.wait_for_function("() => window.__perTurnView.turns_done === 1 && "
                                               "!MephistoLive.busy()", timeout=60000)
                reloads = []
                for _ in range(RELOADS):
                    started = time.perf_counter()
                    page.reload()
                    page.wait_for_function(SHOWN, timeout=60000)
                    reloads.append(time.perf_counter() - started)
                before = page.evaluate("window.__perTurnView.version")
                first.terminate()
                page.wait_for_function("() => document.body.dataset.connection === 'reconnecting'", timeout=30000)
                started = time.perf_counter()
                again = LocalRun(tmp / "data", args, first.port, tmp / "launch1.log", group="per-turn",
                                 task_name="bench_resume")
                runs.append(again)
                again.wait_ready()
                ready = time.perf_counter()
                # the relaunched task's own view of the dialogue, rendered, and the banner gone
                page.wait_for_function(f"() => window.__perTurnView.version > {before} && "
                                       f"document.body.dataset.connection === 'ok' && ({SHOWN})()", timeout=180000)
                shown = time.perf_counter()
        finally:
            for r in runs:
                r.kill_all()
    yield {"name": "perturn_resume_seconds", "value": round(max(reloads), 3), "unit": "s", "target": TARGET_S,
           "ratio": round(max(reloads) / TARGET_S, 3), "reloads": RELOADS,
           "reload_median_s": round(statistics.median(reloads), 3), "relaunch_s": round(shown - started, 2),
           "after_ready_s": round(shown - ready, 2)}
    yield {"name": "perturn_resume_seconds.relaunch", "value": round(shown - started, 2), "unit": "s",
           "after_ready_s": round(shown - ready, 2),
           "note": "from the relaunch command, including the launcher's own start; the page is never reloaded"}
