"""The ParlAI opt of a self-chat run, built from plain settings.

``parlai-acute self-chat`` and ``acute fast`` both run self-chats with
:func:`parlai_acute.worlds.runner.run_self_chats`; this builds the opt they pass, the one
ParlAI's own ``self_chat`` script would build, so both make the same logs.
"""
from __future__ import annotations

import os
import tempfile

from parlai_acute.errors import UserError
from parlai_acute.paths import default_datapath
from parlai_acute.worlds.model_spec import model_args, parse_parlai

#: Our seeded tasks, given by short name (any other value is a ParlAI task path).
TASK_NAMES = ("chitchat", "persona", "topics")


def task_path(task: str) -> str:
    return f"parlai_acute.tasks.{task}" if task in TASK_NAMES else task


def check_counts(num_self_chats: int, max_turns: int, batchsize: int) -> None:
    for name, value in (("num_self_chats", num_self_chats), ("max_turns", max_turns), ("batchsize", batchsize)):
        if value < 1:
            raise UserError(f"{name} must be at least 1, got {value}", param=name)


def check_outfile(outfile: str) -> None:
    """Fail before any model runs if the log could not be written there."""
    if os.path.isdir(outfile):
        raise UserError(f"outfile {outfile} is a directory; give a file name such as {outfile}/chats.jsonl",
                        param="outfile")
    directory = os.path.dirname(os.path.abspath(outfile))
    try:
        os.makedirs(directory, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test.", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UserError(f"cannot write outfile {outfile} ({exc.strerror}); choose a writable path",
                        param="outfile") from None


def self_chat_opt(model: str | None, outfile: str | os.PathLike, task: str = "chitchat", num_self_chats: int = 10,
                  max_turns: int = 6, seed: int = 42, batchsize: int = 1, datapath: str | None = None,
                  display: bool = False, param: str = "model"):
    """The opt ParlAI's own ``self_chat`` script would build for these settings (``model``:
    a model string, see :data:`parlai_acute.worlds.model_spec.MODEL_HELP`; ``param`` names
    the parameter it came from in error messages)."""
    from parlai.scripts.self_chat import setup_args

    argv = ["-t", task_path(task), "--datapath", datapath or default_datapath(),
            "--num-self-chats", str(num_self_chats), "--selfchat-max-turns", str(max_turns),
            "--seed", str(seed), "--batchsize", str(batchsize), "--outfile", str(outfile),
            "--display-examples", str(display)] + model_args(model)
    return parse_parlai(setup_args(), argv, model, param, param)
