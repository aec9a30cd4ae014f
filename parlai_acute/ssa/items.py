"""Items to label for SSA: one model reply in its context, written once and labelled by many.

An items file is JSON lines, one reply each::

    {"item": "smol:ctx7", "context_id": "ctx7", "context": ["Hi!", "Hello, how are you?"],
     "model": "smol", "reply": "...", "source": "static", "decoding": {...}, "model_config": {...}}

with ``conversation`` and ``turn`` for replies taken from a log. Contexts come from the
packaged static contexts (real human conversations cut after 1-3 turns, with the real next
turn), from a user's file (:func:`read_contexts`), or from a Conversations log
(:func:`items_from_log`: every turn of one speaker, its context the turns before it).
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.files import write_jsonl

EOU = "__eou__"


def packaged_contexts(num: int, seed: int = 0, max_turns: int = 3, split: str = "test") -> list[dict]:
    """``num`` contexts from :mod:`parlai_acute.tasks.static_contexts` (with the real next turn)."""
    from parlai_acute.tasks.static_contexts import static_contexts

    if num < 1 or not 1 <= max_turns <= 3:
        raise UserError(f"--num-contexts must be 1 or more and --max-turns 1-3, got {num} and {max_turns}")
    return [{"context_id": c["context_id"], "context": list(c["context_turns"]), "reference": c["reference"]}
            for c in static_contexts(seed, num, max_turns, split)]


def _turns(value, where: str) -> list[str]:
    if isinstance(value, str):
        parts = value.split(EOU) if EOU in value else value.split("\n")
    elif isinstance(value, list) and all(isinstance(t, str) for t in value):
        parts = value
    else:
        raise UserError(f"{where}: field 'context' must be a list of turns or a string (turns separated by newlines "
                        f"or {EOU})")
    turns = [t.strip() for t in parts]
    if not turns or all(not t for t in turns):
        raise UserError(f"{where}: the context is empty; give at least one turn the reply answers")
    if any(not t for t in turns):
        raise UserError(f"{where}: the context has an empty turn; remove it or write what was said")
    return turns


def _context_row(raw: dict, where: str, number: int) -> dict:
    if "context" not in raw:
        raise UserError(f"{where}: missing field 'context'; each row needs its context turns")
    context_id = str(raw.get("context_id", raw.get("id", "")) or f"ctx{number}").strip()
    reference = raw.get("reference", raw.get("response"))
    reference = reference.strip() if isinstance(reference, str) and reference.strip() else None
    return {"context_id": context_id, "context": _turns(raw["context"], where), "reference": reference}


def read_contexts(path: str | Path) -> list[dict]:
    """Contexts from a ``.jsonl`` (objects with ``context``: list or newline-joined string,
    optional ``context_id``/``id`` and ``reference``/``response``) or ``.csv`` (same columns;
    turns separated by newlines or ``__eou__``) file, through the one table reader. An empty
    context or a repeated id is an error."""
    from parlai_acute.table_files import read_rows

    records, where = read_rows(path, noun="contexts file", row="context", required=["context"],
                               missing_hint="pass a .jsonl or .csv with a 'context' column",
                               empty_hint="give one context per line")
    out = [_context_row(raw, w, number) for number, (raw, w) in enumerate(zip(records, where))]
    _unique([row["context_id"] for row in out], f"contexts file {path}: the id {{!r}} appears twice; ids must be "
                                                  f"unique")
    return out


def human_items(contexts: list[dict], name: str = "human") -> list[dict]:
    """The real next turns as replies of a ``human`` model, labelled like any other model."""
    missing = [c["context_id"] for c in contexts if not c.get("reference")]
    if missing:
        raise UserError(f"context {missing[0]!r} has no real next turn ('reference'); give one for every context to "
                        f"label human replies")
    return [{"item": f"{name}:{c['context_id']}", "context_id": c["context_id"], "context": c["context"],
             "model": name, "reply": c["reference"], "source": "static", "decoding": None,
             "model_config": {"spec": "real next turn of the conversation"}} for c in contexts]


def items_from_log(path: str | Path, speaker: str, model: str | None = None) -> list[dict]:
    """Every turn of ``speaker`` in a Conversations log as an item, its context the turns
    before it in the conversation. Seed turns (``seed`` true: real openings said on a
    model's behalf) and turns with nothing before them are skipped."""
    from parlai_acute.logs import read_log

    episodes = read_log(path)
    stem = Path(path).stem
    items, speakers = [], set()
    for episode in episodes:
        speakers.update(episode.speakers)
        texts = [str(t.get("text") or "") for t in episode.turns]
        for i, turn in enumerate(episode.turns):
            if turn["id"] != speaker or turn.get("seed") or i == 0 or not texts[i].strip():
                continue
            conversation = f"{stem}:{episode.line}"
            items.append({"item": f"{conversation}:{i}", "context_id": "", "context": texts[:i],
                          "model": model or speaker, "reply": texts[i], "source": "log",
                          "conversation": conversation, "turn": i, "decoding": turn.get("decoding"),
                          "model_config": {"log": str(path), "speaker": speaker}})
    if not items:
        if speaker not in speakers:
            raise UserError(f"speaker {speaker!r} does not appear in {path}; its speakers are "
                            f"{', '.join(sorted(map(str, speakers)))}")
        raise UserError(f"speaker {speaker!r} has no turn with a context before it in {path}; nothing to label")
    return items


def write_items(path: str | Path, items: list[dict]) -> int:
    """Write items atomically as JSON lines; returns how many."""
    if Path(path).suffix.lower() != ".jsonl":
        raise UserError(f"items file {path} must end in .jsonl")
    _unique([item["item"] for item in items], "item id {!r} appears twice; give each model a different name")
    return write_jsonl(path, items)


def _unique(ids: list, message: str) -> None:
    """A UserError (``message`` formatted with the id) at the first id seen twice."""
    seen = set()
    for value in ids:
        if value in seen:
            raise UserError(message.format(value))
        seen.add(value)


def read_items(path: str | Path) -> list[dict]:
    """Read an items file written by :func:`write_items` (for the labelling task)."""
    from parlai_acute.jsonl import read_jsonl

    items = []
    for where, item in read_jsonl(path, "items file", "write it with `parlai-acute ssa generate`"):
        for name in ("item", "context", "model", "reply"):
            if not isinstance(item, dict) or name not in item:
                raise UserError(f"{where}: missing field {name!r}; items need item, context, model, reply")
        items.append(item)
    return items
