"""End-of-chat survey answers: the one tidy table the ConvAI2 analysis reads.

One row per (dialogue, question): after a chat with a model, the worker answered a Likert
question (``engagingness`` "How much did you enjoy talking to this user?" on 1-4, and any
configured ones such as ``fluency`` or ``consistency``), optionally with a reason. The
persona detection answer belongs to the dialogue: ``persona_choice_correct`` says whether
the worker picked the model's persona out of two (the model's and a random other one); it
is repeated on every row of the dialogue, or given on some and left empty on others, but
never contradicts itself within a dialogue.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.table_files import (FALSE, MISSING, TRUE, TableFile, lowered_cells, plain_cells, records_frame,
                                      stripped_cells)

COLUMNS: dict[str, tuple[bool, str]] = {
    "dialogue": (True, "dialogue id, unique within the collection"),
    "worker": (True, "annotator id"),
    "model": (True, "the model the worker chatted with"),
    "question": (True, "the Likert question's key (engagingness, fluency, consistency, ...)"),
    "score": (True, "the answer on the question's scale (engagingness: 1-4)"),
    "persona_choice_correct": (False, "the worker picked the model's persona (true/false; empty: not asked)"),
    "reason": (False, "the worker's optional reason for the score"),
    "turns": (False, "number of chat turns before the survey"),
    "timestamp": (False, "when the survey was stored, seconds since the epoch (UTC)"),
}
REQUIRED = [name for name, (required, _) in COLUMNS.items() if required]
#: ConvAI2's Likert scale (lowest, highest), the default of every score check
SCALE = (1, 4)



def ratings_table(records, where: list[str] | None = None, scale: tuple[int, int] = SCALE) -> pd.DataFrame:
    """Validate rows (dicts or a DataFrame) into the :data:`COLUMNS` table; one-line errors
    naming the row (``where``, default ``row N``) and field. Scores must be whole numbers on
    ``scale`` (lowest, highest): ConvAI2's 1-4 unless a study used another."""
    raw, where = records_frame(records, where, row="rating row", required=REQUIRED, columns=COLUMNS)

    def fail(i, message, param=None):
        raise UserError(f"{where[int(i)]}: {message}", param=param)

    if raw.empty:
        raise UserError("no ratings: the ratings table has no rows")
    for name in REQUIRED:
        if name not in raw:
            fail(0, f"missing field {name!r}; every rating row needs {', '.join(REQUIRED)}")
    out = pd.DataFrame(index=raw.index)
    for name in ("dialogue", "worker", "model", "question", "reason"):
        out[name] = plain_cells(raw[name], len(raw)) if name in raw else ""
    for name in ("dialogue", "worker", "model", "question"):
        empty = (out[name].str.strip() == "").to_numpy()
        if empty.any():
            fail(np.flatnonzero(empty)[0], f"field {name!r} is empty; fill it in or drop the row")
    text = pd.Series(stripped_cells(raw["score"], len(raw)), index=raw.index)
    score = pd.to_numeric(text, errors="coerce")
    low, high = scale
    values = score.to_numpy(float)
    bad = score.isna().to_numpy() | ~np.isfinite(values)
    bad |= ~bad & ((values < low) | (values > high) | (values != np.round(values)))
    if bad.any():
        i = np.flatnonzero(bad)[0]
        fail(i, f"field 'score' must be a whole number from {low} to {high}, got {raw['score'].iloc[i]!r}; fix "
                f"that value (or give the study's range as scale=(LOW, HIGH))", "scale")
    out["score"] = score.astype(float)
    if "persona_choice_correct" in raw:
        flag = pd.Series(lowered_cells(raw["persona_choice_correct"], len(raw)), index=raw.index)
        bad = ~(flag.isin(TRUE) | flag.isin(FALSE) | flag.isin(MISSING))
        if bad.any():
            i = np.flatnonzero(bad.to_numpy())[0]
            fail(i, f"field 'persona_choice_correct' must be true, false or empty, got "
                    f"{raw['persona_choice_correct'].iloc[i]!r}")
        out["persona_choice_correct"] = pd.array(np.where(flag.isin(MISSING), None, flag.isin(TRUE)),
                                                 dtype="boolean")
    else:
        out["persona_choice_correct"] = pd.array([None] * len(raw), dtype="boolean")
    for name in ("turns", "timestamp"):
        out[name] = pd.to_numeric(raw[name], errors="coerce") if name in raw else np.nan
    dup = out.duplicated(["dialogue", "question"]).to_numpy()
    if dup.any():
        i = np.flatnonzero(dup)[0]
        fail(i, f"dialogue {out['dialogue'].iloc[i]!r} answers question {out['question'].iloc[i]!r} twice; "
                f"one row per dialogue and question")
    for name in ("worker", "model"):
        first = out.groupby("dialogue")[name].transform("first")
        bad = (out[name] != first).to_numpy()
        if bad.any():
            i = np.flatnonzero(bad)[0]
            fail(i, f"field {name!r} is {out[name].iloc[i]!r} but an earlier row of dialogue "
                    f"{out['dialogue'].iloc[i]!r} says {first.iloc[i]!r}; one dialogue has one {name}")
    known = out["persona_choice_correct"]
    values = known.astype("float")
    first_known = values.groupby(out["dialogue"]).transform("first")
    differs = (values.notna() & (values != first_known)).to_numpy()
    if differs.any():
        i = np.flatnonzero(differs)[0]
        fail(i, f"field 'persona_choice_correct' differs between rows of dialogue {out['dialogue'].iloc[i]!r}; "
                f"a dialogue has one persona choice")
    return out[list(COLUMNS)].reset_index(drop=True)


FILE = TableFile("ratings file", "rating row", COLUMNS, ratings_table,
                 f"pass a .csv or .jsonl with the columns {', '.join(REQUIRED)}", "export a run with finished surveys")


def read_ratings(path: str | Path, scale: tuple[int, int] = SCALE) -> pd.DataFrame:
    """Read a ratings ``.csv`` (UTF-8, BOM allowed) or ``.jsonl`` file into the table (scores on ``scale``)."""
    return FILE.read(path, scale=scale)


def write_ratings(path: str | Path, df) -> None:
    """Write a ratings table (or the rating records a run stored, validated first); :func:`read_ratings` reads it."""
    FILE.write(path, df)
