"""``parlai-acute demo`` (what ``make demo`` runs): the whole ACUTE-Eval loop on the embedded model.

SmolLM2-135M-Instruct with Meena's sample-and-rank against the GenericBot baseline: self-chats
are written as Conversations logs and summarised, pairings are built, the ACUTE-Eval task is
served on localhost for you to judge in a browser (the address is printed; the command waits),
then the analysis is written. With ``DEMO_WORKERS=n`` (or ``--workers n``), n scripted Chromium
workers judge instead, labelled as simulated. Rerunning reuses the logs and the run in
``--workdir``; delete it for a fresh start.

  parlai-acute demo --workdir /tmp/demo --workers 2 --num-self-chats 3 --max-turns 3
"""
from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

from parlai_acute.errors import UserError

NEEDS = ("live", "models")  # the extras this command needs beyond the analysis core (main checks them first)

MODELS = {
    "smollm2_sample_rank": "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --inference sample_rank "
                           "--num-samples 8 --temperature 0.88 --topp 1",
    "generic_bot": "-m parlai_acute.agents.generic_bot:GenericBotAgent",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workdir", default="out/demo", help="where logs, pairings, Mephisto data and results go")
    parser.add_argument("--workers", dest="simulated_workers", type=int, default=None,
                        help="scripted (simulated) Chromium workers instead of a person (default: $DEMO_WORKERS or 0)")
    parser.add_argument("--num-self-chats", type=int, default=6, help="self-chats per model (default 6)")
    parser.add_argument("--max-turns", "--selfchat-max-turns", type=int, default=5, help="parleys per self-chat (default 5)")
    parser.add_argument("--port", type=int, default=3000, help="port of the local task server (default 3000)")


def summarize_log(name: str, path: Path) -> str:
    """A few numbers and the first exchange of a self-chat log."""
    from parlai_acute.logs import read_log

    episodes = read_log(path)
    turns = [t for ep in episodes for t in ep.turns]
    words = [len(t["text"].split()) for t in turns]
    first = episodes[0].turns[:4]
    lines = [f"  {name}: {len(episodes)} conversations, {len(turns)} turns, "
             f"{statistics.mean(words):.1f} words per turn ({path})"]
    lines += [f"    {t['id']}: {t['text'][:100]}" for t in first]
    return "\n".join(lines)


def demo_config(args) -> "FastConfig":
    """The demo's run, checked (arguments, port) before any slow work."""
    from parlai_acute.acute.fast import FastConfig, check_config

    workers = args.simulated_workers
    if workers is None:
        raw = os.environ.get("DEMO_WORKERS", "0") or "0"
        if not raw.isdigit():
            raise UserError(f"DEMO_WORKERS={raw!r} is not a number; set DEMO_WORKERS=3 (or unset it to judge yourself)")
        workers = int(raw)
    comparisons = args.num_self_chats
    if workers > comparisons > 0:
        raise UserError(f"--workers {workers} is more than the {comparisons} comparisons of the demo, so some "
                        f"workers would judge nothing; use at most {comparisons} workers or more --num-self-chats")
    # One person may judge every comparison of the demo. Scripted workers split them evenly, so that
    # every announced worker judges (a real run keeps the paper's cap: one judgment per model pair).
    share = -(-comparisons // workers) if workers else comparisons
    cfg = FastConfig(workdir=Path(args.workdir), models=dict(MODELS), num_self_chats=args.num_self_chats,
                     max_turns=args.max_turns, comparisons_per_pair=comparisons, run_name="demo",
                     port=args.port, simulated_workers=workers, seed=0, max_per_worker=max(1, share),
                     overrides=[f"mephisto.blueprint.comparisons_per_unit={max(1, min(3, share))}"])
    check_config(cfg)
    return cfg


def run(args) -> int:
    from parlai_acute.acute.fast import run_fast, self_chat_logs

    cfg = demo_config(args)
    workers = cfg.simulated_workers
    print("== 1. self-chats (SmolLM2-135M sample-and-rank vs GenericBot)", flush=True)
    logs = self_chat_logs(cfg)
    for name, path in logs.items():
        print(summarize_log(name, Path(path)))
    print("== 2-4. pairings, ACUTE-Eval task, analysis", flush=True)
    if workers:
        print(f"   {workers} SIMULATED workers will judge (scripted Chromium, not people)")
    else:
        print("   open the printed address in a browser and judge the comparisons (Ctrl-C stops)")
    results = run_fast(cfg, logs)
    if any((results / name).exists() for name in ("pairs.csv", "matchups.csv")):  # matchups.csv: an older run
        print(f"== results: {results}/report.html")
    return 0
