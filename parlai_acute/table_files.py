"""Reading a tidy table from a ``.csv``, ``.jsonl`` or ``.parquet`` file: one reader for every table.

The per-turn turns, SSA labels and ConvAI2 ratings tables are files people export, edit in a
spreadsheet ("CSV UTF-8" adds a byte-order mark) and pass back. This returns their raw rows
and where each came from (``FILE:LINE``), so the table's own validator can name the line of
any bad value; every problem with the file itself is a one-line UserError saying how to fix it.

A million-row table is read and checked by columns, not row by row: :func:`read_frame` parses a CSV
with pandas (the row-by-row reader only when pandas would read it otherwise than :func:`read_rows`,
which then says what is wrong) and names a bad row's line only when there is one (:class:`RowLabels`);
:func:`text_cells` and :func:`flag_cells` are the cell rules below (``plain``, ``MISSING``, ``TRUE``,
``FALSE``) applied to a whole column at once.
"""
from __future__ import annotations

import csv
import json
import math
import mmap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

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


#: the file types a table is read from and written to
SUFFIXES = (".csv", ".jsonl", ".parquet")


def header(path: str | Path) -> list[str]:
    """The column names of a table file as it is, without validating anything: a CSV's header line,
    a Parquet file's schema, or the keys of a JSON-lines file's first object ([] when there is none).
    What a message about the wrong table shows the user (``parlai_acute.api.load_table``)."""
    path = input_file(path, "table file", "pass a .csv, .jsonl or .parquet table")
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        except Exception:  # noqa: BLE001 - the reader says why in one line
            return []
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


class RowLabels(Sequence):
    """Where each row of a table came from, in messages: ``row N`` (1-based), ``PREFIX row N``, or
    ``FILE:LINE`` of a CSV file, counted only when asked (a clean table of a million rows never
    needs one), as :func:`read_rows` counts them. A sequence of strings, like the ``where`` list
    every validator takes."""

    def __init__(self, n: int, prefix: str = "", csv_file: Path | None = None):
        self._n, self._prefix, self._file, self._lines = n, prefix, csv_file, None

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        index = int(index)
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        if self._file is None:
            return f"{self._prefix} row {index + 1}" if self._prefix else f"row {index + 1}"
        if self._lines is None:  # the line each record ends on, as read_rows's reader counts them
            reader = csv.reader(self._file.read_text(encoding="utf-8-sig").splitlines(keepends=True))
            next(reader, None)
            self._lines = [reader.line_num for record in reader if record]
        return f"{self._prefix}:{self._lines[index]}"


def is_arrow_table(table) -> bool:
    """Whether ``table`` is an Arrow table (a file as :func:`read_frame` read it for a columnar validator)."""
    return type(table).__name__ == "Table" and type(table).__module__.startswith("pyarrow")


def columns_of(table) -> dict:
    """{name: column} of a DataFrame or an Arrow table (a column a Series or an Arrow array)."""
    if is_arrow_table(table):
        return {name: table.column(i) for i, name in enumerate(table.column_names)}
    return {name: table[name] for name in table.columns}


def row_of(table, index: int) -> dict:
    """Row ``index`` (by position) of a DataFrame or an Arrow table as a dict of plain Python values,
    as the row-by-row checks read one."""
    if is_arrow_table(table):
        return table.slice(index, 1).to_pylist()[0]
    return table.iloc[[index]].to_dict(orient="records")[0]


def row_labels(where, n: int) -> Sequence:
    """The ``where`` a validator was given (a list or :class:`RowLabels`), else ``row N`` for ``n`` rows."""
    return RowLabels(n) if where is None else where


def records_frame(records, where, *, row: str, required: Sequence[str], columns: Sequence[str]):
    """``(frame, where)`` of the rows a table validator was given: a DataFrame as it is (indexed
    0..n-1), or dicts as a frame (no rows: the empty frame of ``columns``); a row that is not an
    object is a one-line error naming it (``where``, default ``row N``) and the fields ``row`` needs."""
    import pandas as pd

    if isinstance(records, pd.DataFrame):
        raw = records.reset_index(drop=True)
    else:
        records = list(records)
        if set(map(type, records)) - {dict}:
            number = next(i for i, record in enumerate(records) if not isinstance(record, dict))
            label = where[number] if where else f"row {number + 1}"
            raise UserError(f"{label}: a {row} must be an object with the fields {', '.join(required)}")
        raw = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=list(columns))
    return raw, row_labels(where, len(raw))


def _cells(column, n: int):
    """The column as a pandas Series (an absent column: ``n`` None cells)."""
    import pandas as pd

    if column is None:
        return pd.Series([None] * n, dtype=object)
    if _is_arrow(column):
        column = column.to_pandas()
    series = column if isinstance(column, pd.Series) else pd.Series(column)
    if isinstance(series.dtype, pd.api.extensions.ExtensionDtype) and not isinstance(series.dtype,
                                                                                       pd.CategoricalDtype):
        series = series.astype(object)  # nullable and Arrow types: their NA is pd.NA, a MISSING spelling
    return series


def _is_arrow(column) -> bool:
    """Whether ``column`` is an Arrow array (a file's column as Arrow read it)."""
    return type(column).__module__.startswith("pyarrow")


def _is_arrow_text(column) -> bool:
    import pyarrow as pa

    return _is_arrow(column) and (pa.types.is_string(column.type) or pa.types.is_large_string(column.type))


def dictionary_text(table, keep: tuple[str, ...] = ()):
    """The Arrow ``table`` with its text columns (but those named in ``keep``) dictionary-encoded in C:
    pandas then makes them categories (codes and a Python string per distinct value), not a million
    strings. For tables read whole into pandas (Arena battles); a table file checked by columns does not
    need it (:func:`_arrow_text` encodes a column of few values itself, and reading every column
    encoded measured slower: docs/benchmarks.md, api_path_1m)."""
    import pyarrow.compute as pc

    for i, name in enumerate(table.column_names):
        column = table.column(i)
        if name not in keep and _is_arrow_text(column):
            table = table.set_column(i, name, pc.dictionary_encode(column))
    return table


def _arrow_text(column, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`text_cells` of an Arrow text column (what a CSV or Parquet file holds), without making
    a Python string of every cell twice: a column of few distinct values is checked once per value
    and its cells share them; any other is trimmed and measured by Arrow, as :func:`text_cells` does."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    sample = column.slice(0, 10_000)
    if len(pc.unique(sample)) * 10 <= len(sample):  # few distinct values
        encoded = pc.dictionary_encode(column)
        values = encoded.dictionary.to_numpy(zero_copy_only=False)
        text, missing, blank = text_cells(np.asarray(values, dtype=object), len(values))
        slot = len(values)  # a null cell (Parquet) is missing
        codes = pc.fill_null(encoded.indices, slot).to_numpy(zero_copy_only=False)
        text, missing, blank = (np.append(text, np.array([""], dtype=object)), np.append(missing, True),
                                np.append(blank, True))
        return text[codes], missing[codes], blank[codes]
    empty, missing = _arrow_missing(column)
    spread = column.take(pa.array(np.linspace(0, len(column) - 1, min(len(column), 10_000)).astype(np.int64)))
    repeats = len(pc.unique(spread)) * 10 <= len(spread) * 9  # a tenth of a sample across the column repeats
    # (workers, units): one string per distinct value is Arrow's to make (hashing costs more than it saves
    # when nearly every value is new)
    strings = column.to_pandas(deduplicate_objects=repeats).to_numpy(dtype=object)
    text = np.where(missing, "", strings) if missing.any() else strings
    return text, missing, empty


def _arrow_missing(column) -> tuple[np.ndarray, np.ndarray]:
    """(empty once trimmed, missing) of an Arrow text array: null, or a MISSING spelling. A cell that
    begins and ends with a printable ASCII character (no whitespace to trim) is not empty, and no
    MISSING spelling when it is longer than four bytes or does not begin with n, N or <: read from
    the array's offsets and bytes alone; only the other cells are trimmed and measured
    (:func:`_arrow_trimmed`)."""
    import pyarrow as pa

    n = len(column)
    _, offsets, data = column.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64 if pa.types.is_large_string(column.type) else np.int32,
                            count=n + 1, offset=column.offset * (8 if pa.types.is_large_string(column.type) else 4))
    size = np.diff(offsets)
    plain = size > 0
    if data is not None and plain.any():
        data = np.frombuffer(data, dtype=np.uint8)
        cells = np.flatnonzero(plain)
        first, last = data[offsets[cells]], data[offsets[cells + 1] - 1]
        spelled = (size[cells] <= 4) & np.isin(first, np.frombuffer(b"nN<", dtype=np.uint8))
        plain[cells] = (first > 0x20) & (first < 0x7f) & (last > 0x20) & (last < 0x7f) & ~spelled
    if column.null_count:
        plain &= column.is_valid().to_numpy(zero_copy_only=False)
    empty, missing = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    rest = np.flatnonzero(~plain)
    if rest.size:
        part = column.take(pa.array(rest)) if rest.size < n else column
        length, missing[rest] = _arrow_trimmed(part)
        empty[rest] = (length == 0) | missing[rest]
    return empty, missing


def _arrow_trimmed(column) -> tuple[np.ndarray, np.ndarray]:
    """(length once trimmed, missing) of every cell of an Arrow text array: null, or a MISSING spelling
    (only a cell four characters or shorter once trimmed can be one: those are looked at in Python)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    trimmed = pc.utf8_trim_whitespace(column)
    length = pc.fill_null(pc.utf8_length(trimmed), 0).to_numpy(zero_copy_only=False)
    # an ASCII cell: Arrow's trim is Python's strip (tests/test_table_files.py), its lower-casing ASCII's
    spelled = pc.fill_null(pc.is_in(pc.ascii_lower(trimmed), value_set=pa.array(sorted(MISSING))), True)
    missing = spelled.to_numpy(zero_copy_only=False).copy()
    other = np.flatnonzero((length <= 4) & ~pc.fill_null(pc.string_is_ascii(column), True).to_numpy(
        zero_copy_only=False))
    if other.size:  # a short cell with other characters: Python's own rule
        values = np.asarray(column.take(pa.array(other)).to_pylist(), dtype=object)
        codes, uniques = pd.factorize(values)
        missing[other] = np.array([u.strip().lower() in MISSING for u in uniques], dtype=bool)[codes]
    return length, missing


def _strings(series) -> np.ndarray:
    """``str(cell)`` of every cell, in an object array (None, NaN and NA as "None", "nan", "<NA>":
    each a MISSING spelling), by pandas' loop; bytes (which pandas would decode) one by one."""
    import pandas as pd

    values = series.to_numpy()
    if values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
        if any(isinstance(v, bytes) for v in values):
            return np.array([str(v) for v in values], dtype=object)
    return series.astype(str).to_numpy(dtype=object)


def text_cells(column, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(text, missing, blank) of a column, cell by cell the same as ``"" if missing else str(cell)``
    (``text`` may be the column's own array: copy it before changing it)
    with ``missing = plain(cell).strip().lower() in MISSING`` and ``blank = not text.strip()``,
    computed by columns: Arrow trims and measures every cell (its whitespace is Python's, tested in
    tests/test_table_files.py), and only a cell four characters or shorter once trimmed -- the
    only ones that can be a MISSING spelling -- is looked at in Python, once per distinct value.
    ``column``: a Series or array, or None for a column the table lacks (every cell missing)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    if column is None:
        return np.full(n, "", dtype=object), np.ones(n, dtype=bool), np.ones(n, dtype=bool)
    if _is_arrow_text(column):
        return _arrow_text(column, n)
    series = _cells(column, n)
    strings = series.to_numpy()
    if strings.dtype == object and pd.api.types.infer_dtype(strings, skipna=False) == "string":
        pass  # already text: the caller's array (a table built from it copies it)
    else:
        strings = _strings(series)
    if len(strings) > 10_000 and len(pd.unique(strings[:10_000])) <= 1_000:  # few distinct values: each once
        codes, uniques = pd.factorize(strings)
        text, missing, blank = text_cells(np.asarray(uniques, dtype=object), len(uniques))
        return text[codes], missing[codes], blank[codes]
    try:
        arrow = pa.array(strings, type=pa.string())
    except (pa.ArrowException, UnicodeError):  # not UTF-8 (a lone surrogate): Python's strip, one by one
        arrow = None
    if isinstance(arrow, pa.Array):  # Arrow's reading of the cells (the rule above, one array)
        empty, missing = _arrow_missing(arrow)
        text = np.where(missing, "", strings) if missing.any() else strings
        return text, missing, empty
    length = np.array([len(v.strip()) for v in strings], dtype=np.int64)
    missing = np.zeros(len(strings), dtype=bool)
    short = np.flatnonzero(length <= 4)
    if short.size:
        codes, uniques = pd.factorize(strings[short])
        missing[short] = np.array([u.strip().lower() in MISSING for u in uniques], dtype=bool)[codes]
    text = np.where(missing, "", strings) if missing.any() else strings
    return text, missing, (length == 0) | missing


def plain_cells(column, n: int) -> np.ndarray:
    """:func:`plain` of every cell (None, NaN and NA as "", anything else ``str(cell)``), by columns."""
    import pandas as pd

    if column is None:
        return np.full(n, "", dtype=object)
    if _is_arrow_text(column):
        return plain_cells(column.to_pandas(), n)
    series = _cells(column, n)
    values = series.to_numpy()
    if values.dtype == object and pd.api.types.infer_dtype(values, skipna=False) == "string":
        return values.copy()
    strings = _strings(series)
    null = pd.isna(values) & (strings != "NaT") if values.dtype == object or values.dtype.kind == "f" else None
    return np.where(null, "", strings) if null is not None and null.any() else strings


def stripped_cells(column, n: int) -> np.ndarray:
    """``plain(cell).strip()`` of every cell, trimmed by Arrow (whose whitespace is Python's)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    strings = plain_cells(column, n)
    try:
        return pc.utf8_trim_whitespace(pa.array(strings, type=pa.string())).to_numpy(zero_copy_only=False)
    except (pa.ArrowException, UnicodeError):  # not UTF-8 (a lone surrogate): Python's strip, one by one
        return np.array([v.strip() for v in strings], dtype=object)


def lowered_cells(column, n: int) -> np.ndarray:
    """``plain(cell).strip().lower()`` of every cell, once per distinct value (for columns of few
    spellings: true/false, a source, a setting)."""
    import pandas as pd

    codes, uniques = pd.factorize(plain_cells(column, n))
    return np.array([u.strip().lower() for u in uniques], dtype=object)[codes] if n else np.array([], dtype=object)


def per_value(values: np.ndarray, rule) -> np.ndarray:
    """``rule(value)`` of every cell of a column of hashable values, worked out once per distinct value."""
    import pandas as pd

    codes, uniques = pd.factorize(values)
    decided = np.empty(len(uniques) + 1, dtype=object)  # the last: a null cell's (code -1)
    for i, value in enumerate(uniques):
        decided[i] = rule(value)
    return decided[codes]


def flag_cells(column, n: int, optional: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, missing, bad) of a true/false column, cell by cell as the tables read one: a bool as
    it is, 0 and 1 as false and true, else ``str(cell).strip().lower()`` in TRUE or FALSE; with
    ``optional`` a MISSING cell is missing (value False), else bad. Decided once per distinct value."""
    import pandas as pd

    if _is_arrow_text(column):  # a file's column: each distinct text decided once, as below
        import pyarrow as pa
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column)
        cells = encoded.dictionary.to_pylist() + [None]  # the last: a null cell's
        value, missing, bad = flag_cells(np.array(cells, dtype=object), len(cells), optional)
        codes = pc.fill_null(encoded.indices, len(cells) - 1).to_numpy(zero_copy_only=False)
        return value[codes], missing[codes], bad[codes]
    series = _cells(column, n)
    if series.dtype == bool:
        return series.to_numpy(), np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)

    def decide(cell):
        if isinstance(cell, (bool, np.bool_)):
            return bool(cell)
        if optional and plain(cell).strip().lower() in MISSING:
            return None
        if isinstance(cell, (int, float, np.integer, np.floating)) and cell in (0, 1):
            return bool(cell)
        text = str(cell).strip().lower()
        return True if text in TRUE else False if text in FALSE else "bad"

    values = series.to_numpy(dtype=object)
    try:  # 1, 1.0 and True are one value here, and read alike
        codes, uniques = pd.factorize(values, use_na_sentinel=False)
        decided = np.array([decide(u) for u in uniques], dtype=object)[codes]
    except TypeError:  # unhashable cells (lists from JSON): one by one, each of them bad
        decided = np.array([decide(v) for v in values], dtype=object)
    bad = decided == "bad"
    missing = np.equal(decided, None)
    return decided == True, missing, bad  # noqa: E712 - elementwise


#: a decimal number as Python's float() and Arrow's cast both read it (correctly rounded, alike)
_PLAIN_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _digits_and_a_point(column) -> bool:
    """Whether every cell of an Arrow text array is digits with at most one decimal point and at least
    one digit (so a :data:`_PLAIN_NUMBER`), read from its bytes: the regular expression's answer for
    the usual column of seconds without running it on a million cells (False: ask it)."""
    import pyarrow as pa

    _, offsets, data = column.buffers()
    wide = pa.types.is_large_string(column.type)
    offsets = np.frombuffer(offsets, dtype=np.int64 if wide else np.int32, count=len(column) + 1,
                            offset=column.offset * (8 if wide else 4)).astype(np.int64)
    if data is None or column.null_count or not len(column):
        return False
    import pyarrow.compute as pc

    counts = np.bincount(np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]], minlength=256)
    other = np.ones(256, dtype=bool)
    other[0x30:0x3A] = other[0x2E] = False  # digits and the point
    if counts[other].any():
        return False
    points = pc.count_substring(column, ".").to_numpy(zero_copy_only=False)
    return bool(((points <= 1) & (np.diff(offsets) - points >= 1)).all())


def _arrow_numbers(column, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`number_cells` of an Arrow text column (a CSV's): Arrow converts it when every present
    cell is a plain decimal number, else Python's float() does, cell by cell, as for any column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    _, missing = _arrow_missing(column)
    present = column.filter(pa.array(~missing))
    if _digits_and_a_point(present) or pc.all(pc.match_substring_regex(present, _PLAIN_NUMBER)).as_py() is not False:
        try:
            converted = pc.cast(present, pa.float64()).to_numpy(zero_copy_only=False)
        except pa.ArrowException:
            converted = None
        if converted is not None:
            values = np.full(n, np.nan)
            values[~missing] = converted
            with np.errstate(invalid="ignore"):
                return values, ~missing & (~np.isfinite(values) | (values < 0))
    return number_cells(column.to_pandas(deduplicate_objects=False), n)


def number_cells(column, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(value, bad) of a column of seconds: a MISSING cell is NaN, else ``float(cell)``, bad unless
    finite and 0 or more; by columns (numpy's float of each object, Python's own conversion)."""
    if _is_arrow_text(column):
        return _arrow_numbers(column, n)
    series = _cells(column, n)
    if series.dtype.kind in "biuf":
        values = series.to_numpy(dtype=float)
        missing = np.isnan(values)
        with np.errstate(invalid="ignore"):
            return values, ~missing & (~np.isfinite(values) | (values < 0))
    _, missing, _ = text_cells(series, n)
    values = np.full(n, np.nan)
    present = series.to_numpy(dtype=object)[~missing]
    try:
        values[~missing] = present.astype(float)
    except (TypeError, ValueError, OverflowError):  # some cell is no number: find which, one by one

        def number(cell):
            try:
                return float(cell)
            except (TypeError, ValueError, OverflowError):
                return np.nan

        values[~missing] = np.array([number(v) for v in present], dtype=float)
    with np.errstate(invalid="ignore"):
        return values, ~missing & (~np.isfinite(values) | (values < 0))


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
        raise UserError(f"{noun} {path} must end in {', '.join(SUFFIXES[:-1])} or {SUFFIXES[-1]}")
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


#: what splits a line for str.splitlines (read_rows's line count) but not for a CSV parser, and NUL
_ODD_LINES = (b"\x00", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def _odd_lines(data, start: int = 0) -> bool:
    """Whether ``data[start:]`` (bytes or a memory map) holds one of :data:`_ODD_LINES`; the
    characters of more than one byte are looked for only in a file that is not all ASCII (a scan of
    the whole file each: 0.1 s per 200 MB, against 0.02 s for the ASCII test)."""
    ascii_only = len(data) <= start or int(np.frombuffer(data, dtype=np.uint8, offset=start).max()) < 0x80
    odd = _ODD_LINES if not ascii_only else [o for o in _ODD_LINES if len(o) == 1]
    return any(data.find(o, start) != -1 for o in odd)


def _all_space(data, start: int = 0) -> bool:
    """``data[start:].isspace()`` without copying a file that plainly is not (its first 64 KiB say so)."""
    return bytes(data[start:start + (1 << 16)]).isspace() and bytes(data[start:]).isspace()


def _csv_frame(path: Path, required: list[str]):
    """A CSV file's table as :func:`read_rows` would read it, parsed by Arrow (every cell text, an
    empty cell ""), or None when Arrow's reading could differ from it: a row with too few or too many
    cells, a repeated column name, a character that splits lines for ``str.splitlines`` only, bytes
    that are not UTF-8 -- :func:`read_rows` then reads the file and says what is wrong."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not path.stat().st_size:
        return None
    with path.open("rb") as handle:  # mapped, not copied: Arrow parses the file's pages where they are
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    start = 3 if data[:3] == b"\xef\xbb\xbf" else 0  # a spreadsheet's byte-order mark
    if len(data) == start or _all_space(data, start) or _odd_lines(data, start):
        return None
    end = data.find(b"\n", start, start + (1 << 20))
    first = data[start:end if end != -1 else start + (1 << 20)]
    try:
        names = next(csv.reader([first.decode("utf-8").rstrip("\r")]), [])
    except UnicodeDecodeError:
        return None
    if not names or len(set(names)) != len(names) or any(name not in names for name in required):
        return None
    try:
        table = pacsv.read_csv(
            pa.py_buffer(data).slice(start), read_options=pacsv.ReadOptions(use_threads=True, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(column_types={name: pa.string() for name in names},
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowException, ValueError):
        return None
    if table.column_names != names or table.num_rows == 0:
        return None
    return table


def read_frame(path: str | Path, *, noun: str, row: str, required: list[str], missing_hint: str,
               empty_hint: str, arrow: bool = False):
    """(table, where) of the table file ``path``: what :func:`read_rows` gives, by columns -- a
    ``.csv`` or ``.parquet`` file as a DataFrame (with ``arrow``: the Arrow table, for a validator
    that reads one) and :class:`RowLabels` (a CSV's cells are text as there), a ``.jsonl`` file as
    its records. Other arguments as :func:`read_rows`'s."""
    path = input_file(path, noun, missing_hint)
    suffix = path.suffix.lower()
    table = None
    if suffix == ".parquet":
        table, where = _parquet_frame(path, noun=noun, row=row, required=required, empty_hint=empty_hint)
    elif suffix == ".csv":
        try:
            table = _csv_frame(path, required)
        except OSError:
            table = None
        where = RowLabels(table.num_rows, str(path), csv_file=path) if table is not None else None
    if table is None:
        return read_rows(path, noun=noun, row=row, required=required, missing_hint=missing_hint,
                         empty_hint=empty_hint)
    return (table if arrow else table.to_pandas()), where


def _parquet_frame(path: Path, *, noun: str, row: str, required: list[str], empty_hint: str):
    """A Parquet file's table and its rows' labels (``FILE row N``)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError(f"reading the Parquet {noun} {path} needs pyarrow (pip install pyarrow); or pass the table "
                        f"as .csv or .jsonl") from None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - Arrow's errors have many types; each is one line here
        raise UserError(f"cannot read {noun} {path}: {str(exc).splitlines()[0]}; it must be a Parquet file "
                        f"(write it with pandas' to_parquet)") from None
    index = [name for name in table.column_names if name.startswith("__index_level_")]
    table = table.drop(index) if index else table  # a DataFrame's index written with it: not a column
    missing = [name for name in required if name not in table.column_names]
    if missing:
        raise UserError(f"{path}: missing column {missing[0]!r}; the columns needed are {', '.join(required)}")
    if table.num_rows == 0:
        raise UserError(f"{noun} {path} is empty (no {row}s); {empty_hint}")
    return table, RowLabels(table.num_rows, str(path))


def write_table_file(path: str | Path, table, columns: list[str], noun: str) -> None:
    """Write a tidy table atomically as ``.csv``, ``.jsonl`` or ``.parquet`` (by suffix) with ``columns``
    first (extra columns kept after them); :func:`read_frame` reads it back. ``noun`` names the file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise UserError(f"{noun} {path} must end in {', '.join(SUFFIXES[:-1])} or {SUFFIXES[-1]}")
    table = table.reindex(columns=list(columns) + [c for c in table.columns if c not in columns])
    if suffix == ".parquet":
        with atomic_write(path, "wb") as fh:
            table.to_parquet(fh, index=False)
    elif suffix == ".jsonl":
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
    arrow: bool = False  # validate also takes an Arrow table (a CSV or Parquet file as read), not only a DataFrame

    def read(self, path: str | Path, **checks):
        """The validated table of a ``.csv`` (UTF-8, with or without BOM), ``.jsonl`` or ``.parquet`` file."""
        required = [name for name, (needed, _) in self.columns.items() if needed]
        rows, where = read_frame(path, noun=self.noun, row=self.row, required=required,
                                 missing_hint=self.missing_hint, empty_hint=self.empty_hint, arrow=self.arrow)
        return self.validate(rows, where, **checks)

    def write(self, path: str | Path, table) -> None:
        """Write the table (or records, validated first) atomically as ``.csv``, ``.jsonl`` or ``.parquet``
        (by suffix)."""
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
