"""Per-turn evaluation choices: the one tidy table every per-turn analysis reads.

One row per (dialogue, model turn, candidate). At each model turn the worker saw the
candidate replies of the ``k`` models of the dialogue's model set, in a random order
(``position``), and said which are good:

* ``setting``: ``pm`` (two models per turn), ``mm`` (three or more), ``sm`` (one);
* ``protocol``: ``soba`` (exactly one picked; it continues the conversation),
  ``sata_random`` (0..k picked; one picked continues; several: one of them at random;
  none: one of all at random), ``sata_user`` (as sata_random, but when none is picked the
  worker's own reply continues), ``sm`` (one candidate, appropriate or not; it continues).

A candidate whose model failed at that turn (error, timeout) has ``incomplete`` true,
was not shown and has no ``position``; analyses drop turns with an incomplete candidate
and report how many.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.table_files import (FALSE, MISSING, TRUE, TableFile, lowered_cells, per_value, records_frame,
                                      text_cells)

SETTINGS = ("pm", "mm", "sm")
PROTOCOLS = ("soba", "sata_random", "sata_user", "sm")
FALLBACKS = ("picked", "random_picked", "random_all", "user", "none")

# name -> (required in files?, description). Order is the column order of written tables.
COLUMNS: dict[str, tuple[bool, str]] = {
    "run_id": (False, "Mephisto task run id (or any id of the collection run)"),
    "unit_id": (False, "Mephisto unit id"),
    "dialogue": (True, "dialogue id, unique within the collection"),
    "worker": (True, "annotator id"),
    "turn": (True, "0-based index of the model turn within the dialogue"),
    "setting": (True, "pm | mm | sm"),
    "protocol": (True, "soba | sata_random | sata_user | sm"),
    "model_set": (True, "the models of the dialogue, sorted, joined by '|'"),
    "model": (True, "model that produced this candidate"),
    "position": (False, "0-based position of the candidate on the page (empty when not shown)"),
    "picked": (True, "the worker selected this candidate (SOBA: the best; SATA: acceptable; SM: appropriate)"),
    "continued": (True, "this candidate's text continued the conversation"),
    "fallback": (False, "how the continuation was chosen: picked (SOBA, SM, exactly one picked), "
                        "random_picked (several picked), random_all (none picked, SATA-Random), "
                        "user (none picked, the worker's reply, SATA-User), none (no candidate at all)"),
    "incomplete": (False, "the model failed at this turn (error or timeout); its candidate was not shown"),
    "error": (False, "why the candidate is incomplete"),
    "text": (False, "the candidate reply"),
    "worker_message": (False, "the worker's message this turn answers"),
    "user_reply": (False, "SATA-User: the reply the worker wrote when none was picked"),
    "justification": (False, "the worker's optional or required reason for the choice"),
    "decision_seconds": (False, "seconds from the candidates being shown to the choice being sent"),
    "latency_seconds": (False, "seconds the worker waited for this candidate: from their message reaching the "
                               "server to the candidate ready, every attempt (a retry after a failure or "
                               "time-out) included"),
    "timestamp": (False, "when the choice was stored, seconds since the epoch (UTC)"),
    "dialogue_status": (False, "complete | partial (worker left or run stopped before the end)"),
}
REQUIRED = [name for name, (required, _) in COLUMNS.items() if required]

# ---------------------------------------------------------------- reading and checking rows
#
# Validation is column-wise (a run of 100,000 turns has 400,000 rows), and every error names
# the first offending row (``where``: "FILE:LINE" for files, "row N" for records) and field.

_TEXT = ["run_id", "unit_id", "dialogue", "worker", "setting", "protocol", "model_set", "model", "fallback",
         "error", "text", "worker_message", "user_reply", "justification", "dialogue_status"]
_NONEMPTY = ["dialogue", "worker", "setting", "protocol", "model_set", "model"]
_NUMBERS = ["decision_seconds", "latency_seconds", "timestamp"]
MODELS_PER_SETTING = {"pm": (2, 2), "mm": (3, None), "sm": (1, 1)}


def _fail(where, index, message: str):
    raise UserError(f"{where[int(index)]}: {message}")


def _text_column(df: pd.DataFrame, name: str) -> pd.Series:
    if name not in df:
        return pd.Series("", index=df.index, dtype=object)
    col = df[name]
    return col.where(col.notna(), "").astype(str).where(col.notna(), "")


def _bool_column(df: pd.DataFrame, name: str, where, default=None) -> pd.Series:
    if name not in df:
        if default is None:
            _fail(where, 0, f"missing field {name!r}; every turn row needs {', '.join(REQUIRED)}")
        return pd.Series(default, index=df.index, dtype=bool)
    col = df[name]
    if col.dtype == bool:
        return col
    text = pd.Series(lowered_cells(col, len(col)), index=col.index)
    true, false = text.isin(TRUE), text.isin(FALSE)
    missing = text.isin(MISSING)
    if default is not None:
        bad = ~(true | false | missing)
    else:
        bad = ~(true | false)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        value = col.iloc[i]
        what = "is missing" if missing.iloc[i] else f"must be true or false, got {value!r}"
        _fail(where, i, f"field {name!r} {what}; fix that value")
    return true | (missing & bool(default)) if default is not None else true


def _number_column(df: pd.DataFrame, name: str, where, integer=False, required=False) -> pd.Series:
    if name not in df:
        if required:
            _fail(where, 0, f"missing field {name!r}; every turn row needs {', '.join(REQUIRED)}")
        return pd.Series(np.nan, index=df.index, dtype=float)
    col = df[name]
    blank = col.isna() | pd.Series(text_cells(col, len(col))[1], index=col.index)  # a MISSING spelling
    values = pd.to_numeric(col.where(~blank, np.nan), errors="coerce")
    bad = (values.isna() & ~blank) | (values < 0) | np.isinf(values)
    if integer:
        bad |= values.notna() & (values != values.round())
    if required:
        bad |= blank
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        kind = "a whole number >= 0" if integer else "a number >= 0 (seconds)"
        what = "is missing" if blank.iloc[i] else f"must be {kind}, got {col.iloc[i]!r}"
        _fail(where, i, f"field {name!r} {what}; fix that value")
    return values.astype(float)


def _normalise_columns(raw: pd.DataFrame, where) -> pd.DataFrame:
    out = pd.DataFrame(index=raw.index)
    for name in _TEXT:
        out[name] = _text_column(raw, name)
    for name in _NONEMPTY:
        if name not in raw:
            _fail(where, 0, f"missing field {name!r}; every turn row needs {', '.join(REQUIRED)}")
        empty = out[name].str.strip() == ""
        if empty.any():
            i = int(np.flatnonzero(empty.to_numpy())[0])
            _fail(where, i, f"field {name!r} is {'missing' if raw[name].isna().iloc[i] else 'empty'}; "
                            f"fill it in or drop the row")
    out["turn"] = _number_column(raw, "turn", where, integer=True, required=True).astype(np.int64)
    out["position"] = _number_column(raw, "position", where, integer=True).astype("Int64")
    for name in ("picked", "continued"):
        out[name] = _bool_column(raw, name, where)
    out["incomplete"] = _bool_column(raw, "incomplete", where, default=False)
    for name in _NUMBERS:
        out[name] = _number_column(raw, name, where)
    for name, allowed in (("setting", SETTINGS), ("protocol", PROTOCOLS), ("fallback", FALLBACKS + ("",))):
        out[name] = out[name].str.strip().str.lower()
        bad = ~out[name].isin(allowed)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            _fail(where, i, f"field {name!r} must be one of {', '.join(a for a in allowed if a)}, "
                            f"got {out[name].iloc[i]!r}")
    mismatch = (out["setting"] == "sm") != (out["protocol"] == "sm")
    if mismatch.any():
        i = int(np.flatnonzero(mismatch.to_numpy())[0])
        _fail(where, i, f"field 'protocol' is {out['protocol'].iloc[i]!r} with setting {out['setting'].iloc[i]!r}; "
                        f"setting sm goes with protocol sm and only with it")
    return out[list(COLUMNS)]


def _derived_fallback(protocol: np.ndarray, shown: np.ndarray, picked: np.ndarray) -> np.ndarray:
    """How the continuation must have been chosen, from the protocol and the picks."""
    sata = (protocol == "sata_random") | (protocol == "sata_user")
    out = np.full(len(protocol), "picked", dtype=object)
    out[sata & (picked > 1)] = "random_picked"
    out[(protocol == "sata_random") & (picked == 0)] = "random_all"
    out[(protocol == "sata_user") & (picked == 0)] = "user"
    out[shown == 0] = "none"
    return out


def check_consistency(df: pd.DataFrame, where) -> pd.DataFrame:
    """Check each turn and dialogue hangs together; fill ``fallback`` where it was left empty.

    A turn is the rows of one (dialogue, turn): one per model of the dialogue's model set.
    """
    if df.empty:
        return df
    index = np.arange(len(df))
    first_row = pd.Series(index).groupby([df["dialogue"].to_numpy(), df["turn"].to_numpy()]).min()

    for name in ("worker", "setting", "protocol", "model_set"):
        varies = df.groupby("dialogue", sort=False)[name].nunique() > 1
        if varies.any():
            dialogue = varies[varies].index[0]
            rows = np.flatnonzero((df["dialogue"] == dialogue).to_numpy())
            values = df[name].to_numpy()[rows]
            i = rows[np.argmax(values != values[0])]
            _fail(where, i, f"field {name!r} is {values[np.argmax(values != values[0])]!r} but earlier rows of "
                            f"dialogue {dialogue!r} say {values[0]!r}; one dialogue has one {name}")
    members = pd.Series(per_value(df["model_set"].to_numpy(), lambda s: tuple(s.split("|"))), index=df.index)
    set_sizes = per_value(df["model_set"].to_numpy(), lambda s: len(s.split("|"))).astype(np.int64)
    for setting, (low, high) in MODELS_PER_SETTING.items():
        bad = (df["setting"].to_numpy() == setting) & ((set_sizes < low) | (set_sizes > (high or 10**9)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            need = f"exactly {low}" if low == high else f"at least {low}"
            _fail(where, i, f"field 'model_set' {df['model_set'].iloc[i]!r} has {set_sizes[i]} model(s) but setting "
                            f"{setting} shows {need} per turn")
    unsorted = per_value(df["model_set"].to_numpy(), lambda s: s.split("|") != sorted(set(s.split("|")))).astype(bool)
    if unsorted.any():
        i = int(np.flatnonzero(unsorted)[0])
        _fail(where, i, f"field 'model_set' {df['model_set'].iloc[i]!r} must list distinct models sorted and "
                        f"joined by '|' (e.g. {'|'.join(sorted(set(members.iloc[i])))!r})")
    pairs = df["model"].astype(str).to_numpy() + "\x1f" + df["model_set"].to_numpy()  # one key per (model, set)
    outside = ~per_value(pairs, lambda key: key.split("\x1f")[0] in key.split("\x1f")[1].split("|")).astype(bool)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        _fail(where, i, f"field 'model' is {df['model'].iloc[i]!r}, not one of the model_set "
                        f"{df['model_set'].iloc[i]!r}")
    dup = df.duplicated(["dialogue", "turn", "model"]).to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        _fail(where, i, f"field 'model': {df['model'].iloc[i]!r} appears twice in dialogue {df['dialogue'].iloc[i]!r} "
                        f"turn {df['turn'].iloc[i]}; one row per model and turn")

    keys = [df["dialogue"].to_numpy(), df["turn"].to_numpy()]
    incomplete = df["incomplete"].to_numpy()
    shown = ~incomplete
    for name in ("picked", "continued"):
        bad = incomplete & df[name].to_numpy()
        if bad.any():
            _fail(where, np.flatnonzero(bad)[0], f"field {name!r} is true for an incomplete candidate, which was "
                                                 f"never shown; set it to false")
    pos = df["position"]
    bad = incomplete & pos.notna().to_numpy()
    if bad.any():
        _fail(where, np.flatnonzero(bad)[0], "field 'position' is set for an incomplete candidate, which was never "
                                             "shown; leave it empty")
    frame = pd.DataFrame({"rows": 1, "shown": shown, "picked": df["picked"].to_numpy(),
                          "continued": df["continued"].to_numpy(), "has_pos": pos.notna().to_numpy() & shown,
                          "pos": pos.astype(float).to_numpy()})
    per_turn = frame.groupby(keys, sort=False).agg(
        rows=("rows", "sum"), shown=("shown", "sum"), picked=("picked", "sum"), continued=("continued", "sum"),
        has_pos=("has_pos", "sum"), pos_min=("pos", "min"), pos_max=("pos", "max"), pos_unique=("pos", "nunique"))
    first = first_row.reindex(per_turn.index).to_numpy()
    turn_rows = df.iloc[first]
    size = turn_rows["model_set"].str.count(r"\|").to_numpy() + 1
    protocol = turn_rows["protocol"].to_numpy()

    def complain(bad, message):
        if np.any(bad):
            j = int(np.flatnonzero(bad)[0])
            d, t = per_turn.index[j]
            _fail(where, first[j], f"dialogue {d!r} turn {t}: " + message(j))

    complain(per_turn["rows"].to_numpy() != size,
             lambda j: f"field 'model': {per_turn['rows'].iloc[j]} candidate rows but model_set "
                       f"{turn_rows['model_set'].iloc[j]!r} has {size[j]}; write one row per model (incomplete ones "
                       f"with incomplete=true)")
    n_pos, n_shown = per_turn["has_pos"].to_numpy(), per_turn["shown"].to_numpy()
    complain((n_pos != 0) & (n_pos != n_shown),
             lambda j: f"field 'position' is set for {n_pos[j]} of the {n_shown[j]} shown candidates; set it for all "
                       f"or none")
    complain((n_pos > 0) & ((per_turn["pos_min"].to_numpy() != 0) | (per_turn["pos_max"].to_numpy() != n_shown - 1)
                            | (per_turn["pos_unique"].to_numpy() != n_shown)),
             lambda j: f"field 'position' values are not 0..{n_shown[j] - 1}, each once; positions must be a "
                       f"permutation of the shown candidates")
    picks = per_turn["picked"].to_numpy()
    complain((protocol == "soba") & (n_shown > 0) & (picks != 1),
             lambda j: f"field 'picked': a SOBA turn has {picks[j]} picked candidates; exactly one must be picked")
    derived = _derived_fallback(protocol, n_shown, picks)
    given = df["fallback"].to_numpy()
    turn_of_row = per_turn.index.get_indexer(pd.MultiIndex.from_arrays(keys))
    row_derived = derived[turn_of_row]
    bad = (given != "") & (given != row_derived)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        _fail(where, i, f"field 'fallback' is {given[i]!r} but the picks of dialogue {df['dialogue'].iloc[i]!r} turn "
                        f"{df['turn'].iloc[i]} under protocol {df['protocol'].iloc[i]} mean {row_derived[i]!r}")
    expected_continued = np.where(np.isin(derived, ["user", "none"]), 0, 1)
    cont = per_turn["continued"].to_numpy()
    complain(cont != expected_continued,
             lambda j: f"field 'continued': {cont[j]} candidates continued the conversation, expected "
                       f"{expected_continued[j]} (fallback {derived[j]})")
    continued_rows = df["continued"].to_numpy()
    needs_pick = np.isin(row_derived, ["picked", "random_picked"]) & (df["protocol"].to_numpy() != "sm")
    bad = continued_rows & needs_pick & ~df["picked"].to_numpy()
    if bad.any():
        _fail(where, np.flatnonzero(bad)[0], "field 'continued' is true for a candidate the worker did not pick; "
                                             "the continuation must be one of the picked")
    out = df.copy()
    out["fallback"] = row_derived
    return out


def turns_table(records, where: list[str] | None = None) -> pd.DataFrame:
    """Validate and normalise turn rows (dicts or a DataFrame) into the :data:`COLUMNS` table.

    ``where`` labels each row in error messages (default ``row N``, 1-based). Unknown
    columns are dropped; an empty ``fallback`` is derived from the protocol and the picks.
    """
    raw, where = records_frame(records, where, row="turn row", required=REQUIRED, columns=COLUMNS)
    if raw.empty:
        return _empty()
    df = _normalise_columns(raw, where)
    return check_consistency(df, where).reset_index(drop=True)


def _empty() -> pd.DataFrame:
    df = pd.DataFrame({name: pd.Series(dtype=object) for name in COLUMNS})
    df["turn"] = df["turn"].astype(np.int64)
    df["position"] = df["position"].astype("Int64")
    for name in ("picked", "continued", "incomplete"):
        df[name] = df[name].astype(bool)
    for name in _NUMBERS:
        df[name] = df[name].astype(float)
    return df


FILE = TableFile("turns file", "turn row", COLUMNS, turns_table,
                 "pass a .csv or .jsonl written by `parlai-acute per-turn analyze` or exported from a per-turn run",
                 "export a run that has finished turns")


def read_turns(path: str | Path) -> pd.DataFrame:
    """Read a turns ``.csv`` (UTF-8, with or without BOM) or ``.jsonl`` file into the table."""
    return FILE.read(path)


def write_turns(path: str | Path, df) -> None:
    """Write a turns table (or turn records, validated first); :func:`read_turns` reads it."""
    FILE.write(path, df)
