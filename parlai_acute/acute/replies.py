"""The replies' style: what ACUTE style control (:mod:`parlai_acute.stats.style_control`) reads.

One row per conversation a judgment names (``dialogue`` = the table's ``dialogue_left`` /
``dialogue_right``) with the style of the judged model's replies in it: ``tokens``, ``headers``,
``lists``, ``bold`` (:data:`~parlai_acute.stats.style_control.FEATURES`), given as counts or
counted from ``text`` (:func:`~parlai_acute.stats.style_control.reply_style`). Three sources:

* a pairings file (:func:`replies_from_pairings`): each conversation's turns by its evaluated
  speaker, joined (what the worker read of that model);
* Arena battles (:func:`parlai_acute.acute.imports.arena_replies`; ``acute import --replies``
  writes them);
* a replies file of one's own (:func:`read_replies`, ``.csv`` or ``.jsonl`` with these columns).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.stats.style_control import FEATURES, reply_style
from parlai_acute.table_files import MISSING, TableFile, plain

__all__ = ["COLUMNS", "replies_table", "read_replies", "write_replies", "replies_from_pairings", "style_sides"]

COLUMNS: dict[str, tuple[bool, str]] = {
    "dialogue": (True, "id of the conversation (the judgments' dialogue_left / dialogue_right)"),
    "model": (False, "the model whose replies these are"),
    "text": (False, "the model's replies in the conversation (counted when the counts are empty)"),
    **{name: (False, what) for name, what in FEATURES.items()},
    "source": (False, "where the counts came from (text, conv_metadata, pairings)"),
}


def _count(value, where: str, name: str) -> float:
    text = plain(value).strip()
    if text.lower() in MISSING:
        return float("nan")
    try:
        number = float(text)
    except ValueError:
        number = -1.0
    if not (np.isfinite(number) and number >= 0 and number == int(number)):
        raise UserError(f"{where}: field {name!r} must be a whole count (0 or more), got {value!r}; fix it or leave it "
                        f"empty and give the reply's text")
    return number


def replies_table(records, where: list[str] | None = None) -> pd.DataFrame:
    """Validate reply rows (dicts or a DataFrame) into the :data:`COLUMNS` table: the counts given,
    or counted from ``text``; a dialogue given twice or with neither counts nor text is refused."""
    rows = records.to_dict(orient="records") if isinstance(records, pd.DataFrame) else list(records)
    where = list(where) if where is not None else [f"row {i + 1}" for i in range(len(rows))]
    out, seen = [], {}
    for raw, at in zip(rows, where):
        dialogue = plain(raw.get("dialogue")).strip()
        if not dialogue:
            raise UserError(f"{at}: field 'dialogue' is empty; give the conversation's id as the judgments name it")
        if dialogue in seen:
            raise UserError(f"{at}: conversation {dialogue!r} is given twice (first at {seen[dialogue]}); keep one row")
        seen[dialogue] = at
        counts = {name: _count(raw.get(name), at, name) for name in FEATURES}
        text = plain(raw.get("text"))
        if any(np.isnan(v) for v in counts.values()):
            if not text and np.isnan(counts["tokens"]):
                raise UserError(f"{at}: neither the reply's text nor its token count is given; fill in one")
            counted = reply_style(text) if text else {}
            counts = {name: counted.get(name, np.nan) if np.isnan(v) else v for name, v in counts.items()}
        out.append({"dialogue": dialogue, "model": plain(raw.get("model")), "text": text, **counts,
                    "source": plain(raw.get("source")) or ("text" if text else "counts")})
    return pd.DataFrame(out, columns=list(COLUMNS))


FILE = TableFile("replies file", "reply", COLUMNS, replies_table,
                 "pass a .csv or .jsonl of the replies (dialogue and text, or the counts), e.g. written by "
                 "`parlai-acute acute import --replies`", "write one line per conversation")


def read_replies(path: str | Path) -> pd.DataFrame:
    """A replies ``.csv`` or ``.jsonl`` file (columns :data:`COLUMNS`)."""
    return FILE.read(path)


def write_replies(path: str | Path, table) -> None:
    """Write a replies table; :func:`read_replies` reads it back."""
    FILE.write(path, table)


def replies_from_pairings(lines: list[dict]) -> pd.DataFrame:
    """The replies table of a pairings file's lines: each conversation's turns by its evaluated speaker."""
    rows, seen = [], set()
    for line in lines:
        for index, dialogue in enumerate(line.get("dialogue_dicts") or []):
            ids = line.get("dialogue_ids") or []
            uid = str(ids[index] if index < len(ids) else dialogue.get("id", ""))
            if not uid or uid in seen:
                continue
            seen.add(uid)
            speaker = line["speakers_to_eval"][index]
            text = "\n".join(t["text"] for t in dialogue["dialogue"] if t.get("id") == speaker)
            rows.append({"dialogue": uid, "model": speaker, "text": text, "source": "pairings"})
    if not rows:
        raise UserError("the pairings file holds no conversation to measure the replies of", param="replies")
    return replies_table(rows)


def style_sides(judgments: pd.DataFrame, replies: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The style counts of the conversation on each side of every judgment, in the judgments' order;
    a judgment whose conversation the replies do not hold is a :class:`UserError` saying how many."""
    counts = replies.set_index("dialogue")[[name for name in FEATURES if name in replies.columns]]
    counts = counts.loc[:, counts.notna().all(axis=0)]  # a feature given for some replies only is not used
    sides = []
    for column in ("dialogue_left", "dialogue_right"):
        ids = judgments[column].astype(str)
        found = ids.isin(counts.index)
        if not found.all():
            missing = ids[~found]
            raise UserError(f"{len(missing)} of {len(ids)} judgments name a conversation the replies do not hold "
                            f"(e.g. {missing.iloc[0]!r}); pass the replies of every judged conversation",
                            param="replies")
        sides.append(counts.loc[ids.to_numpy()].reset_index(drop=True))
    return sides[0], sides[1]
