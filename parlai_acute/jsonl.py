"""Reading an input text or JSON-lines file with one-line errors that name the file, the line and the fix:
the one place every reader of a user's file starts (a byte-order mark is not data)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from parlai_acute.errors import UserError

__all__ = ["input_file", "read_text", "read_json_list", "read_jsonl"]


def input_file(path: str | Path, what: str, fix: str, param: str | None = None) -> Path:
    """``path`` when it is a file to read, else the one line that says what it is instead: absent,
    or a directory (a user who passes the output directory of an earlier step), with ``fix``.
    Every reader of a user's file starts here, so each command says the same."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise UserError(f"{what} {path} is a directory, not a file; {fix}", param=param)
    if not path.is_file():
        raise UserError(f"{what} {path} does not exist; {fix}", param=param)
    return path


def read_text(path: str | Path, what: str, fix: str, param: str | None = None) -> str:
    """The UTF-8 text of ``path`` (``what`` names it in messages, ``fix`` says what to pass instead,
    naming the parameter ``param`` if it does); a missing, unreadable or empty (nothing but blanks)
    file is a :class:`UserError` that says so."""
    path = input_file(path, what, fix, param)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {what} {path}: {exc}; it must be UTF-8 text") from None
    if not text.strip():
        raise UserError(f"{what} {path} is empty; {fix}")
    return text


def read_json_list(path: str | Path | None, what: str, fix: str, valid=lambda item: True, packaged=None) -> list:
    """The non-empty JSON list in ``path`` (a lab's own onboarding items, ...) whose every item is
    ``valid``, or ``packaged`` when no path is given; anything else is a :class:`UserError` naming
    the file (and the item) and ``fix`` (what each item must hold)."""
    if not path and packaged is not None:
        return packaged
    text = read_text(path, what, fix)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{what} {path} is not valid JSON ({exc.msg}); pass a JSON list, each item {fix}") from None
    if not isinstance(value, list) or not value:
        raise UserError(f"{what} {path} must be a non-empty JSON list; each item {fix}")
    for i, item in enumerate(value):
        if not valid(item):
            raise UserError(f"{what} {path}, item {i}: {fix}")
    return value


def read_jsonl(path: str | Path, what: str, fix: str, param: str | None = None) -> Iterator[tuple[str, object]]:
    """Yield (``"FILE:LINE"``, parsed value) for every non-blank line of ``path``.

    ``what`` names the file in messages ("items file"), ``fix`` says how to make one (naming the
    parameter ``param`` if it does). An absent,
    unreadable or empty file, or a line that is not JSON, is a :class:`UserError`.
    """
    path = Path(path).expanduser()
    lines = read_text(path, what, fix, param).splitlines()
    found = False
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not valid JSON ({exc.msg}); each line must be one JSON object") from None
        found = True
        yield where, value
    if not found:
        raise UserError(f"{what} {path} is empty; {fix}", param=param)
