"""The first turn's wait with a lone SmolLM2 on a busy machine (issue 25: a worker waited 106.9 s).

perturn_first_turn_wait
    The live task's own path for one turn -- :class:`~parlai_acute.worlds.per_turn.ModelPool` built
    as :class:`~parlai_acute.mephisto_tasks.per_turn.live.LiveSetup` builds it (the blueprint's
    default ``model_timeout`` and ``model_retries``) and
    :meth:`~parlai_acute.worlds.per_turn.PerTurnDialogue.candidates`, what the runner calls when a
    worker sends a message -- for ONE SmolLM2 at default settings, on the first turn of fresh
    dialogues. ``N`` first turns alone, then ``N`` with two CPU-bound processes beside it (started
    here, killed after: ``python -c "while True: pass"``). ``value`` = p95 loaded / p95 alone
    (target <= 1.5); ``timeouts``: turns where the model ran out of time or was asked again
    (target 0). ``load_alone`` / ``load_loaded``: the 1-minute load average at the end of each
    phase (the machine is shared: the figure is read with it).

The busy processes share the benchmark's session (Linux autogroup); the machine's other sessions
load it too (``load_*``). The engine runs in a session of its own at raised priority
(``--llama-nice``, docs/models.md), so it is ahead of both.

A sample's seed is a function of its prompt, and both phases send the same first messages in the
same order, so alone and loaded generate the same texts.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

SMOL = "parlai_acute.agents.llama_cpp:LlamaCppAgent"  # default settings: nothing but the model
FIRST_MESSAGES = ["Hi! How are you today?", "Hello there, what do you do for fun?", "Hey! I just got back from a trip.",
                  "Good morning. Do you like to cook?", "Hi, what music do you listen to?"]
N = 10
HOGS = 2
TARGET_RATIO = 1.5


def _p(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def _blueprint_defaults():
    """(model_timeout, model_retries) as the live task has them unless the researcher changes them."""
    import dataclasses

    from parlai_acute.mephisto_tasks.per_turn.blueprint import PerTurnBlueprintArgs

    fields = {f.name: f.default for f in dataclasses.fields(PerTurnBlueprintArgs)}
    return float(fields["model_timeout"]), int(fields["model_retries"])


def first_turns(pool, n: int) -> tuple[list, int]:
    """(waits, turns with a timeout or retry) of ``n`` fresh dialogues' first turns."""
    from parlai_acute.worlds.per_turn import PerTurnDialogue

    waits, troubled = [], 0
    for i in range(n):
        dialogue = PerTurnDialogue(pool, list(pool.names))
        started = time.perf_counter()
        candidates = dialogue.candidates(FIRST_MESSAGES[i % len(FIRST_MESSAGES)])
        waits.append(time.perf_counter() - started)
        print(f"first turn {i + 1}/{n}: {waits[-1]:.2f} s, attempts {[c.attempts for c in candidates]}, "
              f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
        troubled += any(c.attempts > 1 or not c.ok for c in candidates)
    return waits, troubled


def hogs(count: int) -> list:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def stop(procs) -> None:
    for proc in procs:
        proc.kill()
    for proc in procs:
        proc.wait()


def measure(models: dict | None = None, n: int = N) -> dict:
    """The row of ``models`` (default: one SmolLM2 at default settings), ``n`` first turns a phase."""
    from parlai_acute.paths import default_datapath
    from parlai_acute.worlds.per_turn import ModelPool

    timeout, retries = _blueprint_defaults()
    pool = ModelPool(models or {"smol": f"-m {SMOL}"}, default_datapath(), timeout=timeout, retries=retries)
    try:
        first_turns(pool, 1)  # warm-up: the first generation pays for loading pages of the model
        alone, troubled_alone = first_turns(pool, n)
        load_alone = os.getloadavg()[0]
        procs = hogs(HOGS)
        try:
            time.sleep(1.0)
            loaded, troubled_loaded = first_turns(pool, n)
            load_loaded = os.getloadavg()[0]
        finally:
            stop(procs)
        opt = pool.opts[pool.names[0]]
        engine = {"llama_threads": opt.get("llama_threads"), "llama_process": bool(opt.get("llama_process"))}
    finally:
        pool.close()
    p95_alone, p95_loaded = _p(alone, 0.95), _p(loaded, 0.95)
    return {"name": "perturn_first_turn_wait", "value": round(p95_loaded / p95_alone, 3), "unit": "ratio",
            "target": TARGET_RATIO, "p50_alone_s": round(_p(alone, 0.5), 2), "p95_alone_s": round(p95_alone, 2),
            "p50_loaded_s": round(_p(loaded, 0.5), 2), "p95_loaded_s": round(p95_loaded, 2),
            "timeouts": troubled_alone + troubled_loaded, "timeouts_target": 0, "n": n, "hogs": HOGS,
            "model_timeout": timeout, "model_retries": retries, "cores": len(os.sched_getaffinity(0)), **engine,
            "load_alone": round(load_alone, 2), "load_loaded": round(load_loaded, 2)}


def run():
    import parlai_acute  # noqa: F401

    yield measure()


if __name__ == "__main__":  # python -m benchmarks.bench_per_turn_wait ['MODEL STRING']: one configuration
    import json

    import parlai_acute  # noqa: F401

    n = int(os.environ.get("BENCH_N") or N)
    print(json.dumps(measure({"smol": sys.argv[1]} if len(sys.argv) > 1 else None, n)), flush=True)
