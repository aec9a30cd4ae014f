"""``parlai-acute acute pairings``: Conversations logs -> an ACUTE-Eval pairings file.

The file is in ParlAI's acute_eval format (runs unchanged in ParlAI's task and ours); a
``<name>.metadata.json`` beside it records the configuration, seed and version.

  parlai-acute acute pairings smol=logs/smol.jsonl generic=logs/generic.jsonl --comparisons-per-pair 6 -o pairings.jsonl
"""
from __future__ import annotations

import argparse
import sys

from parlai_acute.acute import pairings as P
from parlai_acute.acute.pairings_file import write_pairings_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("models", nargs="+", metavar="NAME=PATH[:SPEAKER]",
                        help="a model and its Conversations log; SPEAKER is the model's speaker id, or first, "
                             "second, random, unseeded (default: the non-human speaker; a side per --self-chat-side for "
                             "self-chats and human-human logs)")
    parser.add_argument("-o", "--output", required=True, help="pairings file to write (.jsonl)")
    parser.add_argument("-n", "--comparisons-per-pair", type=int, default=20,
                        help="comparisons for every unordered model pair (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--num-conversations", type=int, default=None, metavar="N",
                        help="use the first N conversations of each model's log (default: all); a warning says when "
                             "the comparisons reuse them")
    parser.add_argument("--self-chat-side", choices=P.SELF_CHAT_SIDES, default=P.DEFAULT_SELF_CHAT_SIDE,
                        help="which side of a self-chat (or human-human) conversation is evaluated: unseeded "
                             "(default: the side that did not speak the dataset's human-written opening our "
                             "self-chats start with; random per conversation if there is none), random, first "
                             "or second")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--onboarding", metavar="FILE", default=None,
                       help="gold pairs (JSONL, or ParlAI's onboarding.json); default: the set shipped with parlai_acute")
    group.add_argument("--no-onboarding", action="store_true", help="write no onboarding (gold) pairs")
    parser.add_argument("--normalize", action="store_true",
                        help="clean up tokenised text with ParlAI's normalize_reply (as ParlAI's fast_eval does)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing pairings file")


def run(args: argparse.Namespace) -> int:
    made = write_pairings_file(args.output, args.models, args.comparisons_per_pair, args.seed, args.self_chat_side,
                               args.onboarding, args.no_onboarding, args.normalize, args.force,
                               num_conversations=args.num_conversations)
    for warning in (made.warning, made.reuse):
        if warning:
            print(f"parlai-acute: warning: {warning}", file=sys.stderr)
    print("\n".join(made.summary_lines()))
    return 0
