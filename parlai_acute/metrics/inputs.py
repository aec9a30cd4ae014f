"""Test sets for the reference-based metrics, all read into one shape: :class:`Item`.

An item is one context (its turns, oldest first, the last one the partner's), its
references (the first is the *single* reference; the others are further references),
and an id that replies are matched by. Sources:

* the DailyDialog multi-reference layout (Gupta et al. 2019): JSON lines, each a
  dialogue, either a list of turns or ``{"dialogue": [...]}``; every turn has ``text``
  and may have ``responses`` (further replies to that turn). The reply to turn ``i`` has
  the references ``[turn i+1's text] + turn i's responses``; a last turn with responses
  gives an item with those alone; when only some turns carry ``responses`` (a collection's
  export), only those are items. Item ids are ``<line>:<turn>``;
* a CSV with one context per row: columns for the context (turns separated by newlines
  or `` __eou__ ``), the gold response (the single reference), further references (a
  JSON list or a tab-separated list) and optionally an id and a model reply;
* any ParlAI teacher (``-t``): every example's text (after the earlier turns of its
  episode) is the context, its labels are the references. This package's
  ``static_contexts`` task gives its contexts' turns and ids this way (single reference).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.jsonl import input_file

EOU = " __eou__ "


@dataclass
class Item:
    id: str
    context: list[str]
    references: list[str]
    extra: dict = field(default_factory=dict)

    @property
    def reference(self) -> str:
        return self.references[0]


def check_items(items: list[Item], where: str) -> list[Item]:
    if not items:
        raise UserError(f"{where} has no context with a reference; check the file or task")
    seen = set()
    for item in items:
        if item.id in seen:
            raise UserError(f"{where}: the id {item.id!r} appears twice; ids must be unique")
        seen.add(item.id)
        if not item.references:
            raise UserError(f"{where}: item {item.id!r} has no reference; give every context at least one")
    return items


def _open_text(path: Path, what: str) -> str:
    from parlai_acute.jsonl import read_text

    return read_text(path, what, "pass an existing file")


def read_dailydialog(path: str | Path) -> list[Item]:
    """Items of a multi-reference file. A dialogue in which only some turns carry ``responses``
    (what ``multiref export`` writes: the context turns before a collected one carry none) gives
    items for those turns only, so the collected contexts alone are scored."""
    from parlai_acute.jsonl import read_jsonl

    items = []
    for where, raw in read_jsonl(path, "test set", "pass a JSON-lines file, one dialogue per line"):
        number = where.rsplit(":", 1)[1]
        turns = raw.get("dialogue", raw.get("dialog", raw.get("turns"))) if isinstance(raw, dict) else raw
        if not isinstance(turns, list) or not all(isinstance(t, dict) and isinstance(t.get("text"), str) for t in turns):
            raise UserError(f"{where}: a dialogue must be a list of turns, each with a 'text' string "
                            "(and optionally a 'responses' list)")
        texts = [t["text"] for t in turns]
        only_collected = any("responses" in t for t in turns) and not all("responses" in t for t in turns[:-1])
        for i, turn in enumerate(turns):
            responses = turn.get("responses") or []
            if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
                raise UserError(f"{where}: turn {i + 1}'s 'responses' must be a list of strings")
            if only_collected and "responses" not in turn:
                continue
            refs = ([texts[i + 1]] if i + 1 < len(texts) else []) + list(responses)
            if refs:
                items.append(Item(f"{number}:{i}", texts[:i + 1], refs))
    return check_items(items, str(path))


def split_references(value: str) -> list[str]:
    """Further references of a CSV cell: a JSON list, else tab-separated."""
    value = (value or "").strip()
    if not value:
        return []
    if value.startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
            return parsed
    return [v for v in value.split("\t") if v.strip()]


def split_context(value: str) -> list[str]:
    value = (value or "").replace("\r\n", "\n")
    parts = value.split("\n") if "\n" in value else value.split(EOU.strip())
    return [p.strip() for p in parts if p.strip()]


def read_csv_rows(path: str | Path, needed: list[str]) -> tuple[list[dict], list[str]]:
    """(rows, "FILE:LINE" of each) of a CSV, through the one table reader (a byte-order mark is
    not part of the first column's name); a missing needed column is a one-line error."""
    from parlai_acute.table_files import read_rows

    return read_rows(path, noun="CSV file", row="row", required=needed,
                     missing_hint="pass an existing .csv file",
                     empty_hint="give a header line naming the columns (see the --*-column options) and one row "
                            "per item")


def read_csv(path: str | Path, context: str = "context", response: str = "response",
             references: str = "references", id_column: str = "id", reply: str = "reply") -> list[Item]:
    rows, _ = read_csv_rows(path, [context, response])
    items = []
    for number, row in enumerate(rows, start=2):
        refs = [row[response]] if (row.get(response) or "").strip() else []
        refs += split_references(row.get(references) or "")
        extra = {"reply": row[reply]} if row.get(reply) is not None and reply in row else {}
        items.append(Item(row.get(id_column) or str(number - 1), split_context(row[context]), refs, extra))
    return check_items(items, str(path))


def read_teacher(task: str, datatype: str = "valid", datapath: str | None = None, limit: int = 0,
                 extra_args: list[str] | None = None) -> list[Item]:
    """Examples of a ParlAI teacher, in order, with their episode's earlier turns as context."""
    from parlai.core.params import ParlaiParser
    from parlai.core.worlds import create_task

    from parlai_acute.paths import default_datapath
    from parlai_acute.worlds.model_spec import parse_parlai
    from parlai_acute.worlds.self_chat_opt import task_path

    parser = ParlaiParser(True, False)
    if task == "static_contexts":
        task = "parlai_acute.tasks.static_contexts"
    if datatype == "train":
        datatype = "train:evalmode:ordered"  # valid and test are read in order already
    argv = ["-t", task_path(task), "-dt", datatype, "--datapath", datapath or default_datapath(),
            ] + list(extra_args or [])
    opt = parse_parlai(parser, argv, task, "task", "task")
    from parlai.agents.repeat_label.repeat_label import RepeatLabelAgent

    try:
        world = create_task(opt, RepeatLabelAgent(opt))
    except (ImportError, RuntimeError, FileNotFoundError) as exc:
        raise UserError(f"cannot load the task {task!r}: {' '.join(str(exc).split())}; "
                        "use static_contexts or a ParlAI task path") from None
    items, history, episode, entry = [], [], 0, 0
    while not world.epoch_done() and (not limit or len(items) < limit):
        world.parley()
        act = world.get_acts()[0]
        labels = list(act.get("labels") or act.get("eval_labels") or [])
        text = act.get("text") or ""
        turns = list(act["context_turns"]) if act.get("context_turns") else history + [t for t in text.split("\n") if t]
        if labels:
            item_id = str(act.get("context_id") or f"{episode}:{entry}")
            items.append(Item(item_id, turns, [str(x) for x in labels],
                              {"label_candidates": list(act.get("label_candidates") or [])}))
        history = turns + labels[:1]
        entry += 1
        if act.get("episode_done"):
            history, episode, entry = [], episode + 1, 0
    return check_items(items, f"task {task}")


def load_items(data: str | None = None, task: str | None = None, **options) -> list[Item]:
    """Items from ``data`` (.jsonl DailyDialog layout or .csv) or a ParlAI ``task``."""
    if bool(data) == bool(task):
        raise UserError("give exactly one of data=FILE (.jsonl or .csv) and task=TASK", param=("data", "task"))
    if task:
        return read_teacher(task, options.get("datatype", "valid"), options.get("datapath"), options.get("limit", 0))
    suffix = Path(data).suffix.lower()
    if suffix == ".csv":
        return read_csv(data, **{k: v for k, v in options.get("csv_columns", {}).items()})
    if suffix in (".jsonl", ".json"):
        return read_dailydialog(data)
    if Path(data).is_dir():  # not an unknown format: the output directory of an earlier step, say
        input_file(data, "data", "pass a .jsonl (DailyDialog layout) or a .csv", param="data")
    raise UserError(f"data {data}: unknown format {suffix or '(no extension)'}; use .jsonl "
                    "(DailyDialog multi-reference layout) or .csv", param="data")
