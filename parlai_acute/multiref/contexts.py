"""The multi-reference protocol's definition: the contexts replies are collected for, and the
collection modes (no Mephisto, no ParlAI).

Input: JSON lines in the DailyDialog multi-reference layout (Gupta et al. 2019), one dialogue
per line::

    {"id": "dd-17", "fold": "test", "dialogue": [{"text": "Hi, how are you?", "responses": [...]},
                                                 {"text": "Fine, thanks. And you?"}]}

(a bare list of turns, or of strings, is read the same way). Every turn that has a
``responses`` key ends a context to collect replies for (its existing responses are ignored:
this task collects new ones); when no turn has one, the turn before the last does. The turn
after a context is its original reply (the single reference). Without a file, the task uses the
package's static contexts (``parlai_acute.tasks.static_contexts``: 1-3 turns cut from real
conversations, with their real next turn; read by the live task, as they need ParlAI).

A mode ``{R}R{W}W`` asks R replies from each of W workers per context: 4R1W (the default),
2R2W, 1R4W as in the paper, or any other positive R and W.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.jsonl import read_jsonl

FIX = "write one dialogue per line: {\"dialogue\": [{\"text\": ...}, ...]} (DailyDialog multi-reference layout)"
__all__ = ["Context", "MODE", "parse_mode", "mode_name", "parse_dialogue", "read_contexts"]

MODE = re.compile(r"^(\d+)R(\d+)W$", re.IGNORECASE)


@dataclass(frozen=True)
class Context:
    context_id: str  # "<dialogue id>:<index of the last context turn>"
    dialogue_id: str
    turn_index: int
    turns: tuple
    reference: str  # the dialogue's next turn ("" when the context ends the dialogue)


def parse_mode(mode: str, replies_per_worker=None, workers_per_context=None) -> tuple[int, int]:
    """(replies per worker, workers per context) from a mode such as "2R2W" and optional overrides."""
    match = MODE.match(str(mode).strip())
    if not match:
        raise UserError(f"mephisto.blueprint.mode={mode!r} is not a collection mode; use 4R1W, 2R2W or 1R4W "
                        f"(R replies from each of W workers)")
    replies, workers = int(match.group(1)), int(match.group(2))
    if replies_per_worker is not None:
        replies = replies_per_worker
    if workers_per_context is not None:
        workers = workers_per_context
    for name, value in (("replies per worker", replies), ("workers per context", workers)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UserError(f"{name} must be at least 1, got {value}; use a mode such as 4R1W, 2R2W or 1R4W")
    return replies, workers


def mode_name(replies: int, workers: int) -> str:
    return f"{replies}R{workers}W"


def _turn_text(turn, where: str, k: int) -> str:
    text = turn.get("text") if isinstance(turn, dict) else turn
    if not isinstance(text, str) or not text.strip():
        raise UserError(f"{where}: turn {k} has an empty context text; every turn needs text")
    return text


def parse_dialogue(obj, where: str, default_id: str) -> list[Context]:
    if isinstance(obj, dict):
        turns, dialogue_id = obj.get("dialogue"), obj.get("id", default_id)
    else:
        turns, dialogue_id = obj, default_id
    if not isinstance(turns, list):
        raise UserError(f"{where}: no dialogue; {FIX}")
    if not turns:
        raise UserError(f"{where}: empty context (the dialogue has no turns); give each dialogue at least one turn")
    texts = [_turn_text(t, where, k) for k, t in enumerate(turns, start=1)]
    marked = [i for i, t in enumerate(turns) if isinstance(t, dict) and "responses" in t]
    ends = marked or [max(0, len(turns) - 2)]
    return [Context(f"{dialogue_id}:{i}", str(dialogue_id), i, tuple(texts[:i + 1]),
                    texts[i + 1] if i + 1 < len(texts) else "") for i in ends]


def read_contexts(path: str | Path) -> list[Context]:
    contexts, seen = [], set()
    for number, (where, obj) in enumerate(read_jsonl(path, "contexts file", FIX), start=1):
        for context in parse_dialogue(obj, where, f"d{number}"):
            if context.context_id in seen:
                raise UserError(f"{where}: context {context.context_id!r} appears twice; give every dialogue a "
                                f"unique id")
            seen.add(context.context_id)
            contexts.append(context)
    return contexts

