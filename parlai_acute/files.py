"""Atomic file writing: a reader never sees a half-written file, nor half a run's outputs.

Everything parlai_acute writes (logs, pairings, tables, reports) goes through
:func:`atomic_write` so that an interrupted run leaves either the old file or the
complete new one, never a truncated file that looks complete. A command that writes a
directory of outputs does it inside :func:`output_dir`, so that a run that fails part
way leaves the directory exactly as it was: no new files, the old ones untouched.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Iterator

from parlai_acute.errors import UserError


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator:
    """Open a temporary file beside ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    pending = _covering(path)
    if pending is not None:
        pending.make_parents(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        pending = _covering(path)
        if pending is None:
            os.replace(tmp, path)
        else:  # inside an output directory: renamed into place when the whole run has succeeded
            pending.defer(Path(tmp), path)
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


class _Outputs:
    """The files a run has written under ``root`` so far, each complete in a temporary file
    beside its final path (``.name.XXXX.tmp``, as :func:`atomic_write` makes them), and the
    directories the run created; renamed into place, or removed, all together."""

    def __init__(self, root: Path):
        self.root = root
        self.files: dict[Path, Path] = {}  # final path -> its complete temporary file, in writing order
        self.created: list[Path] = []  # directories this run made, outermost first

    def make_parents(self, path: Path) -> None:
        """``path``'s missing directories, noted so that a failed run removes them again."""
        self.make_dirs(path.parent)

    def make_dirs(self, path: Path) -> None:
        for directory in [p for p in [*reversed(path.parents), path] if not p.exists()]:
            directory.mkdir(exist_ok=True)
            with _LOCK:
                self.created.append(directory)

    def defer(self, tmp: Path, path: Path) -> None:
        with _LOCK:
            older = self.files.pop(path, None)  # written twice in one run: the last one counts
            self.files[path] = tmp
        if older is not None:
            older.unlink(missing_ok=True)

    def commit(self) -> None:
        """Every file into place, in the order written (a report's page after the figures and
        tables it links to); a rename of a complete file cannot leave it half-written."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)  # a run that wrote nothing still leaves its directory
            while self.files:
                path, tmp = next(iter(self.files.items()))
                os.replace(tmp, path)
                del self.files[path]
        except BaseException:
            self.rollback()  # what a failed rename left
            raise
        self.created.clear()

    def rollback(self) -> None:
        for tmp in self.files.values():
            tmp.unlink(missing_ok=True)
        self.files.clear()
        for directory in reversed(self.created):
            with contextlib.suppress(OSError):  # not empty: something else wrote there; leave it
                directory.rmdir()
        self.created.clear()


_LOCK = threading.Lock()
_OPEN: list[_Outputs] = []  # output directories being written, innermost last


def _covering(path: Path) -> _Outputs | None:
    """The innermost output directory being written that holds ``path``, if any."""
    if not _OPEN:
        return None
    path = Path(os.path.abspath(path))
    with _LOCK:
        for outputs in reversed(_OPEN):
            if path == outputs.root or outputs.root in path.parents:
                return outputs
    return None


@contextlib.contextmanager
def output_dir(outdir: str | os.PathLike) -> Iterator[Path]:
    """All or nothing for a run's output directory: inside the block, every file written under
    ``outdir`` through :func:`atomic_write` (so :func:`write_json`, :func:`write_csv`, a
    report's ``write``...) is kept complete in a temporary file beside its final path; when
    the block ends normally they are renamed into place together, and when it raises (an
    error, Ctrl-C) they are deleted with every directory the run created, so ``outdir`` is
    exactly as it was: no new files, the old ones untouched.

    A successful run keeps what writing into an existing directory always meant: the files
    of the same names are replaced, any other file there is left as it is. Paths stay the
    final ones throughout (a run's printed paths, run.json's list of outputs and a report's
    links name where the files will be). A block inside another for the same directory or
    one below it (an analysis' ``write_outputs`` called by a command that writes more
    beside it) joins the outer one: nothing is in place until the outermost ends.
    Yields ``outdir`` as a Path, checked with :func:`check_outdir`.
    """
    outdir = check_outdir(outdir)
    if _covering(outdir) is not None:
        yield outdir
        return
    outputs = _Outputs(Path(os.path.abspath(outdir)))
    with _LOCK:
        _OPEN.append(outputs)
    try:
        yield outdir
    except BaseException:
        _close(outputs)
        outputs.rollback()
        raise
    _close(outputs)
    outputs.commit()


def _close(outputs: _Outputs) -> None:
    with _LOCK:
        _OPEN.remove(outputs)


def table_records(table) -> list[dict]:
    """A pandas table's rows as strict-JSON-ready dicts (NaN and pandas NA -> None)."""
    return json_ready(table.astype(object).where(table.notna(), None).to_dict(orient="records"))
