"""Sensibleness and specificity labels: the one tidy table every SSA analysis reads.

One row per (item, worker): a worker's two answers about one model reply (Meena,
Adiwardana et al. 2020). ``sensible``: does the reply make sense in its context (common
sense, logic, consistency)? ``specific``: asked only when it does -- is the reply specific
to the context rather than one that fits almost any context ("I don't know", "ok")?

A reply that does not make sense is not specific. The table enforces it: a row with
``sensible`` false has ``specific`` false (an empty ``specific`` is read as false there;
a written ``true`` is normalised to false and counted in ``df.attrs["normalised_specific"]``,
because some labelling tools record the second answer even when it was not asked). A
sensible reply needs an explicit ``specific`` answer.

Items come from three sources (``source``):

* ``static``: a fixed context (1-3 turns) and one model's reply generated offline
  (``parlai-acute ssa generate``); ``context_id`` names the context so replies of different
  models to the same context can be compared on it;
* ``interactive``: a worker chatting with a model labels every reply as it arrives;
  ``conversation`` and ``turn`` say where;
* ``log``: the model turns of an existing Conversations log labelled by other workers;
  ``conversation`` and ``turn`` say where.

Replies of one conversation are not independent: analyses resample whole conversations.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.table_files import (FALSE, MISSING, TRUE, TableFile, lowered_cells, plain_cells, records_frame,
                                      stripped_cells, text_cells)

SOURCES = ("static", "interactive", "log")

# name -> (required in files?, description). Order is the column order of written tables.
COLUMNS: dict[str, tuple[bool, str]] = {
    "item": (True, "id of the labelled reply (one model reply in one context), unique within the collection"),
    "model": (True, "the model that wrote the reply ('human' for a real next turn)"),
    "worker": (True, "annotator id"),
    "sensible": (True, "the worker says the reply makes sense in its context"),
    "specific": (True, "the worker says the reply is specific to its context (false whenever sensible is false; "
                       "may be empty when sensible is false)"),
    "source": (False, "static | interactive | log (default static)"),
    "context_id": (False, "id of the context the reply answers (static items: the same for every model's reply "
                          "to it)"),
    "context": (False, "the context turns, oldest first, joined by newlines"),
    "reply": (False, "the labelled reply"),
    "conversation": (False, "id of the conversation the reply belongs to (interactive and log items)"),
    "turn": (False, "0-based index of the reply among the conversation's turns"),
    "run_id": (False, "Mephisto task run id (or any id of the labelling run)"),
    "unit_id": (False, "Mephisto unit id"),
    "decision_seconds": (False, "seconds the worker took for this label"),
    "timestamp": (False, "when the label was stored, seconds since the epoch (UTC)"),
}
REQUIRED = [name for name, (required, _) in COLUMNS.items() if required]

_TEXT = ["item", "model", "worker", "source", "context_id", "context", "reply", "conversation", "run_id", "unit_id"]
_NONEMPTY = ["item", "model", "worker"]
_NUMBERS = ["decision_seconds", "timestamp"]
#: fields that describe the item, so every label of one item must agree on them
ITEM_FIELDS = ["model", "source", "context_id", "conversation", "turn"]


def _fail(where: list[str], index, message: str):
    raise UserError(f"{where[int(index)]}: {message}")


def _first(mask) -> int:
    return int(np.flatnonzero(np.asarray(mask))[0])



def _text(raw: pd.DataFrame, name: str) -> pd.Series:
    if name not in raw:
        return pd.Series("", index=raw.index, dtype=object)
    return pd.Series(plain_cells(raw[name], len(raw)), index=raw.index, dtype=object)


def _bools(raw: pd.DataFrame, name: str, where) -> tuple[pd.Series, pd.Series]:
    """(value, missing) of a true/false column; anything else is an error naming the row."""
    text = pd.Series(lowered_cells(raw[name], len(raw)), index=raw.index)
    true, false, missing = text.isin(TRUE), text.isin(FALSE), text.isin(MISSING)
    bad = ~(true | false | missing)
    if bad.any():
        i = _first(bad)
        _fail(where, i, f"field {name!r} must be true or false, got {raw[name].iloc[i]!r}; fix that value")
    return true, missing


def _numbers(raw: pd.DataFrame, name: str, where, integer: bool = False) -> pd.Series:
    if name not in raw:
        return pd.Series(np.nan, index=raw.index, dtype=float)
    text = pd.Series(stripped_cells(raw[name], len(raw)), index=raw.index)
    blank = pd.Series(text_cells(raw[name], len(raw))[1], index=raw.index)  # plain(v).strip().lower() in MISSING
    values = pd.to_numeric(text.where(~blank, None), errors="coerce")
    bad = (values.isna() & ~blank) | (values < 0) | np.isinf(values)
    if integer:
        bad |= values.notna() & (values != values.round())
    if bad.any():
        i = _first(bad)
        kind = "a whole number >= 0" if integer else "a number >= 0"
        _fail(where, i, f"field {name!r} must be {kind}, got {raw[name].iloc[i]!r}; fix that value")
    return values.astype(float)


def labels_table(records, where: list[str] | None = None) -> pd.DataFrame:
    """Validate and normalise label rows (dicts or a DataFrame) into the :data:`COLUMNS` table.

    ``where`` labels each row in error messages (default ``row N``, 1-based). Unknown
    columns are dropped. ``df.attrs["normalised_specific"]`` counts rows whose ``specific``
    was true with ``sensible`` false and was set to false.
    """
    raw, where = records_frame(records, where, row="label row", required=REQUIRED, columns=COLUMNS)
    if raw.empty:
        return empty_labels()
    for name in REQUIRED:
        if name not in raw:
            _fail(where, 0, f"missing field {name!r}; every label row needs {', '.join(REQUIRED)}")
    out = pd.DataFrame(index=raw.index)
    for name in _TEXT:
        out[name] = _text(raw, name)
    for name in _NONEMPTY:
        empty = out[name].str.strip() == ""
        if empty.any():
            _fail(where, _first(empty), f"field {name!r} is empty; fill it in or drop the row")
    out["source"] = out["source"].str.strip().str.lower().replace("", "static")
    bad = ~out["source"].isin(SOURCES)
    if bad.any():
        i = _first(bad)
        _fail(where, i, f"field 'source' must be one of {', '.join(SOURCES)}, got {out['source'].iloc[i]!r}")
    sensible, sensible_missing = _bools(raw, "sensible", where)
    if sensible_missing.any():
        _fail(where, _first(sensible_missing), "field 'sensible' is missing; every label answers "
                                                "'Does the response make sense?' with true or false")
    specific, specific_missing = _bools(raw, "specific", where)
    unanswered = sensible & specific_missing
    if unanswered.any():
        _fail(where, _first(unanswered), "field 'specific' is missing for a sensible reply; a reply that makes "
                                         "sense needs an answer to 'Is the response specific?' (true or false)")
    normalised = (~sensible & specific)
    out["sensible"] = sensible.astype(bool)
    out["specific"] = (specific & sensible).astype(bool)
    out["turn"] = _numbers(raw, "turn", where, integer=True).astype("Int64")
    for name in _NUMBERS:
        out[name] = _numbers(raw, name, where)
    needs_place = out["source"].isin(["interactive", "log"]) & (out["conversation"].str.strip() == "")
    if needs_place.any():
        i = _first(needs_place)
        _fail(where, i, f"field 'conversation' is empty for a {out['source'].iloc[i]} item; interactive and log "
                        f"items need the id of their conversation (its replies are resampled together)")
    dup = out.duplicated(["item", "worker"]).to_numpy()
    if dup.any():
        i = _first(dup)
        _fail(where, i, f"worker {out['worker'].iloc[i]!r} labelled item {out['item'].iloc[i]!r} twice; keep one "
                        f"label per item and worker")
    _check_items(out, where)
    df = out[list(COLUMNS)].reset_index(drop=True)
    df.attrs["normalised_specific"] = int(normalised.sum())
    return df


def _check_items(df: pd.DataFrame, where) -> None:
    """Every label of one item describes the same reply: same model, source, context, place."""
    for name in ITEM_FIELDS:
        values = df[name].astype(str)
        first = values.groupby(df["item"], sort=False).transform("first")
        bad = (values != first).to_numpy()
        if bad.any():
            i = _first(bad)
            _fail(where, i, f"field {name!r} is {values.iloc[i]!r} but an earlier label of item "
                            f"{df['item'].iloc[i]!r} says {first.iloc[i]!r}; one item is one reply")


def empty_labels() -> pd.DataFrame:
    """A labels table with no rows and the right dtypes."""
    df = pd.DataFrame({name: pd.Series(dtype=object) for name in COLUMNS})
    for name in ("sensible", "specific"):
        df[name] = df[name].astype(bool)
    df["turn"] = df["turn"].astype("Int64")
    for name in _NUMBERS:
        df[name] = df[name].astype(float)
    df.attrs["normalised_specific"] = 0
    return df


FILE = TableFile("labels file", "label row", COLUMNS, labels_table,
                 f"pass a .csv or .jsonl of SSA labels (columns {', '.join(REQUIRED)})",
                 "export a labelling run that has labels")


def read_labels(path: str | Path) -> pd.DataFrame:
    """Read a labels ``.csv`` (UTF-8, with or without BOM, e.g. a spreadsheet's "CSV UTF-8")
    or ``.jsonl`` file into the table; every error names the file, line and field."""
    return FILE.read(path)


def write_labels(path: str | Path, df) -> None:
    """Write a labels table (or label records, validated first); :func:`read_labels` reads it."""
    FILE.write(path, df)
