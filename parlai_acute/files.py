"""Atomic file writing: a reader never sees a half-written file.

Everything parlai_acute writes (logs, pairings, tables, reports) goes through
:func:`atomic_write` so that an interrupted run leaves either the old file or the
complete new one, never a truncated file that looks complete.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Iterable, Iterator

from parlai_acute.errors import UserError


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator:
    """Open a temporary file beside ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def json_ready(value):
    """``value`` as strict JSON data: NaN, infinities and pandas' NA become null (bare ``NaN`` is
    not JSON and strict readers reject it), numpy scalars and arrays Python values, tuples lists,
    a pandas table the list of its rows."""
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    if hasattr(value, "columns") and hasattr(value, "to_dict"):  # a pandas DataFrame
        return json_ready(value.astype(object).to_dict(orient="records"))
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalar or array
        return json_ready(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> int:
    """Write one JSON object per line atomically (strict JSON: NaN -> null); returns the number of rows."""
    n = 0
    with atomic_write(path) as fh:
        for row in rows:
            fh.write(json.dumps(json_ready(row), ensure_ascii=False, allow_nan=False) + "\n")
            n += 1
    return n


def write_json(path: str | os.PathLike, obj) -> None:
    """Write one JSON document atomically (strict JSON: NaN -> null)."""
    with atomic_write(path) as fh:
        json.dump(json_ready(obj), fh, indent=2, ensure_ascii=False, sort_keys=True, allow_nan=False)
        fh.write("\n")


def write_csv(path: str | os.PathLike, table, index: bool = False) -> Path:
    """Write a pandas table as CSV atomically; returns the path (for an outputs dict)."""
    with atomic_write(path) as fh:
        table.to_csv(fh, index=index)
    return Path(path)


def check_outdir(outdir: str | os.PathLike) -> Path:
    """``outdir`` as a directory we may write into, or a one-line UserError (checked before slow work)."""
    outdir = Path(outdir)
    for parent in [outdir, *outdir.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"outdir {outdir}: {parent} exists and is not a directory; pass a directory path",
                                param="outdir")
            break
    return outdir


def table_records(table) -> list[dict]:
    """A pandas table's rows as strict-JSON-ready dicts (NaN and pandas NA -> None)."""
    return json_ready(table.astype(object).where(table.notna(), None).to_dict(orient="records"))
