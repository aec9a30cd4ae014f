"""``parlai-acute acute pairings``: Conversations logs -> an ACUTE-Eval pairings file.

The file is in ParlAI's acute_eval format (runs unchanged in ParlAI's task and ours); a
``<name>.metadata.json`` beside it records the configuration, seed and version.
"""
from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter
from pathlib import Path

import parlai_acute
from parlai_acute.acute import pairings as P
from parlai_acute.errors import UserError
from parlai_acute.files import write_json, write_jsonl


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("models", nargs="+", metavar="NAME=PATH[:SPEAKER]",
                        help="a model and its Conversations log; SPEAKER is the model's speaker id, or first, "
                             "second, random, unseeded (default: the non-human speaker; a side per --self-chat-side for "
                             "self-chats and human-human logs)")
    parser.add_argument("-o", "--output", required=True, help="pairings file to write (.jsonl)")
    parser.add_argument("-n", "--comparisons-per-pair", type=int, default=20,
                        help="comparisons for every unordered model pair (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
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


def metadata_path(output: Path) -> Path:
    return output.with_name(output.stem + ".metadata.json")


def run(args: argparse.Namespace) -> int:
    output = Path(args.output)
    if output.exists() and not args.force:
        raise UserError(f"{output} already exists; pass --force to overwrite it or choose another --output")
    specs = [P.parse_model_spec(s) for s in args.models]
    counts = Counter(ml.name for ml in specs)
    if dup := [name for name, c in counts.items() if c > 1]:
        raise UserError(f"model name {dup[0]!r} is given twice; give each NAME=PATH a different name")
    dialogues = {ml.name: P.load_dialogues(ml, args.self_chat_side, args.seed, args.normalize) for ml in specs}
    if warning := P.mixed_settings_warning(dialogues):
        print(f"parlai-acute: warning: {warning}", file=sys.stderr)
    onboarding = [] if args.no_onboarding else P.read_onboarding(args.onboarding or P.DEFAULT_ONBOARDING)
    lines = P.build_pairings(dialogues, args.comparisons_per_pair, args.seed, onboarding)
    for number, line in enumerate(lines, start=1):  # never write what our own reader would reject
        P.validate_pairing(line, f"{output}:{number}")
    write_jsonl(output, lines)
    used = Counter(uid for line in lines if not line["is_onboarding"] for uid in line["dialogue_ids"])
    write_json(metadata_path(output), {
        "parlai_acute_version": parlai_acute.__version__,
        "seed": args.seed,
        "comparisons_per_pair": args.comparisons_per_pair,
        "self_chat_side": args.self_chat_side,
        "normalize": args.normalize,
        "onboarding": None if args.no_onboarding else str(args.onboarding or P.DEFAULT_ONBOARDING),
        "models": [{"name": ml.name, "log": ml.path, "speaker": ml.speaker,
                    "conversations": len(dialogues[ml.name])} for ml in specs],
        "lines": {"onboarding": len(onboarding), "comparisons": len(lines) - len(onboarding)},
    })
    print(f"wrote {output}: {len(onboarding)} onboarding + {len(lines) - len(onboarding)} comparisons")
    pair_counts = Counter(tuple(ln["speakers_to_eval"]) for ln in lines if not ln["is_onboarding"])
    print(f"{'model pair':<40} {'comparisons':>11}")
    for a, b in itertools.combinations(dialogues, 2):
        print(f"{a + ' vs ' + b:<40} {pair_counts[(a, b)]:>11}")
    print(f"{'model':<24} {'conversations':>13} {'used':>5} {'uses min-max':>13}")
    for name, convs in dialogues.items():
        uses = [used[d.uid] for d in convs]
        print(f"{name:<24} {len(convs):>13} {sum(u > 0 for u in uses):>5} {f'{min(uses)}-{max(uses)}':>13}")
    return 0
