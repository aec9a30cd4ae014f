"""Reading a tidy table's rows from a ``.csv`` or ``.jsonl`` file: one reader for every table.

The per-turn turns, SSA labels and ConvAI2 ratings tables are files people export, edit in a
spreadsheet ("CSV UTF-8" adds a byte-order mark) and pass back. This returns their raw rows
and where each came from (``FILE:LINE``), so the table's own validator can name the line of
any bad value; every problem with the file itself is a one-line UserError saying how to fix it.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from parlai_acute.errors import UserError
from parlai_acute.files import atomic_write, write_jsonl
from parlai_acute.jsonl import input_file

#: The one set of spellings every table accepts for true, false and "no value" (lower-cased, stripped):
#: what spreadsheets, pandas and JSON write.
TRUE = frozenset({"true", "1", "yes", "t", "y", "1.0"})
FALSE = frozenset({"false", "0", "no", "f", "n", "0.0"})
MISSING = frozenset({"", "none", "null", "nan", "<na>"})


def plain(value) -> str:
    """A cell as text: None, NaN and pandas' NA are the empty string."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType":
        return ""
    return str(value)


def header(path: str | Path) -> list[str]:
    """The column names of a table file as it is, without validating anything: a CSV's header line,
    or the keys of a JSON-lines file's first object ([] when there is none). What a message about
    the wrong table shows the user (``parlai_acute.api.load_table``)."""
    path = input_file(path, "table file", "pass a .csv or .jsonl table")
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            if path.suffix.lower() == ".jsonl":
                line = next((line for line in handle if line.strip()), "")
                try:
                    first = json.loads(line) if line else {}
                except json.JSONDecodeError:
                    return []
                return list(first) if isinstance(first, dict) else []
            return next(csv.reader(handle), [])
    except (OSError, UnicodeDecodeError):
        return []  # the reader says why, with the line


def read_rows(path: str | Path, *, noun: str, row: str, required: list[str], missing_hint: str,
              empty_hint: str) -> tuple[list[dict], list[str]]:
    """(records, where) of the table file ``path``.

    ``noun`` names the file in messages ("turns file"), ``row`` one row ("turn row"),
    ``required`` the columns a CSV header must have; ``missing_hint`` and ``empty_hint`` say
    what to pass instead of an absent or an empty file.
    """
    path = input_file(path, noun, missing_hint)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise UserError(f"{noun} {path} must end in .csv or .jsonl")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {noun} {path}: {exc}; it must be UTF-8 text") from None
    records, where = [], []
    if suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{number}: not valid JSON ({exc.msg}); each line must be one {row} "
                                f"object") from None
            if not isinstance(record, dict):
                raise UserError(f"{path}:{number}: a {row} must be an object with the fields {', '.join(required)}")
            records.append(record)
            where.append(f"{path}:{number}")
    else:
        reader = csv.DictReader(text.splitlines(keepends=True))
        missing = [name for name in required if name not in (reader.fieldnames or [])]
        if reader.fieldnames and missing:
            raise UserError(f"{path}:1: missing column {missing[0]!r} in the header; the columns needed are "
                            f"{', '.join(required)}")
        for record in reader:
            if None in record:  # more cells than header names
                raise UserError(f"{path}:{reader.line_num}: more values than columns; quote fields that contain "
                                f"commas")
            records.append(record)
            where.append(f"{path}:{reader.line_num}")
    if not records:
        raise UserError(f"{noun} {path} is empty (no {row}s); {empty_hint}")
    return records, where


def write_table_file(path: str | Path, table, columns: list[str], noun: str) -> None:
    """Write a tidy table atomically as ``.csv`` or ``.jsonl`` (by suffix) with ``columns`` first
    (extra columns kept after them); :func:`read_rows` reads it back. ``noun`` names the file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".jsonl"):
        raise UserError(f"{noun} {path} must end in .csv or .jsonl")
    table = table.reindex(columns=list(columns) + [c for c in table.columns if c not in columns])
    if suffix == ".jsonl":
        write_jsonl(path, table.astype(object).where(table.notna(), None).to_dict(orient="records"))
    else:
        with atomic_write(path) as fh:
            table.to_csv(fh, index=False)


@dataclass(frozen=True)
class TableFile:
    """One tidy table's file, read and written the same way for every protocol: its ``columns``
    (name -> (required, description)), its ``validate(records, where, **checks)`` and the words of
    its messages (``noun`` "turns file", ``row`` "turn row", what to pass when the file is absent or empty)."""

    noun: str
    row: str
    columns: dict
    validate: Callable
    missing_hint: str
    empty_hint: str

    def read(self, path: str | Path, **checks):
        """The validated table of a ``.csv`` (UTF-8, with or without BOM) or ``.jsonl`` file."""
        required = [name for name, (needed, _) in self.columns.items() if needed]
        records, where = read_rows(path, noun=self.noun, row=self.row, required=required,
                                   missing_hint=self.missing_hint, empty_hint=self.empty_hint)
        return self.validate(records, where, **checks)

    def write(self, path: str | Path, table) -> None:
        """Write the table (or records, validated first) atomically as ``.csv`` or ``.jsonl`` (by suffix)."""
        import pandas as pd

        write_table_file(path, table if isinstance(table, pd.DataFrame) else self.validate(table),
                         list(self.columns), self.noun)


def exclusions(table, rules, noun: str) -> list[dict]:
    """Per exclusion rule, how many rows (counted as ``noun``: "judgments", "turns") and workers
    it excluded, from the table's ``excluded_because`` column; every rule listed, zeros too."""
    rows = []
    for rule in rules:
        part = table[table["excluded_because"] == rule]
        rows.append({"reason": rule, noun: int(len(part)), "workers": int(part["worker"].nunique())})
    return rows
