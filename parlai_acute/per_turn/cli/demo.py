"""``parlai-acute per-turn demo``: a short multi-model SATA-User per-turn evaluation on the embedded model.

Four configurations answer every turn side by side -- SmolLM2-135M greedy, SmolLM2
sample-and-rank, SmolLM2 with a persona, and GenericBot -- and the worker ticks every
acceptable reply (or writes a better one). The task is served on localhost for you (the
address is printed; Ctrl-C ends it), or with ``--workers n`` n scripted Chromium workers
chat and judge instead, labelled as SIMULATED. Then the per-turn analysis is written.

  parlai-acute per-turn demo --workers 2 --workdir out/per_turn_demo
"""
from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from parlai_acute.errors import UserError

NEEDS = ("live", "models")  # the extras this command needs beyond the analysis core (main checks them first)

SMOL = "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 40"
MODELS = {
    "smollm2_greedy": f"{SMOL} --inference greedy",
    "smollm2_sample_rank": f"{SMOL} --inference sample_rank --num-samples 4 --temperature 0.88 --topp 1",
    "smollm2_persona": f"{SMOL} --inference greedy --persona 'I am a nurse. I love hiking and baking bread.'",
    "generic_bot": "parlai_acute.agents.generic_bot:GenericBotAgent",
}
MESSAGES = ["Hi! How is your day going?", "I just came back from a long walk in the park.",
            "Do you have any plans for the weekend?", "What kind of food do you like to cook?",
            "I have been reading a good book about the ocean.", "Have you ever travelled abroad?"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workdir", default="out/per_turn_demo", help="Mephisto data and results go here")
    parser.add_argument("--workers", type=int, default=0,
                        help="scripted (SIMULATED) Chromium workers instead of a person (default 0: you)")
    parser.add_argument("--turns", type=int, default=3, help="judged turns per dialogue (default 3)")
    parser.add_argument("--port", type=int, default=3000, help="port of the local task server (default 3000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task and the simulated workers")


def simulated_choice(view, rng: random.Random):
    """A crude stand-in for a person, for demos only: a reply is acceptable when it has at least
    four distinct words and is not GenericBot's stock answer; none acceptable -> write one."""
    from parlai_acute.per_turn.onboarding import ITEMS
    from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

    if view["status"] == "onboarding":
        wrong = {item["replies"][item["wrong"]] for item in ITEMS}
        fine = [r["position"] for r in view["onboarding"]["replies"] if r["text"] not in wrong]
        fine = fine[:1] if view["protocol"] == "soba" else fine
        return Choice(picked=fine, none=not fine, sensible=bool(fine), specific=False)
    good = [c["position"] for c in view["candidates"]
            if len({w.lower().strip(".,!?") for w in c["text"].split()}) >= 4 and "don't know" not in c["text"]]
    if good:
        return Choice(picked=good, justification="SIMULATED worker: replies with some content")
    return Choice(none=True, user_reply=rng.choice(["Tell me more about that!", "That sounds interesting, why?"]),
                  justification="SIMULATED worker: no reply had content")


def run(args) -> int:
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.live.local_run import LocalRun

    if args.workers < 0 or args.turns < 1:
        raise UserError("--workers must be 0 or more and --turns at least 1")
    if not 1 <= args.port <= 65535:
        raise UserError(f"--port {args.port} is not a TCP port; give a number from 1 to 65535 (e.g. --port 3000)")
    setup.check_port_free("localhost", args.port)  # before any model is loaded
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    task_name = "per_turn_demo"
    target = max(1, args.workers)
    argv = [arg for name, model in MODELS.items() for arg in ("--model", f"{name}={model}")] + [
        "mephisto.blueprint.setting=mm", "mephisto.blueprint.protocol=sata_user",
        f"mephisto.blueprint.min_turns={args.turns}", f"mephisto.blueprint.max_turns={args.turns}",
        f"mephisto.blueprint.target={target}", "mephisto.blueprint.justification=optional",
        f"mephisto.blueprint.seed={args.seed}"]
    print(f"== per-turn demo: {', '.join(MODELS)} (MM, SATA-User, {args.turns} turns)", flush=True)
    task = LocalRun(workdir / "mephisto", argv, args.port, workdir / "launch.log", group="per-turn",
                    task_name=task_name)
    try:
        try:
            task.wait_ready(timeout=600)
        except AssertionError as exc:  # the launcher did not come up
            raise UserError(f"the per-turn task did not start ({str(exc).splitlines()[0]}); "
                            f"see {workdir / 'launch.log'}") from None
        if args.workers:
            print(f"   {args.workers} SIMULATED workers (scripted Chromium, not people) chat at {task.url}", flush=True)
            try:
                _simulate(task.url, args.workers, args.turns, args.seed)
            except Exception as exc:  # a scripted worker failed: stop the task (its turns are kept) and say so
                task.terminate()
                raise UserError(f"a simulated worker failed ({' '.join(str(exc).split())[:200]}); the judged turns "
                                f"are kept in {workdir / 'mephisto'}") from None
            code = task.wait_exit(timeout=300)
        else:
            print(f"   open {task.url}/?worker_id=me&assignment_id=1 and chat (Ctrl-C ends the task)", flush=True)
            code = task.wait_exit(timeout=None)
    except KeyboardInterrupt:
        code = task.terminate()
    finally:
        task.kill_all()  # nothing of the task outlives the demo, whatever happened
    if code not in (0, None):
        raise UserError(f"the per-turn task stopped with exit status {code}; see {workdir / 'launch.log'}")
    return _analyze(workdir, task_name)


def _simulate(url: str, workers: int, turns: int, seed: int) -> None:
    from parlai_acute.mephisto_tasks.live.browser import browser
    from parlai_acute.mephisto_tasks.per_turn import simulated_workers as sw

    rng = random.Random(seed)
    with browser() as chromium:
        for w in range(workers):
            run = sw.run_worker(chromium, url, f"worker{w + 1}", f"demo-{w + 1}-{int(time.time())}",
                                lambda view: rng.choice(MESSAGES), lambda view: simulated_choice(view, rng),
                                turns=turns, timeout=600)
            print(f"   {run.worker}: {run.status}, {len(run.made)} turns judged", flush=True)


def _analyze(workdir: Path, task_name: str) -> int:
    from parlai_acute.mephisto_tasks.live.database import open_mephisto_db
    from parlai_acute.mephisto_tasks.per_turn import store
    from parlai_acute.per_turn.analysis import AnalysisConfig, analyze
    from parlai_acute.per_turn.outputs import write_outputs
    from parlai_acute.per_turn.turns import turns_table
    from parlai_acute.report.tables import interval_text

    db = open_mephisto_db(workdir / "mephisto" / "database.db")
    records = store.turns_for_task(db, task_name)
    if not records:
        print("no turns were judged; nothing to analyse")
        return 0
    result = analyze(turns_table(records), AnalysisConfig(source=f"Mephisto task {task_name}"))
    paths = write_outputs(result, workdir / "results")
    for design in result.designs:
        for group in design.groups:
            print(f"{design.label}: {group.turns} turns, {group.dialogues} dialogue(s)")
            for m in group.models_table.itertuples(index=False):
                print(f"  {m.model:<20} picked {m.picked}/{m.turns} "
                      f"({interval_text(m.rate, m.ci_low, m.ci_high, 0, scale=100, unit='%')}, 95% exact)")
    print(f"report: {paths['report.html']}")
    return 0
