"""The command-line options every ``parlai-acute judge <protocol>`` subcommand shares, and the
judge runner they describe (the CLI side of :mod:`parlai_acute.judges`)."""
from __future__ import annotations

import argparse

from parlai_acute.judges import orders as order_mod
from parlai_acute.judges.cache import default_cache
from parlai_acute.judges.model import ANSWER_FROM
from parlai_acute.scripts.options import DeprecatedAlias, add_output_dir, add_progress, progress
from parlai_acute.worlds.model_spec import MODEL_HELP


def add_judge_arguments(parser: argparse.ArgumentParser, orders: bool = True) -> None:
    """The shared options; ``orders=False`` for protocols whose items show one reply (SSA): with
    nothing to swap, ``--orders`` and ``--inconsistent`` cannot apply and are not offered."""
    group = parser.add_argument_group("judge")
    group.add_argument("--judge", default=None, metavar="MODEL",
                       help=MODEL_HELP.replace("the model:", "the judge model:") + "; judge defaults: greedy, "
                            "--max-new-tokens 64, --context-length 2048")
    group.add_argument("--judge-name", default=None,
                       help="the judge's worker name in the tables (default: judge:<weights>)")
    group.add_argument("--answer-from", default="text", choices=ANSWER_FROM,
                       help="text: parse the reply strictly; logprobs: read the choice from the probabilities "
                            "of the answer token (llama.cpp, OpenAI-compatible servers that continue an "
                            "assistant message, transformers)")
    if orders:
        group.add_argument("--orders", dest="order_mode", default="rotations", choices=order_mod.ORDER_MODES,
                           help="position swap: rotations (each option once in each position; pairs: both orders), "
                                "all (every permutation), none (one random order per item, as people see; no swap, "
                                "not recommended)")
        group.add_argument("--inconsistent", default="drop", choices=order_mod.RULES,
                           help="an item whose verdict changes with the order: drop it, or keep it as a tie "
                                "(where the table can hold one)")
    else:
        parser.set_defaults(order_mode="rotations", inconsistent="drop")
    group.add_argument("--retries", type=int, default=2,
                       help="ask again this many times (with a format reminder) after an unparseable answer; "
                            "then the order is missing (default: 2)")
    group.add_argument("--call-retries", type=int, default=2,
                       help="retries after a failed call (error, timeout), with exponential backoff (default: 2)")
    group.add_argument("--backoff", type=float, default=1.0, help="first wait after a failed call, doubling (s)")
    group.add_argument("--concurrency", type=int, default=4,
                       help="prompts sent together (llama.cpp decodes them in one batch; endpoints get one "
                            "request each at once; default: 4)")
    group.add_argument("--seed", type=int, default=0, help="seed of the judge's decoding and of the order rotation")
    group.add_argument("--cache", default=None, metavar="PATH",
                       help=f"SQLite cache of judge calls (default: {default_cache()})")
    group.add_argument("--no-cache", action="store_true", help="ask every call afresh and store nothing")
    group.add_argument("--num-items", dest="limit", type=int, default=None, metavar="N",
                       help="judge only the first N items (a quick look)")
    group.add_argument("--limit", dest="limit", type=int, action=DeprecatedAlias, preferred="--num-items",
                       help=argparse.SUPPRESS)
    add_output_dir(group, "the tables, items.jsonl and summary.json")
    add_progress(group)


def add_onboarding_arguments(parser: argparse.ArgumentParser, gold: str, default: str) -> None:
    """``--onboarding FILE`` (the ``gold`` items to score the judge on; ``default`` says which are used
    otherwise) or ``--no-onboarding``."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--onboarding", default=None, metavar="FILE", help=f"{gold} (default: {default})")
    group.add_argument("--no-onboarding", action="store_true", help="do not judge gold items")


def make_runner(args):
    """JudgeModel + settings + cache -> a Runner, from the shared options."""
    from parlai_acute.errors import UserError
    from parlai_acute.judges.cache import JudgeCache, NoCache
    from parlai_acute.judges.model import JudgeModel
    from parlai_acute.judges.runner import JudgeSettings, Runner

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--num-items {args.limit} must be at least 1")
    settings = JudgeSettings(answer_from=args.answer_from, retries=args.retries, order_mode=args.order_mode,
                             inconsistent=args.inconsistent, seed=args.seed)
    cache = NoCache() if args.no_cache else JudgeCache(args.cache or default_cache())
    judge = JudgeModel(args.judge, name=args.judge_name, concurrency=args.concurrency, seed=args.seed,
                       call_retries=args.call_retries, backoff=args.backoff)
    bar = progress(args, None, "judge calls", unit="call")
    return Runner(judge, settings, cache, progress=bar)
