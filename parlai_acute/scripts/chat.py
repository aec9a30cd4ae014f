"""``parlai-acute chat``: talk to a model in the terminal; save the chat as a Conversations log.

The log has the same format as self-chat logs (``.jsonl`` + ``.metadata``, written only
when complete), so human-model and model-model conversations feed the same
evaluations. Type ``[DONE]`` to start a new conversation, ``[EXIT]`` or end of input
(Ctrl-D) to quit; Ctrl-C also saves the conversations so far.

Examples::

    parlai-acute chat --outfile logs/me_vs_smollm2.jsonl
    parlai-acute chat -m parlai_acute.agents.generic_bot:GenericBotAgent --context persona -o chat.jsonl
"""
from __future__ import annotations

import argparse

from parlai_acute.paths import default_datapath
from parlai_acute.scripts.options import add_model
from parlai_acute.worlds.model_spec import model_args, parse_parlai
from parlai_acute.worlds.self_chat_opt import check_outfile

NEEDS = ("models",)  # the extras this command needs beyond the analysis core (main checks them first)

CONTEXTS = ("none", "chitchat", "persona", "topics")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model(parser)
    parser.add_argument("-c", "--context", choices=CONTEXTS, default="none",
                        help="what each conversation starts from: nothing, a real conversation's opening prompt "
                             "shown to you, a persona for you and one for the model, or a shared topic")
    parser.add_argument("-o", "--output", "--outfile", dest="outfile", default=None, help="log to write (.jsonl + .metadata); default: not saved")
    parser.add_argument("--seed", type=int, default=0, help="seed for the choice of personas/topics/prompts")
    parser.add_argument("--datapath", default=None, help=f"ParlAI data directory (default: {default_datapath()})")


def parlai_opt(args):
    """The opt ParlAI's ``interactive`` script would build, for one of our tasks."""
    from parlai.scripts.interactive import setup_args

    task = "parlai_acute.tasks.chitchat" if args.context == "none" else f"parlai_acute.tasks.{args.context}"
    argv = ["-t", task, "--datapath", args.datapath or default_datapath(), "--context-seed", str(args.seed),
            "--outfile", args.outfile or ""] + model_args(args.model)
    return parse_parlai(setup_args(), argv, args.model, "model", "model")


def run(args) -> int:
    from parlai_acute.worlds.chat import chat

    if args.outfile is not None:
        check_outfile(args.outfile)
    opt = parlai_opt(args)
    path, count = chat(opt, plain=args.context == "none")
    if path is not None:
        print(f"saved {count} conversation(s) to {path}")
    return 0
