"""Per-turn evaluation with live models: candidates in parallel, and the task under 20 workers.

perturn_candidate_latency
    Four SmolLM2 configurations (greedy, sampled, sample-and-rank N=4, persona) answer the
    same turns of one conversation, as the task runs them by default (spread over one-thread
    llama.cpp engines, one per core, each in its own process: ``llama_cpp.share_engines``).
    ``floor_s`` is the physical floor of that wait, each model alone on ONE core: per turn
    max(slowest alone, sum alone / cores); ``together_s`` the measured wait; ``value`` =
    together / floor (1.0 = the cores fully used; target <= 1.2). Each turn is measured together
    and then alone right after, so on a busy machine both see about the same load
    (``load_average``: the mean 1-minute load at the turns' starts).
perturn_workers_load
    The real launcher (Node router, mock provider, Mephisto DB in a tmp dir) with two SmolLM2
    configurations, and 20 protocol clients (what the page sends; 20 browsers do not fit on
    2 cores) chatting at once: every turn must be stored; p95 of message -> candidates shown.
perturn_endpoint_load
    How a lab outgrows one machine: the models behind a serving engine, the task unchanged.
    xllamacpp's OpenAI-compatible HTTP server (parallel slots; standing in for vLLM) serves two
    configurations (greedy, sampled) to the real launcher through ``OpenAICompatAgent``; 50
    protocol clients chat at once. ``lost``: judged turns not stored; ``p95_s``: a worker's
    wait, message -> all candidates; ``endpoint_p95_s``: per turn, the slowest of its requests
    as the task's model thread timed them (the endpoint's own answer time, queueing included)
    in the same run; ``ratio`` = p95_s / endpoint_p95_s (target <= 1.2: the task adds little).
"""
from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

SMOL = "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 32"
CONFIGS = {
    "greedy": f"{SMOL} --inference greedy",
    "sampled": f"{SMOL} --inference sample --temperature 0.9",
    "sample_rank": f"{SMOL} --inference sample_rank --num-samples 4",
    "persona": f"{SMOL} --inference greedy --persona 'I am a nurse who loves hiking.'",
}
PROMPTS = ["Hi! How are you today?", "I went hiking this weekend.", "Do you like to cook?",
           "What music do you listen to?", "Tell me about your job."]
TARGET_RATIO = 1.2
WORKERS, TURNS = 20, 3


def candidate_latency():
    from parlai_acute.agents.llama_cpp import cores, engine_key
    from parlai_acute.paths import default_datapath
    from parlai_acute.worlds.per_turn import ModelPool, PerTurnDialogue

    names, n_cores = list(CONFIGS), cores()
    # the four together, as the task runs them by default (engines in their own processes), and
    # each model alone on one core (the floor's measure), turn by turn on the same conversation:
    # on a shared machine the load drifts, and both sides of the ratio see the same stretch of it
    pool = ModelPool(CONFIGS, default_datapath(), timeout=300, retries=0)
    # one engine of its own for the alone measures (4 slots: sample-and-rank's N in one request), so
    # no prompt the joint turn just evaluated is found in its cache
    one_core = ModelPool({n: f"{s} --llama-threads 1 --llama-slots 4" for n, s in CONFIGS.items()},
                         default_datapath(), timeout=300, retries=0)
    engine = {"engine_threads": pool.opts[names[0]]["llama_threads"], "engine_slots": pool.opts[names[0]]["llama_slots"],
              "engines": len({engine_key(pool.opts[n]) for n in names}),
              "engine_processes": all(pool.opts[n].get("llama_process") for n in names)}
    together, alone, loads = [], {n: [] for n in names}, []
    try:
        dialogue = PerTurnDialogue(pool, names)
        PerTurnDialogue(pool, names).candidates("Warm-up.")
        PerTurnDialogue(one_core, names).candidates("Warm-up.")
        for prompt in PROMPTS:
            history = list(dialogue.history)
            loads.append(os.getloadavg()[0])
            started = time.perf_counter()
            candidates = dialogue.candidates(prompt)
            together.append(time.perf_counter() - started)
            for name in names:
                solo = PerTurnDialogue(one_core, [name])
                _replay(solo, history)
                started = time.perf_counter()
                solo.candidates(prompt)
                alone[name].append(time.perf_counter() - started)
            dialogue.continue_with(candidates[0].text, source=candidates[0].model)
    finally:
        pool.close()
        one_core.close()
    turns = range(len(PROMPTS))
    slowest = sum(max(alone[n][i] for n in names) for i in turns)
    floor = sum(max(max(alone[n][i] for n in names), sum(alone[n][i] for n in names) / n_cores) for i in turns)
    return {"name": "perturn_candidate_latency", "value": round(sum(together) / floor, 3), "unit": "ratio",
            "target": TARGET_RATIO, "floor_s": round(floor, 2), "together_s": round(sum(together), 2),
            "slowest_alone_s": round(slowest, 2), "sum_alone_s": round(sum(sum(v) for v in alone.values()), 2),
            "cores": n_cores, **engine, "models": len(names), "turns": len(PROMPTS),
            "load_average": round(statistics.mean(loads), 2)}


def _replay(solo, history) -> None:
    """Give a one-model dialogue the joint dialogue's conversation so far (no generation)."""
    pending = None
    for entry in history:
        if entry["speaker"] == "human":
            pending = entry["text"]
        elif pending is not None:
            solo.replay(pending, entry["text"], source=entry.get("source", "seed"))
            pending = None


def _crowd(args: list[str], task_name: str, workers: int, turns: int, exit_timeout: float):
    """The real launcher with ``args`` and ``workers`` protocol clients chatting at once:
    (runs, client errors, stored turn records, wall seconds, launcher exit code)."""
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.live.local_run import LocalRun, free_port
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
    from parlai_acute.mephisto_tasks.per_turn import store
    from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

    with tempfile.TemporaryDirectory(prefix=f"{task_name}_") as tmp:
        tmp = Path(tmp)
        task = LocalRun(tmp / "data", args, free_port(), tmp / "launch.log", group="per-turn", task_name=task_name)
        try:
            task.wait_ready()
            time.sleep(11)  # Mephisto's unit launcher opens slots in 10 s batches

            async def all_workers():
                return await asyncio.gather(*[
                    pw.run_protocol_worker(task.url, f"{task_name}{i}", f"{task_name}{i}",
                                           lambda v, i=i: f"Worker {i} says hello, turn {v['turns_done']}. "
                                           "What do you like to do?", lambda v: Choice(picked=[0]), turns=turns)
                    for i in range(workers)], return_exceptions=True)

            started = time.perf_counter()
            runs = asyncio.run(all_workers())
            wall = time.perf_counter() - started
            try:
                exit_code = task.wait_exit(timeout=exit_timeout)
            except subprocess.TimeoutExpired:  # units left unfilled: reported, not fatal to the numbers
                exit_code = "still running"
        finally:
            task.kill_all()
        records = store.turns_for_task(setup.open_db(tmp / "data"), task_name)
    errors = [repr(r) for r in runs if isinstance(r, BaseException)]
    return [r for r in runs if not isinstance(r, BaseException)], errors, records, wall, exit_code


def workers_load():
    import parlai_acute  # noqa: F401

    args = ["--model", f"greedy={CONFIGS['greedy']}", "--model", f"sampled={CONFIGS['sampled']}",
            f"mephisto.blueprint.min_turns={TURNS}", f"mephisto.blueprint.max_turns={TURNS}",
            "mephisto.blueprint.onboarding=false", f"mephisto.blueprint.target={WORKERS}"]
    runs, errors, records, wall, exit_code = _crowd(args, "bench_load", WORKERS, TURNS, exit_timeout=180)
    judged = sum(len(r.turns) for r in runs)
    stored = len({(r["dialogue"], r["turn"]) for r in records})
    waits = [t["wait"] for r in runs for t in r.turns]
    p95 = _p95(waits)
    yield {"name": "perturn_workers_load.turns_stored", "value": stored, "unit": "turns", "target": judged,
           "lost": judged - stored, "workers": WORKERS, "complete_dialogues": sum(r.status == "complete" for r in runs),
           "client_errors": len(errors), "first_problem": errors[:1], "launcher_exit": exit_code}
    yield {"name": "perturn_workers_load.message_to_candidates_p95", "value": round(p95, 2), "unit": "s",
           "p50": round(statistics.median(waits), 2) if waits else None, "n": len(waits)}
    yield {"name": "perturn_workers_load.wall", "value": round(wall, 1), "unit": "s", "turns": judged}


ENDPOINT_WORKERS, ENDPOINT_TURNS, ENDPOINT_SLOTS = 50, 2, 16


def _endpoint():
    """xllamacpp's HTTP server on loopback serving the embedded SmolLM2 (one thread: on a shared,
    busy machine a multi-thread llama.cpp engine stalls at its layer barriers)."""
    import xllamacpp

    from parlai_acute.mephisto_tasks.live.local_run import free_port
    from parlai_acute.paths import default_gguf

    params = xllamacpp.CommonParams()
    params.model.path = default_gguf()
    params.n_ctx = 1024 * ENDPOINT_SLOTS
    params.n_parallel = ENDPOINT_SLOTS
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
    params.hostnames = ["127.0.0.1"]
    params.port = free_port()
    params.verbosity = -1
    return xllamacpp.Server(params)


def _p95(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))] if values else float("nan")


def endpoint_load():
    import parlai_acute  # noqa: F401

    server = _endpoint()
    url = server.listening_address.rstrip("/") + "/v1"
    agent = (f"-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url {url} "
             "--max-new-tokens 24 --openai-timeout 300")
    args = ["--model", f"greedy={agent} --inference greedy", "--model", f"sampled={agent} --inference sample",
            f"mephisto.blueprint.min_turns={ENDPOINT_TURNS}", f"mephisto.blueprint.max_turns={ENDPOINT_TURNS}",
            "mephisto.blueprint.onboarding=false", f"mephisto.blueprint.target={ENDPOINT_WORKERS}",
            "mephisto.blueprint.model_timeout=300"]
    try:
        runs, errors, records, _, exit_code = _crowd(args, "bench_endpoint", ENDPOINT_WORKERS, ENDPOINT_TURNS,
                                                     exit_timeout=300)
    finally:
        del server
    judged = sum(len(r.turns) for r in runs)
    per_turn: dict = {}
    for r in records:
        per_turn.setdefault((r["dialogue"], r["turn"]), []).append(r["latency_seconds"] or 0.0)
    waits = [t["wait"] for r in runs for t in r.turns]
    p95, endpoint_p95 = _p95(waits), _p95([max(v) for v in per_turn.values()])
    yield {"name": "perturn_endpoint_load", "value": round(p95 / endpoint_p95, 3), "unit": "ratio", "target": 1.2,
           "lost": judged - len(per_turn), "turns_judged": judged, "p95_s": round(p95, 2),
           "endpoint_p95_s": round(endpoint_p95, 2), "ratio": round(p95 / endpoint_p95, 3),
           "p50_s": round(statistics.median(waits), 2) if waits else None, "workers": ENDPOINT_WORKERS,
           "client_errors": len(errors), "first_problem": errors[:1], "launcher_exit": exit_code,
           "without_unit": sum(bool(r.unavailable) for r in runs), "endpoint_slots": ENDPOINT_SLOTS, "load_average": os.getloadavg()[0]}


def run():
    import parlai_acute  # noqa: F401

    yield candidate_latency()
    yield from workers_load()
    yield from endpoint_load()
