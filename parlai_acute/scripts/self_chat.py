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
import os
import tempfile

from parlai_acute.errors import UserError
from parlai_acute.paths import default_datapath
from parlai_acute.scripts.main import describe_from_docstring
from parlai_acute.worlds.model_spec import MODEL_HELP, model_args, parse_parlai

TASK_NAMES = ("chitchat", "persona", "topics")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    describe_from_docstring(parser, __doc__)
    parser.add_argument("-m", "--model", default=None, metavar="MODEL",
                        help=MODEL_HELP)
    parser.add_argument("-p", "--partner-model", default=None, metavar="MODEL",
                        help="a different model (or decoding) for the second speaker, same forms as --model "
                             "(default: a copy of --model)")
    parser.add_argument("-t", "--task", default="chitchat",
                        help="how conversations start: chitchat (real human openings), persona (a persona per "
                             "speaker), topics (a shared topic), or any ParlAI task path (default: chitchat)")
    parser.add_argument("-n", "--num-self-chats", type=int, default=10, help="number of conversations (default: 10)")
    parser.add_argument("--max-turns", type=int, default=6,
                        help="parleys per conversation, each one utterance per speaker; a context parley counts "
                             "as one (ParlAI's --selfchat-max-turns; default: 6)")
    parser.add_argument("-b", "--batchsize", type=int, default=1,
                        help="conversations run at once, one batch_act per speaker turn (default: 1)")
    parser.add_argument("--seed", type=int, default=42, help="seed for the choice of openings/personas/topics")
    parser.add_argument("-o", "--outfile", default="selfchat.jsonl",
                        help="log to write (.jsonl; a .metadata file is written beside it; default: selfchat.jsonl)")
    parser.add_argument("--datapath", default=None, help=f"ParlAI data directory (default: {default_datapath()})")
    parser.add_argument("--display", action="store_true", help="print every conversation as it is generated")
    parser.add_argument("--no-progress", action="store_true", help="do not show the progress bar")


def task_path(task: str) -> str:
    return f"parlai_acute.tasks.{task}" if task in TASK_NAMES else task


def check_args(args) -> None:
    for flag, value in (("--num-self-chats", args.num_self_chats), ("--max-turns", args.max_turns),
                        ("--batchsize", args.batchsize)):
        if value < 1:
            raise UserError(f"{flag} must be at least 1, got {value}")
    check_outfile(args.outfile)


def check_outfile(outfile: str) -> None:
    """Fail before any model runs if the log could not be written there."""
    if os.path.isdir(outfile):
        raise UserError(f"--outfile {outfile} is a directory; give a file name such as {outfile}/chats.jsonl")
    directory = os.path.dirname(os.path.abspath(outfile))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"cannot write --outfile {outfile} ({exc.strerror}); choose a writable path") from None


def parlai_opt(args, model: str | None, flag: str = "--model"):
    """The opt ParlAI's own ``self_chat`` script would build for these arguments."""
    from parlai.scripts.self_chat import setup_args

    argv = ["-t", task_path(args.task), "--datapath", args.datapath or default_datapath(),
            "--num-self-chats", str(args.num_self_chats), "--selfchat-max-turns", str(args.max_turns),
            "--seed", str(args.seed), "--batchsize", str(args.batchsize), "--outfile", args.outfile,
            "--display-examples", str(args.display)] + model_args(model)
    return parse_parlai(setup_args(), argv, model, flag)


def run(args) -> int:
    from parlai_acute.worlds.runner import run_self_chats

    check_args(args)
    opt = parlai_opt(args, args.model)
    partner_opt = parlai_opt(args, args.partner_model, "--partner-model") if args.partner_model else None
    path = run_self_chats(opt, partner_opt, progress=not args.no_progress,
                          extra={"model_spec": args.model or "default", "partner_model_spec": args.partner_model})
    print(f"wrote {args.num_self_chats} conversations to {path}")
    return 0
