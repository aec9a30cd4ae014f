"""The items file of the static SSA labelling task: one model reply in its context per line.

JSON lines, one item per line (what ``parlai-acute ssa generate`` and ``items_from_log`` write)::

    {"item_id": "ctx12:smollm2", "context": ["Hi! How was your weekend?", "Great, I went hiking.",
     "Oh nice, where did you go?"], "reply": "To the lake near my town.", "model": "smollm2"}

``context``: the turns before the reply, 1 or more, speakers alternating and ending with the
*other* speaker's turn (the reply answers it). ``model`` names who wrote the reply ("human" for
real next turns); it is stored with every label and never shown to workers. ``id`` and ``item``
(the key ``parlai-acute ssa generate`` writes, :mod:`parlai_acute.ssa.items`) are accepted for
``item_id``. Optional keys, copied into every label (the columns of :mod:`parlai_acute.ssa.labels`):
``context_id`` (the same for every model's reply to one context; default: a digest of the context's text, so replies to the same context group together),
``source`` (``static``, the default, or ``log`` / ``interactive`` for turns of conversations),
``conversation`` and ``turn`` (where a reply of a conversation sits). Other keys (the decoding
used, ...) are kept and ignored.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.jsonl import read_jsonl

SOURCES = ("static", "interactive", "log")
FIX = "write one JSON object per line with item, context (list of turns), reply and model (what `ssa generate` writes)"


@dataclass(frozen=True)
class SsaItem:
    item_id: str
    context: tuple
    reply: str
    model: str
    extra: dict = field(default_factory=dict, compare=False, hash=False)


def _text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def parse_item(obj, where: str) -> SsaItem:
    if not isinstance(obj, dict):
        raise UserError(f"{where}: not a JSON object; {FIX}")
    item_id = obj.get("item_id", obj.get("id", obj.get("item")))  # ``item``: what `ssa generate` writes
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        item_id = str(item_id)
    if not _text(item_id):
        raise UserError(f"{where}: missing item (the item's id); give every item a unique id")
    context = obj.get("context")
    if not isinstance(context, list) or not context:
        raise UserError(f"{where}: item {item_id!r} has an empty context; give the turns before the reply as a "
                        f"non-empty list of strings")
    for k, turn in enumerate(context, start=1):
        if not _text(turn):
            raise UserError(f"{where}: item {item_id!r}, context turn {k} is empty or not a string; every turn "
                            f"needs text")
    if not _text(obj.get("reply")):
        raise UserError(f"{where}: item {item_id!r} has no reply; give the model's reply as a non-empty string")
    if not _text(obj.get("model")):
        raise UserError(f"{where}: item {item_id!r} has no model; name who wrote the reply (\"human\" for real "
                        f"next turns)")
    extra = {k: v for k, v in obj.items() if k not in ("item_id", "id", "item", "context", "reply", "model")}
    source = extra.get("source", "static")
    if source not in SOURCES:
        raise UserError(f"{where}: item {item_id!r} has source {source!r}; use one of {', '.join(SOURCES)}")
    return SsaItem(str(item_id), tuple(context), obj["reply"], str(obj["model"]), extra)


def context_id(item: SsaItem) -> str:
    """The item's ``context_id``, or a digest of its context turns."""
    given = item.extra.get("context_id")
    if given not in (None, ""):
        return str(given)
    return "ctx-" + hashlib.sha1("\n".join(item.context).encode("utf-8")).hexdigest()[:12]


def label_fields(item: SsaItem) -> dict:
    """What every label of ``item`` carries besides the answers (labels-table columns)."""
    turn = item.extra.get("turn")
    return {"model": item.model, "context": list(item.context), "reply": item.reply, "context_id": context_id(item),
            "source": item.extra.get("source", "static"), "conversation": str(item.extra.get("conversation") or ""),
            "turn": turn if isinstance(turn, int) and not isinstance(turn, bool) else None}


def read_items(path: str | Path) -> list[SsaItem]:
    """Read and check an items file; one-line UserErrors name the line and the fix."""
    items, seen = [], {}
    for where, obj in read_jsonl(path, "SSA items file", f"make one with `parlai-acute ssa generate` or {FIX}"):
        item = parse_item(obj, where)
        if item.item_id in seen:
            raise UserError(f"{where}: item_id {item.item_id!r} was already used at line {seen[item.item_id]}; "
                            f"give every item a unique id")
        seen[item.item_id] = where.rsplit(":", 1)[1]
        items.append(item)
    return items
