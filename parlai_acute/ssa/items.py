"""The SSA protocol's definition: items to label (one model reply in its context, written once and
labelled by many) and the gold items of onboarding. No Mephisto, no ParlAI: the labelling task,
the judges and ``ssa generate`` all read and write items here.

An items file is JSON lines, one reply each (what ``parlai-acute ssa generate`` writes)::

    {"item": "smol:ctx7", "context_id": "ctx7", "context": ["Hi!", "Hello, how are you?"],
     "model": "smol", "reply": "...", "source": "static", "decoding": {...}, "model_config": {...}}

``context``: the turns before the reply, 1 or more, speakers alternating and ending with the
*other* speaker's turn (the reply answers it). ``model`` names who wrote the reply ("human" for
real next turns); it is stored with every label and never shown to workers. ``item_id`` and ``id``
are accepted for ``item``. Optional keys, copied into every label (the columns of
:mod:`parlai_acute.ssa.labels`): ``context_id`` (the same for every model's reply to one context;
default: a digest of the context's text, so replies to the same context group together),
``source`` (``static``, the default, or ``log`` / ``interactive`` for turns of conversations),
``conversation`` and ``turn`` (where a reply of a conversation sits). Other keys (the decoding
used, ...) are kept and ignored.

Contexts come from the packaged static contexts (:func:`parlai_acute.ssa.generate.packaged_contexts`:
real human conversations cut after 1-3 turns, with the real next turn), from a user's file
(:func:`read_contexts`), or from a Conversations log (:func:`items_from_log`: every turn of one
speaker, its context the turns before it).

Gold items (:data:`GOLD_ITEMS`): a context and a plainly nonsensical reply. A worker who says
such a reply makes sense fails, is told so and gets the block qualification (as in ACUTE-Eval
and the per-turn task); a judge model is checked on them the same way. A lab can pass its own
JSON list of ``{"context": [...], "reply": "...", "sensible": false}`` (optionally ``"specific"``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.files import write_jsonl
from parlai_acute.jsonl import read_json_list, read_jsonl

__all__ = ["SsaItem", "SOURCES", "read_contexts", "human_items", "items_from_log",
           "write_items", "parse_item", "read_items", "context_id", "label_fields",
           "GOLD_ITEMS", "load_gold", "gold_passed"]

EOU = "__eou__"
SOURCES = ("static", "interactive", "log")
FIX = "write one JSON object per line with item, context (list of turns), reply and model (what `ssa generate` writes)"


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
    item_id = obj.get("item", obj.get("item_id", obj.get("id")))
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
    """Read and check an items file (the one reader: the labelling task, the judges, tests);
    one-line UserErrors name the line and the fix."""
    items, seen = [], {}
    for where, obj in read_jsonl(path, "SSA items file", f"make one with `parlai-acute ssa generate` or {FIX}"):
        item = parse_item(obj, where)
        if item.item_id in seen:
            raise UserError(f"{where}: item {item.item_id!r} was already used at line {seen[item.item_id]}; "
                            f"give every item a unique id")
        seen[item.item_id] = where.rsplit(":", 1)[1]
        items.append(item)
    return items


GOLD_ITEMS = [
    {"context": ["Hi! I just got back from a week of hiking in the Alps."],
     "reply": "Bananas are yellow because the sea is made of glass.", "sensible": False},
    {"context": ["What are you cooking tonight?", "Pasta with tomato sauce, I think.",
                 "Nice, do you make the sauce yourself?"],
     "reply": "Purple seven jumps over the quiet Tuesday of my car.", "sensible": False},
    {"context": ["My sister is getting married next month and I have to give a speech."],
     "reply": "The the the the the the the.", "sensible": False},
]


def load_gold(path: str | None) -> list[dict]:
    """The packaged gold items, or a lab's own JSON list of the same objects."""
    return read_json_list(path, "onboarding file", "needs context (non-empty list of turns), reply and sensible "
                                                   "(true/false)", _gold, GOLD_ITEMS)


def _gold(item) -> bool:
    return bool(isinstance(item, dict) and isinstance(item.get("context"), list) and item["context"]
                and all(_text(t) for t in item["context"]) and _text(item.get("reply"))
                and isinstance(item.get("sensible"), bool) and isinstance(item.get("specific", False), bool))


def gold_passed(item: dict, sensible: bool, specific: bool) -> bool:
    """Did the worker give the gold answer (sensibleness, and specificity where the item says)?"""
    if sensible != item["sensible"]:
        return False
    return "specific" not in item or specific == item["specific"]
