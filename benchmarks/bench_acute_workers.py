"""acute_workers_load_200: 200 simulated workers judging at once on the local ACUTE-Eval task.

The real launcher (local architect = Node router, mock provider, Mephisto DB in a tmp dir)
and 200 protocol clients (HTTP + websocket, what the page sends; browsers are too heavy for
200 on 2 cores), each doing onboarding + 3 comparisons concurrently. Reports the submit
round-trip (judgment sent -> acknowledging view received, i.e. after it was stored), and
checks that every judgment is in the database (``lost``: sent and acknowledged, not stored).
Each client sends what a shown page sends beside its judgments (a heartbeat every 3 s and an
ownership ping at a random moment in each 3 s, see ``browser.keep_pinging``) and reads
each comparison 0-6 s before judging, so 200 pages ping together while the judgments come in.
Target: p95 < 300 ms, nothing lost.
"""
from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

WORKERS = 200
PER_WORKER = 3
TARGET_P95_MS = 300.0
THINK_S = 6.0  # each judgment comes 0-6 s after the comparison is shown: every page open for seconds, pinging


def _pairings(path: Path, n: int) -> None:
    def dlg(did, model, texts):
        return {"id": did, "speakers": ["other_speaker", model],
                "dialogue": [{"id": model if k % 2 else "other_speaker", "text": t} for k, t in enumerate(texts)]}
    lines = [{"is_onboarding": True, "speakers_to_eval": ["good_bot", "bad_bot"], "correct_answer": "good_bot",
              "dialogue_dicts": [dlg("g1", "good_bot", ["Hi", "Hello! I love hiking, do you?"]),
                                 dlg("g2", "bad_bot", ["Hi", "i i i"])]}]
    for i in range(n):
        lines.append({"is_onboarding": False, "speakers_to_eval": ["model_a", "model_b"],
                      "dialogue_ids": [f"a{i}", f"b{i}"],
                      "dialogue_dicts": [dlg(f"a{i}", "model_a", ["Hi", f"A-line {i}"]),
                                         dlg(f"b{i}", "model_b", ["Hi", f"B-line {i}"])]})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _decide(view):
    from parlai_acute.mephisto_tasks.acute.simulated_workers import side_with_text

    try:
        return side_with_text(view, "hiking"), "talks about something real"
    except LookupError:
        return side_with_text(view, "A-line"), "A is friendlier here"


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.acute import store
    from parlai_acute.mephisto_tasks.live.local_run import LocalRun, free_port
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_worker

    with tempfile.TemporaryDirectory(prefix="bench_acute_") as tmp:
        tmp = Path(tmp)
        pairings = tmp / "pairings.jsonl"
        _pairings(pairings, WORKERS * PER_WORKER)
        task = LocalRun.acute(tmp / "data", pairings, free_port(), tmp / "launch.log",
                        f"mephisto.blueprint.comparisons_per_unit={PER_WORKER}",
                        f"mephisto.blueprint.max_judgments_per_worker={PER_WORKER}", task_name="bench_load")
        try:
            task.wait_ready()
            time.sleep(11)  # Mephisto's unit launcher opens slots in 10 s batches

            async def all_workers():
                return await asyncio.gather(*[run_protocol_worker(task.url, f"load{i}", f"as{i}", _decide,
                                                                  think=THINK_S)
                                              for i in range(WORKERS)], return_exceptions=True)

            started = time.perf_counter()
            runs = asyncio.run(all_workers())
            wall = time.perf_counter() - started
            exit_code = task.terminate(timeout=120)  # judgments are stored as made: stop without waiting
        finally:
            task.kill_all()
        db = setup.open_db(tmp / "data")
        df = store.judgments_for_task(db, "bench_load")
    errors = [repr(r) for r in runs if isinstance(r, BaseException)]
    runs = [r for r in runs if not isinstance(r, BaseException)]
    sent = sum(len(r.made) for r in runs)
    rtts = sorted(m["rtt"] * 1000 for r in runs for m in r.made)
    p95 = rtts[min(len(rtts) - 1, int(round(0.95 * (len(rtts) - 1))))] if rtts else float("nan")
    unavailable = [r.unavailable for r in runs if r.unavailable]
    pings = sum(r.pings for r in runs)
    yield {"name": f"acute_workers_load_{WORKERS}", "p95_ms": round(p95, 1), "lost": sent - len(df),
           "value": round(p95, 1), "unit": "ms", "target": TARGET_P95_MS, "ratio": round(p95 / TARGET_P95_MS, 3),
           "workers": WORKERS, "judgments": sent, "stored": len(df), "client_errors": len(errors),
           "unavailable_workers": len(unavailable), "first_problem": (errors + unavailable)[:1],
           "pings": pings, "pings_per_s": round(pings / wall, 1) if wall else None}
    yield {"name": "acute_workers_load.judgments_stored", "value": len(df), "unit": "judgments",
           "baseline": sent, "ratio": len(df) / sent if sent else 0.0, "target": sent,
           "workers": WORKERS, "unavailable_workers": len(unavailable), "client_errors": len(errors),
           "first_problem": (errors + unavailable)[:1], "launcher_exit": exit_code}
    yield {"name": "acute_workers_load.lost", "value": sent - len(df), "unit": "judgments", "target": 0}
    yield {"name": "acute_workers_load.submit_rtt_p95", "value": round(p95, 1), "unit": "ms",
           "target": TARGET_P95_MS, "ratio": round(p95 / TARGET_P95_MS, 3),
           "p50": round(statistics.median(rtts), 1) if rtts else None, "n": len(rtts)}
    yield {"name": "acute_workers_load.wall", "value": round(wall, 2), "unit": "s", "workers": WORKERS,
           "judgments": sent}
