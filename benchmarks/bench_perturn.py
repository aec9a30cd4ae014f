"""Per-turn evaluation with live models: candidates in parallel, and the task under 20 workers.

perturn_candidate_latency
    Four SmolLM2 configurations (greedy, sampled, sample-and-rank N=4, persona) answer the
    same turns of one conversation, as the task runs them by default (one llama.cpp engine for
    the four, on every core: ``llama_cpp.share_engines``). ``floor_s`` is the physical floor of
    that wait, each model alone on ONE core: per turn max(slowest alone, sum alone / cores);
    ``together_s`` the measured wait; ``value`` = together / floor (1.0 = the cores fully used;
    target <= 1.2).
perturn_workers_load
    The real launcher (Node router, mock provider, Mephisto DB in a tmp dir) with two SmolLM2
    configurations, and 20 protocol clients (what the page sends; 20 browsers do not fit on
    2 cores) chatting at once: every turn must be stored; p95 of message -> candidates shown.
"""
from __future__ import annotations

import asyncio
import statistics
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
    import os

    from parlai_acute.agents.llama_cpp import cores, engine_key
    from parlai_acute.paths import default_datapath
    from parlai_acute.worlds.per_turn import ModelPool, PerTurnDialogue

    pool = ModelPool(CONFIGS, default_datapath(), timeout=300, retries=0)  # the task's default engines
    one_core = ModelPool({n: f"{s} --llama-threads 1" for n, s in CONFIGS.items()}, default_datapath(),
                         timeout=300, retries=0)  # each model alone on one core: the floor's measure
    n_cores = cores()
    try:
        names = list(CONFIGS)
        together, alone = [], {n: [] for n in names}
        dialogue = PerTurnDialogue(pool, names)
        PerTurnDialogue(pool, names).candidates("Warm-up.")
        PerTurnDialogue(one_core, names).candidates("Warm-up.")
        for prompt in PROMPTS:
            # each model alone on one core, on exactly the conversation the joint turn will see
            for name in names:
                solo = PerTurnDialogue(one_core, [name])
                _replay(solo, dialogue.history)
                started = time.perf_counter()
                [c] = solo.candidates(prompt)
                alone[name].append(time.perf_counter() - started)
            started = time.perf_counter()
            candidates = dialogue.candidates(prompt)
            together.append(time.perf_counter() - started)
            dialogue.continue_with(candidates[0].text, source=candidates[0].model)
        turns = range(len(PROMPTS))
        slowest = sum(max(alone[n][i] for n in names) for i in turns)
        floor = sum(max(max(alone[n][i] for n in names), sum(alone[n][i] for n in names) / n_cores) for i in turns)
        return {"name": "perturn_candidate_latency", "value": round(sum(together) / floor, 3), "unit": "ratio",
                "target": TARGET_RATIO, "floor_s": round(floor, 2), "together_s": round(sum(together), 2),
                "slowest_alone_s": round(slowest, 2), "sum_alone_s": round(sum(sum(v) for v in alone.values()), 2),
                "cores": n_cores, "engine_threads": pool.opts[names[0]]["llama_threads"],
                "engine_slots": pool.opts[names[0]]["llama_slots"],
                "engines": len({engine_key(pool.opts[n]) for n in names}), "models": len(names),
                "turns": len(PROMPTS), "load_average": os.getloadavg()[0]}
    finally:
        pool.close()
        one_core.close()


def _replay(solo, history) -> None:
    """Give a one-model dialogue the joint dialogue's conversation so far (no generation)."""
    pending = None
    for entry in history:
        if entry["speaker"] == "human":
            pending = entry["text"]
        elif pending is not None:
            solo.replay(pending, entry["text"], source=entry.get("source", "seed"))
            pending = None


def workers_load():
    import parlai_acute  # noqa: F401
    from parlai_acute.mephisto_tasks import setup
    from parlai_acute.mephisto_tasks.local_run import LocalRun, free_port
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
    from parlai_acute.mephisto_tasks.per_turn import store
    from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

    args = ["--model", f"greedy={CONFIGS['greedy']}", "--model", f"sampled={CONFIGS['sampled']}",
            f"mephisto.blueprint.min_turns={TURNS}", f"mephisto.blueprint.max_turns={TURNS}",
            "mephisto.blueprint.onboarding=false", f"mephisto.blueprint.target={WORKERS}"]
    with tempfile.TemporaryDirectory(prefix="bench_perturn_") as tmp:
        tmp = Path(tmp)
        task = LocalRun(tmp / "data", args, free_port(), tmp / "launch.log", group="per-turn", task_name="bench_load")
        try:
            task.wait_ready()
            time.sleep(11)  # Mephisto's unit launcher opens slots in 10 s batches

            async def all_workers():
                return await asyncio.gather(*[
                    pw.run_protocol_worker(task.url, f"load{i}", f"pl{i}", lambda v, i=i: f"Worker {i} says hello, "
                                           f"turn {v['turns_done']}. What do you like to do?",
                                           lambda v: Choice(picked=[0]), turns=TURNS)
                    for i in range(WORKERS)], return_exceptions=True)

            started = time.perf_counter()
            runs = asyncio.run(all_workers())
            wall = time.perf_counter() - started
            exit_code = task.wait_exit(timeout=180)
        finally:
            task.kill_all()
        db = setup.open_db(tmp / "data")
        records = store.turns_for_task(db, "bench_load")
    errors = [repr(r) for r in runs if isinstance(r, BaseException)]
    runs = [r for r in runs if not isinstance(r, BaseException)]
    judged = sum(len(r.turns) for r in runs)
    stored = len({(r["dialogue"], r["turn"]) for r in records})
    waits = sorted(t["wait"] for r in runs for t in r.turns)
    p95 = waits[min(len(waits) - 1, int(round(0.95 * (len(waits) - 1))))] if waits else float("nan")
    yield {"name": "perturn_workers_load.turns_stored", "value": stored, "unit": "turns", "target": judged,
           "lost": judged - stored, "workers": WORKERS, "complete_dialogues": sum(r.status == "complete" for r in runs),
           "client_errors": len(errors), "first_problem": errors[:1], "launcher_exit": exit_code}
    yield {"name": "perturn_workers_load.message_to_candidates_p95", "value": round(p95, 2), "unit": "s",
           "p50": round(statistics.median(waits), 2) if waits else None, "n": len(waits)}
    yield {"name": "perturn_workers_load.wall", "value": round(wall, 1), "unit": "s", "turns": judged}


def run():
    import parlai_acute  # noqa: F401

    yield candidate_latency()
    yield from workers_load()
