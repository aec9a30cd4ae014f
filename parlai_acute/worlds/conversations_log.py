"""Write ParlAI Conversations logs atomically.

``Conversations.save_conversations`` writes ``out.jsonl`` and ``out.metadata`` in place, so
an interrupted run leaves a truncated log that reads like a complete one. We let ParlAI
write both files into a private directory beside the target (so the format is exactly
ParlAI's), point each line's ``metadata_path`` at the final name, and then rename:
metadata first, the ``.jsonl`` last. Whoever sees the ``.jsonl`` sees all of it.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import parlai.utils.logging as parlai_logging

from parlai_acute.errors import UserError
from parlai_acute.files import atomic_write


def log_paths(outfile: str | os.PathLike) -> tuple[Path, Path]:
    """The ``.jsonl`` and ``.metadata`` paths ParlAI derives from ``--outfile``."""
    stem = os.path.splitext(os.fspath(outfile))[0]
    return Path(stem + ".jsonl"), Path(stem + ".metadata")


def save_conversations(logs: list, outfile: str | os.PathLike, opt, self_chat: bool, **extra) -> Path:
    """Save WorldLogger episodes as a Conversations log; returns the ``.jsonl`` path."""
    from parlai.utils.conversations import Conversations

    jsonl, metadata = log_paths(outfile)
    try:
        jsonl.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the directory of {jsonl}: {exc.strerror}; choose another outfile",
                        param="outfile") from None
    if jsonl.is_dir():
        raise UserError(f"outfile {jsonl} is a directory; give a file name such as {jsonl}/chats.jsonl",
                        param="outfile")
    with tempfile.TemporaryDirectory(prefix=f".{jsonl.stem}.", dir=jsonl.parent) as tmp:
        staged = Path(tmp) / jsonl.name
        original = getattr(Conversations, "_parlai_save_conversations", Conversations.save_conversations)
        _quietly(original, logs, str(staged), opt, self_chat=self_chat, **extra)
        staged_meta = staged.with_suffix(".metadata")
        lines = []
        for line in staged.read_text(encoding="utf-8").splitlines():
            episode = json.loads(line)
            episode["metadata_path"] = str(metadata)
            lines.append(json.dumps(episode, ensure_ascii=False))
        with atomic_write(metadata) as fh:
            fh.write(staged_meta.read_text(encoding="utf-8"))
        with atomic_write(jsonl) as fh:
            fh.write("".join(line + "\n" for line in lines))
    parlai_logging.info(f"Conversations saved to {jsonl} (metadata: {metadata})")
    return jsonl


def make_atomic(module) -> None:
    """parlai_acute.compat fix ``parlai-conversations-atomic``: make ParlAI's own
    ``Conversations.save_conversations`` (``parlai interactive --outfile``, world loggers)
    write through :func:`save_conversations`. Idempotent."""
    cls = module.Conversations
    if "_parlai_save_conversations" in cls.__dict__:
        return
    cls._parlai_save_conversations = cls.__dict__["save_conversations"]

    def atomic_save_conversations(klass, act_list, datapath, opt, save_keys="all", context_ids="context",
                                  self_chat=False, **kwargs):
        save_conversations(act_list, datapath, opt, self_chat=self_chat, save_keys=save_keys,
                           context_ids=context_ids, **kwargs)

    atomic_save_conversations.__doc__ = "Atomic version installed by parlai_acute.compat."
    cls.save_conversations = classmethod(atomic_save_conversations)


def _quietly(function, *args, **kwargs):
    """Run ParlAI without its log lines naming our staging directory."""
    previous = parlai_logging.logger.streamHandler.level
    parlai_logging.logger.streamHandler.setLevel(max(previous, parlai_logging.ERROR))
    try:
        return function(*args, **kwargs)
    finally:
        parlai_logging.logger.streamHandler.setLevel(previous)
