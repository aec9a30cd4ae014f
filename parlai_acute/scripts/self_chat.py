"""``parlai-acute self-chat``: model-model conversations saved as a ParlAI Conversations log.

A friendly front end to ParlAI's self-chat (same options, same log format, same worlds):
the default model is SmolLM2-135M-Instruct run by llama.cpp, the default task seeds every
conversation with the opening of a real human conversation, ``--batchsize`` runs several
conversations at once, a progress bar shows how far a long run is, and the log
(``.jsonl`` + ``.metadata``) appears only when it is complete; a run that stops early
(Ctrl-C, a failing model) keeps its finished conversations in ``<out>.partial.jsonl``.

Examples::

    parlai-acute self-chat --num-self-chats 20 --max-turns 6 --outfile logs/smollm2.jsonl
    parlai-acute self-chat -m parlai_acute.agents.generic_bot:GenericBotAgent \\
        --partner-model repeat_query -t persona --outfile logs/generic_vs_repeat.jsonl
"""
from __future__ import annotations

import argparse
import sys

from parlai_acute.paths import default_datapath
from parlai_acute.scripts.options import add_model, add_progress
from parlai_acute.worlds.self_chat_opt import check_counts, check_outfile, self_chat_opt

NEEDS = ("models",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model(parser)
    parser.add_argument("-p", "--partner-model", default=None, metavar="MODEL",
                        help="a different model (or decoding) for the second speaker, same forms as --model "
                             "(default: a copy of --model)")
    parser.add_argument("-t", "--task", default="chitchat",
                        help="how conversations start: chitchat (real human openings), persona (a persona per "
                             "speaker), topics (a shared topic), or any ParlAI task path (default: chitchat)")
    parser.add_argument("-n", "--num-self-chats", "--num-selfchats", type=int, default=10, help="number of conversations (default: 10)")
    parser.add_argument("--max-turns", "--selfchat-max-turns", type=int, default=6,
                        help="parleys per conversation, each one utterance per speaker; a context parley counts "
                             "as one (ParlAI's --selfchat-max-turns; default: 6)")
    parser.add_argument("-b", "--batchsize", type=int, default=1,
                        help="conversations run at once, one batch_act per speaker turn (default: 1)")
    parser.add_argument("--seed", type=int, default=42, help="seed for the choice of openings/personas/topics")
    parser.add_argument("-o", "--output", "--outfile", dest="outfile", default="selfchat.jsonl",
                        help="log to write (.jsonl; a .metadata file is written beside it; default: selfchat.jsonl)")
    parser.add_argument("--datapath", default=None, help=f"ParlAI data directory (default: {default_datapath()})")
    parser.add_argument("--display", action="store_true", help="print every conversation as it is generated")
    add_progress(parser)


def check_args(args) -> None:
    check_counts(args.num_self_chats, args.max_turns, args.batchsize)
    check_outfile(args.outfile)


def parlai_opt(args, model: str | None, param: str = "model"):
    """The opt ParlAI's own ``self_chat`` script would build for these arguments."""
    return self_chat_opt(model, args.outfile, task=args.task, num_self_chats=args.num_self_chats,
                         max_turns=args.max_turns, seed=args.seed, batchsize=args.batchsize,
                         datapath=args.datapath, display=args.display, param=param)


def run(args) -> int:
    from parlai_acute.worlds.runner import run_self_chats

    check_args(args)
    opt = parlai_opt(args, args.model)
    partner_opt = parlai_opt(args, args.partner_model, "partner_model") if args.partner_model else None
    path = run_self_chats(opt, partner_opt, progress=sys.stderr.isatty() if args.progress is None else args.progress,
                          extra={"model_spec": args.model or "default", "partner_model_spec": args.partner_model})
    print(f"wrote {args.num_self_chats} conversations to {path}")
    return 0
