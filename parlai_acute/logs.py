"""Reading ParlAI Conversations logs: the one shared reader for every evaluation.

A Conversations log is a JSONL file, one episode per line::

    {"dialog": [[{"id": "A", "text": ...}, {"id": "B", "text": ...}], ...],
     "context": [...], "metadata_path": "x.metadata"}

written by ``parlai self_chat``, ``parlai interactive --outfile`` (world logger),
``Conversations.save_conversations`` and our own worlds. This module validates it and
raises one-line :class:`~parlai_acute.errors.UserError` messages that name the file, the
line and the problem.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from parlai_acute.errors import UserError


@dataclass
class Episode:
    """One conversation of a log, flattened to its turns in order."""

    turns: list[dict]
    context: list[dict] = field(default_factory=list)
    line: int = 0
    source: str = ""
    raw: dict = field(default_factory=dict)

    @property
    def speakers(self) -> list[str]:
        """Speaker ids in order of first appearance."""
        seen: list[str] = []
        for turn in self.turns:
            if turn["id"] not in seen:
                seen.append(turn["id"])
        return seen

    def personas(self) -> dict[str, list[str]]:
        """Persona lines per speaker id: the ``your persona:`` lines of the ``i``-th
        context message belong to the ``i``-th speaker (ParlAI's self-chat convention)."""
        out: dict[str, list[str]] = {}
        speakers = self.speakers
        for i, message in enumerate(self.context):
            lines = [line.strip()[len("your persona:"):].strip() for line in str(message.get("text") or "").splitlines()
                     if line.strip().lower().startswith("your persona:")]
            if lines and i < len(speakers):
                out.setdefault(speakers[i], []).extend(lines)
        return out

    def check_alternating(self) -> None:
        """Raise if two consecutive turns have the same speaker (ACUTE needs alternation)."""
        for i in range(1, len(self.turns)):
            if self.turns[i]["id"] == self.turns[i - 1]["id"]:
                raise UserError(
                    f"{self.source}:{self.line}: speakers do not alternate (turns {i} and {i + 1} are both "
                    f"{self.turns[i]['id']!r}); merge consecutive turns of one speaker or drop this conversation"
                )


SEED, HUMAN, MODEL = "seed", "human", "model"
#: Speaker ids of people in logs written by ParlAI (``parlai interactive``, crowdsourcing) and here.
HUMAN_IDS = ("localHuman", "human", "Human", "human_evaluator", "Person", "worker")


def turn_role(turn: dict, human_ids=HUMAN_IDS) -> str:
    """``seed`` (a real opening given to the speakers: nobody's words), ``human`` or ``model``."""
    if turn.get("seed"):
        return SEED
    return HUMAN if speaker_name(str(turn.get("id", ""))) in human_ids else MODEL


def speaker_name(turn_id: str) -> str:
    """A speaker id without the ``_1``/``_2`` suffix ParlAI's self-chat adds to copies of one agent."""
    return re.sub(r"_\d+$", "", turn_id)


def read_log(path: str | Path) -> list[Episode]:
    """Read and validate a Conversations log (the ``.jsonl`` file; its ``.metadata`` is optional)."""
    path = Path(path)
    if path.suffix != ".jsonl" and not path.exists() and path.with_suffix(".jsonl").exists():
        path = path.with_suffix(".jsonl")
    from parlai_acute.jsonl import read_text

    lines = read_text(path, "conversation log", "pass the .jsonl written by self-chat or chat").splitlines()
    episodes = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        episodes.append(parse_episode(line, source=str(path), line=number))
    if not episodes:
        raise UserError(f"conversation log {path} has no conversations; rerun the self-chat or chat that writes it")
    return episodes


def parse_episode(text: str, source: str = "<string>", line: int = 0) -> Episode:
    """Parse one log line; ``line`` is its 1-based number, used in error messages."""
    where = f"{source}:{line}"
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: not valid JSON ({exc.msg}); each line must be one conversation object") from None
    return episode_from_dict(raw, where)


def episode_from_dict(raw: dict, where: str = "<dict>") -> Episode:
    if not isinstance(raw, dict) or "dialog" not in raw:
        raise UserError(f"{where}: missing field 'dialog'; this is not a ParlAI Conversations log line")
    if not isinstance(raw["dialog"], list):
        raise UserError(f"{where}: field 'dialog' must be a list of turn pairs")
    turns = []
    for pair in raw["dialog"]:
        for turn in pair if isinstance(pair, list) else [pair]:
            if not isinstance(turn, dict) or "text" not in turn or "id" not in turn:
                raise UserError(f"{where}: a turn lacks 'id' or 'text'; every turn needs both")
            turns.append(turn)
    source, _, line = where.rpartition(":")
    return Episode(turns=turns, context=list(raw.get("context") or []), line=int(line) if line.isdigit() else 0,
                   source=source or where, raw=raw)
