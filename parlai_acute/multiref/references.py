"""Collected references: the one tidy table every multi-reference analysis reads.

One row per collected reply: in collection mode ``mode`` (4R1W: 4 replies from 1 worker;
2R2W; 1R4W; or any name), a worker wrote ``reply`` to the context ``context_id`` whose
*original* next turn (the one reference the dataset had) is ``original``. Every row of one
context carries the same context and original. Rows come from a Mephisto run
(``task_name=``: complete reply sets only, as the modes compare sets of exactly R replies),
from a table file, or from a DailyDialog multi-reference file (:func:`collection_records`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.table_files import TableFile, plain_cells, records_frame

__all__ = ["COLUMNS", "REQUIRED", "references_table", "read_references", "write_references", "collection_records"]

COLUMNS: dict[str, tuple[bool, str]] = {
    "mode": (True, "the collection mode (4R1W, 2R2W, 1R4W or any name)"),
    "context_id": (True, "id of the context the reply answers, unique within its mode"),
    "context": (True, "the context turns, oldest first, joined by newlines"),
    "original": (True, "the context's original next turn (the dataset's one reference)"),
    "reply": (True, "one collected reply"),
    "worker": (False, "who wrote the reply"),
    "dialogue": (False, "id of the dialogue the context is cut from"),
}
REQUIRED = [name for name, (required, _) in COLUMNS.items() if required]


def references_table(records, where: list[str] | None = None) -> pd.DataFrame:
    """Validate rows (dicts or a DataFrame) into the :data:`COLUMNS` table; one-line errors name the
    row (``where``, default ``row N``) and the field."""
    raw, where = records_frame(records, where, row="reference row", required=REQUIRED, columns=COLUMNS)
    if raw.empty:
        raise UserError("no references: the references table has no rows")
    missing = [name for name in REQUIRED if name not in raw]
    if missing:
        raise UserError(f"{where[0]}: missing field {missing[0]!r}; every reference row needs {', '.join(REQUIRED)}")
    out = pd.DataFrame(index=raw.index)
    for name in COLUMNS:
        values = raw[name] if name in raw else pd.Series("", index=raw.index)
        if values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
            # a context given as a list of turns (JSON lines): its turns joined by newlines
            values = values.map(lambda v: "\n".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
        out[name] = plain_cells(values, len(raw))
        empty = (out[name].str.strip() == "").to_numpy()
        if name in REQUIRED and empty.any():
            raise UserError(f"{where[int(np.flatnonzero(empty)[0])]}: field {name!r} is empty; fill it in or drop "
                            f"the row")
    for name in ("context", "original"):
        first = out.groupby(["mode", "context_id"])[name].transform("first")
        differs = (out[name] != first).to_numpy()
        if differs.any():
            i = int(np.flatnonzero(differs)[0])
            raise UserError(f"{where[i]}: field {name!r} differs from an earlier row of context "
                            f"{out['context_id'].iloc[i]!r} (mode {out['mode'].iloc[i]!r}); one context has one "
                            f"{name}")
    return out[list(COLUMNS)].reset_index(drop=True)


FILE = TableFile("references file", "reference row", COLUMNS, references_table,
                 f"pass a .csv or .jsonl with the columns {', '.join(REQUIRED)}", "export a run with finished reply sets")


def read_references(path: str | Path) -> pd.DataFrame:
    """Read a references ``.csv`` (UTF-8, BOM allowed) or ``.jsonl`` file into the table."""
    return FILE.read(path)


def write_references(path: str | Path, table) -> None:
    """Write a references table (or records, validated first) atomically as ``.csv`` or ``.jsonl``."""
    FILE.write(path, table)


def collection_records(path: str | Path, mode: str) -> list[dict]:
    """The rows of a DailyDialog multi-reference file (JSON lines, each dialogue a list of turns or
    ``{"dialogue": [...]}``, every turn with ``text`` and an optional ``responses`` list; what
    ``parlai-acute multiref export`` writes) collected in ``mode``: a turn with responses and a next
    turn is one context, its next turn the original. (The metrics' test-set reader merges the
    original into the references; this keeps it apart.)"""
    from parlai_acute.jsonl import read_jsonl

    rows = []
    for where, raw in read_jsonl(path, "multi-reference file", "pass the .jsonl `parlai-acute multiref export` "
                                                               "wrote"):
        number = where.rsplit(":", 1)[1]
        turns = raw.get("dialogue", raw.get("dialog")) if isinstance(raw, dict) else raw
        if not isinstance(turns, list) or not all(isinstance(t, dict) and isinstance(t.get("text"), str)
                                                  for t in turns):
            raise UserError(f"{where}: a dialogue must be a list of turns, each with a 'text' string and optionally "
                            f"a 'responses' list")
        dialogue = str(raw.get("id", number)) if isinstance(raw, dict) else number
        for i, turn in enumerate(turns):
            responses = turn.get("responses") or []
            if not isinstance(responses, list) or not all(isinstance(r, str) for r in responses):
                raise UserError(f"{where}: turn {i + 1}'s 'responses' must be a list of strings")
            workers = turn.get("response_workers") or []
            if i + 1 < len(turns):
                rows += [{"mode": mode, "context_id": f"{number}:{i}", "context": [t["text"] for t in turns[:i + 1]],
                          "original": turns[i + 1]["text"], "reply": reply.strip(),
                          "worker": workers[k] if k < len(workers) else "", "dialogue": dialogue}
                         for k, reply in enumerate(responses) if reply.strip()]
    if not rows:
        raise UserError(f"{path} has no turn with collected 'responses' and a next turn; nothing to analyse")
    return rows
