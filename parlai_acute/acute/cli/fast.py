"""``parlai-acute acute fast``: model configurations to ACUTE-Eval results in one command.

Runs the self-chats that are missing (logs already in WORKDIR/logs are reused, without a
prompt), builds the pairings, launches the Mephisto task, and analyses the run when it is
done. Each step is the subcommand you could run by hand; see parlai_acute/acute/fast.py.

Examples::

    parlai-acute acute fast --model smol='-m parlai_acute.agents.llama_cpp:LlamaCppAgent --inference sample_rank' \\
        --model generic=parlai_acute.agents.generic_bot:GenericBotAgent --workdir runs/smol_vs_generic
    parlai-acute acute fast --model blender=zoo:blender/blender_90M/model --log human=logs/human_human.jsonl \\
        --workdir runs/b90 --question humanlike mephisto/provider=mturk_sandbox mephisto.provider.requester_name=me
"""
from __future__ import annotations

import argparse
from pathlib import Path

from parlai_acute.errors import UserError

NEEDS = ("live", "models")  # the extras this command needs beyond the analysis core (main checks them first)


def _named(value: str) -> tuple[str, str]:
    name, eq, rest = value.partition("=")
    if not eq or not name.strip() or not rest.strip():
        raise argparse.ArgumentTypeError(f"{value!r} is not NAME=VALUE")
    return name.strip(), rest.strip()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="Hydra overrides passed to `acute launch` (mephisto.blueprint.*, mephisto/provider=...)")
    parser.add_argument("--model", dest="models", action="append", type=_named, default=[], metavar="NAME=MODEL",
                        help="a model to self-chat, as for `self-chat --model` (repeatable)")
    parser.add_argument("--log", dest="logs", action="append", type=_named, default=[], metavar="NAME=PATH[:SPEAKER]",
                        help="an existing Conversations log (human-model, human-human) as a model (repeatable)")
    parser.add_argument("--workdir", required=True, help="directory for logs, pairings, Mephisto data and results")
    parser.add_argument("-n", "--num-self-chats", "--num-selfchats", type=int, default=10, help="self-chats per model (default 10)")
    parser.add_argument("--max-turns", "--selfchat-max-turns", type=int, default=6, help="parleys per self-chat (default 6)")
    parser.add_argument("-t", "--task", default="chitchat", help="self-chat openings: chitchat, persona, topics")
    parser.add_argument("-b", "--batchsize", type=int, default=1, help="self-chats run at once (default 1)")
    parser.add_argument("--comparisons-per-pair", type=int, default=10, help="comparisons per model pair (default 10)")
    parser.add_argument("--question", default="engaging",
                        help="question preset: engaging, interesting, humanlike, knowledgeable (default engaging)")
    parser.add_argument("--run-name", default="acute_fast", help="Mephisto task name; the same name continues a run")
    parser.add_argument("--port", type=int, default=3000, help="port of the local task server (default 3000)")
    parser.add_argument("--simulated-workers", type=int, default=0, metavar="N",
                        help="N scripted Chromium workers judge instead of people (clearly labelled simulated)")
    parser.add_argument("--max-per-worker", type=int, default=None, metavar="K",
                        help="cap on judgments per worker, for the task and the analysis alike "
                             "(default: the paper's, one per model pair)")
    parser.add_argument("--seed", type=int, default=0, help="seed for self-chat openings, pairings, sides, bootstrap")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the ranking")


def _unique(pairs: list[tuple[str, str]], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in pairs:
        if name in out:
            raise UserError(f"{flag} {name}=... is given twice; give each model a different name")
        out[name] = value
    return out


def run(args) -> int:
    from parlai_acute.acute.fast import FastConfig, run_fast

    cfg = FastConfig(workdir=Path(args.workdir), models=_unique(args.models, "--model"),
                     logs=_unique(args.logs, "--log"), num_self_chats=args.num_self_chats,
                     max_turns=args.max_turns, task=args.task, batchsize=args.batchsize, seed=args.seed,
                     comparisons_per_pair=args.comparisons_per_pair, question=args.question,
                     run_name=args.run_name, port=args.port, simulated_workers=args.simulated_workers,
                     max_per_worker=args.max_per_worker, overrides=list(args.overrides),
                     bootstrap=args.bootstrap)
    results = run_fast(cfg)
    print(f"[fast] results in {results} (open {results / 'report.html'})")
    return 0
