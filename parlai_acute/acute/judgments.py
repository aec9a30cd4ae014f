"""ACUTE-Eval judgments: the one tidy table every analysis reads.

One row per judgment (one annotator, one pair of conversations, one question). This module
defines the schema (:data:`COLUMNS`) and the only two ways judgments enter the analysis:

* :func:`read_judgments` -- a ``.jsonl`` or ``.csv`` file with these columns;
* :func:`judgments_from_unit_data` -- the data Mephisto saved for units (the Mephisto side,
  ``parlai_acute.mephisto_tasks.acute.store.judgments_from_mephisto_db``, reads a run's
  units from the database and passes them here: this module never imports Mephisto).

Unit data shape (what the ACUTE-Eval Mephisto task saves; one dict per worker-unit, as
returned by ``parlai_acute.mephisto_tasks.acute.store.unit_data_for_task``)::

    {"worker_id": "3", "worker_name": "A1B2C3", "unit_id": "7", "assignment_id": "5", "task_run_id": "2",
     "task_start": 1700000000.0, "task_end": 1700000300.0,
     "data": {"outputs": {"comparisons": [COMPARISON, ...]}}}
    # "data" may also be {"comparisons": [...]} or the list itself.

    COMPARISON = {
      "pairing": {"pair_id": "p12",                      # optional; default: the two dialogue ids
                  "dialogue_ids": ["dlg-a", "dlg-b"],
                  "speakers_to_eval": ["model_a", "model_b"],  # model of each dialogue, same order
                  "is_onboarding": false,
                  "correct_answer": "model_a"},            # onboarding only: the right choice
      "left": 0,              # index into the pairing shown on the LEFT (0 or 1); or "left_model"
      "choice": "model_b",    # the model the worker picked (the highlighted speaker's name)
      "outcome": "win",       # optional: "tie" or "both_bad" when the task offered them (choice "")
      "reason": "more engaging",
      "question": "Who would you prefer to talk to for a long conversation?",
      "question_key": "engaging",
      "start_time": 1700000010.0, "end_time": 1700000050.0}   # or "duration" in seconds
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.parallel import run_side_by_side
from parlai_acute.table_files import (FALSE, MISSING, TRUE, TableFile, columns_of, flag_cells, is_arrow_table,
                                      number_cells, plain, row_labels, row_of, text_cells)

# name -> (required in files?, description). Order is the column order of written tables.
COLUMNS: dict[str, tuple[bool, str]] = {
    "run_id": (False, "Mephisto task run id (or any id of the collection run)"),
    "unit_id": (False, "Mephisto unit id"),
    "assignment_id": (False, "Mephisto assignment id"),
    "worker": (True, "annotator id"),
    "pair_id": (False, "id of the pair of dialogues; default: the two dialogue ids, sorted, joined by '|'"),
    "model_left": (True, "model whose conversation was shown on the left"),
    "model_right": (True, "model whose conversation was shown on the right"),
    "dialogue_left": (True, "id of the conversation shown on the left"),
    "dialogue_right": (True, "id of the conversation shown on the right"),
    "winner": (True, "model the annotator picked; empty for a tie or 'both bad'"),
    "loser": (False, "the other model; derived from winner when absent (empty for a tie)"),
    "winner_side": (False, "'left' or 'right'; derived unless the same model is on both sides (empty for a tie)"),
    "outcome": (False, "'win' (one model picked; the default, so tables without the column are all wins), 'tie' "
                       "(neither preferred) or 'both_bad' (neither preferred, both bad: a kind of tie)"),
    "reason": (True, "the annotator's justification (may be empty)"),
    "question": (False, "question text shown to the annotator"),
    "question_key": (True, "short key of the question (e.g. 'engaging')"),
    "is_onboarding": (True, "true for onboarding (quality-check) comparisons"),
    "onboarding_correct": (False, "onboarding only: whether the annotator chose the known right answer"),
    "timestamp": (False, "when the judgment was made, seconds since the epoch (UTC)"),
    "duration": (False, "seconds the annotator spent on this judgment"),
}
REQUIRED = [name for name, (required, _) in COLUMNS.items() if required]
_TEXT = ["run_id", "unit_id", "assignment_id", "worker", "pair_id", "model_left", "model_right",
         "dialogue_left", "dialogue_right", "winner", "loser", "winner_side", "outcome", "reason", "question",
         "question_key"]
#: the outcomes of a judgment: one model won, or neither did (a tie, or a tie with both bad)
WIN, TIE, BOTH_BAD = "win", "tie", "both_bad"
OUTCOMES = (WIN, TIE, BOTH_BAD)
#: outcomes without a winner; every one counts as a tie (half a win each) in the win rate
TIES = (TIE, BOTH_BAD)


def _is_missing(value) -> bool:
    return plain(value).strip().lower() in MISSING


def _bool(value, where: str, field: str, optional: bool = False):
    if isinstance(value, bool):
        return value
    if optional and _is_missing(value):
        return None
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise UserError(f"{where}: field {field!r} must be true or false, got {value!r}; fix that value")


def _number(value, where: str, field: str):
    if _is_missing(value):
        return float("nan")
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and number >= 0):
        raise UserError(f"{where}: field {field!r} must be a number of seconds (0 or more), got {value!r}; fix that "
                        f"value or leave it empty")
    return number


def normalize_row(raw: dict, where: str) -> dict:
    """Validate one judgment and fill derived columns; errors name ``where`` and the field."""
    if not isinstance(raw, dict):
        raise UserError(f"{where}: a judgment must be an object with the columns {', '.join(REQUIRED)}")
    for name in REQUIRED:
        if name not in raw:
            raise UserError(f"{where}: missing field {name!r}; every judgment needs {', '.join(REQUIRED)}")
    row = {}
    for name in _TEXT:
        value = raw.get(name)
        row[name] = "" if _is_missing(value) else str(value)
    outcome = row["outcome"].strip().lower() or WIN
    if outcome not in OUTCOMES:
        raise UserError(f"{where}: field 'outcome' must be one of {', '.join(OUTCOMES)}, got {row['outcome']!r}; "
                        f"fix that value (empty means win)")
    row["outcome"] = outcome
    for name in ("worker", "model_left", "model_right", "winner", "question_key"):
        if not row[name].strip() and not (name == "winner" and outcome in TIES):
            raise UserError(f"{where}: field {name!r} is empty; fill it in or drop the line" +
                            (" (a tie: set field 'outcome' to tie or both_bad)" if name == "winner" else ""))
    left, right, winner = row["model_left"], row["model_right"], row["winner"]
    if outcome in TIES:
        if winner or row["loser"] or row["winner_side"]:
            raise UserError(f"{where}: the outcome is {outcome!r} but field 'winner', 'loser' or 'winner_side' is "
                            f"filled in; a tie has no winner: leave them empty, or set 'outcome' to win")
        return _finish(row, raw, where)
    if winner not in (left, right):
        raise UserError(f"{where}: field 'winner' is {winner!r} but the models shown are {left!r} and {right!r}; "
                        f"winner must be one of them")
    side = row["winner_side"]
    if side and side not in ("left", "right"):
        raise UserError(f"{where}: field 'winner_side' must be 'left' or 'right', got {side!r}")
    if left == right:
        if not side:
            raise UserError(f"{where}: the same model {left!r} is on both sides, so field 'winner_side' "
                            f"('left' or 'right') is needed")
    else:
        derived = "left" if winner == left else "right"
        if side and side != derived:
            raise UserError(f"{where}: field 'winner_side' is {side!r} but winner {winner!r} was on the {derived}")
        side = derived
    row["winner_side"] = side
    other = right if side == "left" else left
    if row["loser"] and row["loser"] != other:
        raise UserError(f"{where}: field 'loser' is {row['loser']!r} but the other model shown is {other!r}")
    row["loser"] = other
    return _finish(row, raw, where)


def _finish(row: dict, raw: dict, where: str) -> dict:
    """The columns every judgment fills the same way, a tie or a win."""
    if not row["pair_id"]:
        row["pair_id"] = "|".join(sorted([row["dialogue_left"], row["dialogue_right"]]))
    row["is_onboarding"] = _bool(raw["is_onboarding"], where, "is_onboarding")
    row["onboarding_correct"] = _bool(raw.get("onboarding_correct"), where, "onboarding_correct", optional=True)
    if row["is_onboarding"] and row["onboarding_correct"] is None:
        raise UserError(f"{where}: onboarding judgment without field 'onboarding_correct'; set it to true or false")
    row["timestamp"] = _number(raw.get("timestamp"), where, "timestamp")
    row["duration"] = _number(raw.get("duration"), where, "duration")
    return {name: row[name] for name in COLUMNS}


def to_frame(rows: Iterable[dict]) -> pd.DataFrame:
    """Normalised rows -> DataFrame with exactly :data:`COLUMNS` (also when empty)."""
    df = pd.DataFrame(list(rows), columns=list(COLUMNS))
    df["is_onboarding"] = df["is_onboarding"].astype(bool)
    df["onboarding_correct"] = df["onboarding_correct"].astype(object)
    for name in ("timestamp", "duration"):
        df[name] = df[name].astype(float)
    return df


def judgments_table(records, where: list[str] | None = None) -> pd.DataFrame:
    """Validate judgment rows (dicts or a DataFrame) into the :data:`COLUMNS` table; errors name the
    row (``where``, default ``row N``) and the field.

    Checked by columns (a million judgments in about a second): every rule of :func:`normalize_row`
    as a mask over the rows; a row any mask flags goes through :func:`normalize_row` itself, in
    order, so the first bad row's message is that function's, word for word, and a row flagged by
    caution alone (a cell that only looks odd) gets its values from it too."""
    if isinstance(records, pd.DataFrame) or is_arrow_table(records):
        raw, rows = records, None  # read by position: its index plays no part
    else:
        rows = records if isinstance(records, list) else list(records)
        kinds = set(map(type, rows))
        if kinds - {dict}:  # a row that is no object: the rows before it are checked first, as one by one
            first = next(i for i, row in enumerate(rows) if not isinstance(row, dict))
            labels = row_labels(where, len(rows))
            judgments_table(rows[:first], labels[:first] if first else [])
            normalize_row(rows[first], labels[first])
        raw = pd.DataFrame(rows, dtype=object) if rows else pd.DataFrame()  # cells as given: 7 stays 7, not 7.0
    n = len(raw)
    where = row_labels(where, n)
    if n == 0:
        return to_frame([])
    frame, flagged = _columns(raw, n, dict_rows=rows is not None)
    if flagged.any():
        frame = {name: values.copy() for name, values in frame.items()}
    for i in np.flatnonzero(flagged):  # each raises (the first bad row's own message) or is fine after all
        row = rows[i] if rows is not None else row_of(raw, i)
        fixed = normalize_row(row, where[i])
        for name in COLUMNS:
            frame[name][i] = fixed[name]
    return _frame(frame, n)


def _columns(raw: pd.DataFrame, n: int, dict_rows: bool) -> tuple[dict, np.ndarray]:
    """({column: values} as :func:`normalize_row` makes them, the rows it might refuse)."""
    flagged = np.zeros(n, dtype=bool)
    raw = columns_of(raw)
    for name in REQUIRED:
        if name not in raw:
            flagged[0] = True  # every row lacks it; the first says so
        elif dict_rows:  # a row without the key (pandas filled in NaN; a null in the row stays None)
            values = raw[name].to_numpy()
            flagged |= pd.isna(values) & (values != None)  # noqa: E711 - elementwise

    def column(name):
        return raw[name] if name in raw else None

    # each column's cells depend on no other column: side by side on the cores
    calls = {name: (lambda name=name: number_cells(column(name), n)) for name in ("timestamp", "duration")}
    calls["is_onboarding"] = lambda: flag_cells(column("is_onboarding"), n)
    calls["onboarding_correct"] = lambda: flag_cells(column("onboarding_correct"), n, optional=True)
    calls.update({name: (lambda name=name: text_cells(column(name), n)) for name in _TEXT})
    cells = run_side_by_side(calls)
    text, blank = {name: cells[name][0] for name in _TEXT}, {name: cells[name][2] for name in _TEXT}
    outcome, tie, known = _outcome(text["outcome"])
    flagged |= ~known
    for name in ("worker", "model_left", "model_right", "question_key"):
        flagged |= blank[name]
    flagged |= blank["winner"] & ~tie
    left, right, winner = text["model_left"], text["model_right"], text["winner"]
    loser, side = text["loser"], text["winner_side"]
    given = side != ""  # each comparison of a million cells made once
    if tie.any():
        flagged |= tie & ((winner != "") | (loser != "") | given)
    win = ~tie
    at_left = winner == left
    flagged |= win & ~at_left & (winner != right)
    flagged |= win & given & (side != "left") & (side != "right")
    same = left == right
    flagged |= win & same & ~given
    derived = np.array(["right", "left"], dtype=object)[at_left.astype(np.intp)]  # two strings, shared: no million
    flagged |= win & ~same & given & (side != derived)
    side = np.where(win & ~same, derived, side)
    other = np.where(side == "left", right, left)
    flagged |= win & (loser != "") & (loser != other)
    text["loser"] = np.where(win, other, loser)
    text["winner_side"], text["outcome"] = side, outcome
    no_pair = text["pair_id"] == ""
    if no_pair.any():
        dl, dr = text["dialogue_left"][no_pair], text["dialogue_right"][no_pair]
        pair = text["pair_id"].copy()
        pair[no_pair] = np.where(dl <= dr, dl + "|" + dr, dr + "|" + dl)
        text["pair_id"] = pair
    onboarding, _, bad = cells["is_onboarding"]
    flagged |= bad
    correct, unknown, bad = cells["onboarding_correct"]
    flagged |= bad | (onboarding & unknown)
    frame = dict(text)
    frame["is_onboarding"] = onboarding.astype(bool)
    frame["onboarding_correct"] = np.where(unknown, None, correct).astype(object)
    for name in ("timestamp", "duration"):
        frame[name], bad = cells[name]
        flagged |= bad
    return {name: frame[name] for name in COLUMNS}, flagged


def _outcome(text: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(``outcome.strip().lower() or "win"``, a tie, one of :data:`OUTCOMES`) of every row, once per
    distinct spelling."""
    codes, uniques = pd.factorize(text)
    spelled = np.array([u.strip().lower() or WIN for u in uniques], dtype=object)
    return spelled[codes], np.isin(spelled, TIES)[codes], np.isin(spelled, OUTCOMES)[codes]


def _frame(columns: dict, n: int) -> pd.DataFrame:
    """The judgments table of validated columns, with :func:`to_frame`'s dtypes: its own copy of
    them, its text (and ``onboarding_correct``) written straight into one object block, as pandas
    would gather the columns of a dict (the analysis copies its subsets, and pandas would gather
    the blocks of each copy again) but without stacking them and then sorting the stack: a million
    judgments' frame in a fifth of the time. The flag and the two numbers are blocks of their own."""
    shared = [name for name in COLUMNS if name not in _OWN_BLOCK]
    block = np.empty((len(shared), n), dtype=object)
    for row, name in enumerate(shared):
        block[row] = columns[name]
    df = pd.DataFrame(block.T, columns=shared, dtype=object, copy=False)  # no type inference, no copy
    for name, dtype in _OWN_BLOCK.items():  # at its place in COLUMNS
        df.insert(list(COLUMNS).index(name), name, np.asarray(columns[name], dtype=dtype))
    return df


#: the columns of :func:`_frame` that are no text: {name: dtype}
_OWN_BLOCK = {"is_onboarding": bool, "timestamp": float, "duration": float}


FILE = TableFile("judgments file", "judgment", COLUMNS, judgments_table,
                 "pass a .jsonl, .csv or .parquet written by `parlai-acute acute export` or `acute analyze`, or "
                 "your own export", "export the judgments again (a header line and one line per judgment)",
                 arrow=True)


def read_judgments(path: str | Path) -> pd.DataFrame:
    """Read a judgments ``.jsonl`` or ``.csv`` file (UTF-8, a spreadsheet's byte-order mark allowed;
    columns: :data:`COLUMNS`) through the one table reader, :class:`parlai_acute.table_files.TableFile`."""
    return FILE.read(path)


def write_judgments(path: str | Path, df) -> None:
    """Write a judgments table (or judgment rows, validated first); :func:`read_judgments` reads it back."""
    FILE.write(path, df)


def _comparisons_of(data) -> list:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for holder in (data, data.get("outputs") or {}):
            if isinstance(holder, dict) and isinstance(holder.get("comparisons"), list):
                return holder["comparisons"]
    return []


def _rows_of_unit(unit: dict, where: str) -> list[dict]:
    rows = []
    for index, comp in enumerate(_comparisons_of(unit.get("data"))):
        at = f"{where} comparison {index}"
        if not isinstance(comp, dict) or not isinstance(comp.get("pairing"), dict):
            raise UserError(f"{at}: missing field 'pairing'; the task must save the pairing with each choice")
        pairing = comp["pairing"]
        models = pairing.get("speakers_to_eval")
        dialogues = pairing.get("dialogue_ids")
        if dialogues is None and pairing.get("is_onboarding"):  # gold pairs may come without ids
            dialogues = [f"onboarding-{pairing.get('pairing_index', index)}-{i}" for i in (0, 1)]
        if not (isinstance(dialogues, list) and isinstance(models, list) and len(dialogues) == len(models) == 2):
            raise UserError(f"{at}: field 'pairing.dialogue_ids'/'speakers_to_eval' must be two ids and two models")
        dialogues = [str(d) for d in dialogues]
        if "left" in comp:
            left = comp["left"]
            if left not in (0, 1):
                raise UserError(f"{at}: field 'left' must be 0 or 1 (index of the pairing shown on the left)")
        elif "left_model" in comp:
            if comp["left_model"] not in models or models[0] == models[1]:
                raise UserError(f"{at}: field 'left_model' {comp['left_model']!r} does not identify a side of "
                                f"{models}; save 'left' (0 or 1) instead")
            left = models.index(comp["left_model"])
        else:
            raise UserError(f"{at}: missing field 'left' (index of the pairing shown on the left)")
        right = 1 - left
        choice = comp.get("choice")
        outcome = comp.get("outcome") or WIN  # a task that offers no tie saves none: a win
        if outcome in TIES:
            choice = ""
        elif choice in (None, ""):
            continue  # the worker left this comparison unanswered: no judgment
        side = comp.get("choice_side")
        if outcome in TIES:
            side = ""
        elif side is None and models[0] != models[1]:
            side = "left" if choice == models[left] else "right"
        onboarding = bool(pairing.get("is_onboarding", False))
        correct = None
        if onboarding:
            answer = pairing.get("correct_answer")
            if answer is not None:
                correct = choice == answer
            elif isinstance(comp.get("onboarding_correct"), bool):
                correct = comp["onboarding_correct"]
            else:
                raise UserError(f"{at}: onboarding pairing without 'correct_answer'; add it to the onboarding pairs")
        start, end = comp.get("start_time"), comp.get("end_time")
        duration = comp.get("duration")
        if duration is None and start is not None and end is not None:
            duration = float(end) - float(start)
        raw = {
            "run_id": unit.get("task_run_id", ""), "unit_id": unit.get("unit_id", ""),
            "assignment_id": unit.get("assignment_id", ""),
            "worker": unit.get("worker_name") or unit.get("worker_id", ""),
            "pair_id": pairing.get("pair_id", ""),
            "model_left": models[left], "model_right": models[right],
            "dialogue_left": dialogues[left], "dialogue_right": dialogues[right],
            "winner": choice, "winner_side": side or "", "outcome": outcome, "reason": comp.get("reason", ""),
            "question": comp.get("question", ""), "question_key": comp.get("question_key") or "default",
            "is_onboarding": onboarding, "onboarding_correct": correct,
            "timestamp": end if end is not None else (start if start is not None else unit.get("task_end")),
            "duration": duration,
        }
        rows.append(normalize_row(raw, at))
    return rows


def judgments_from_unit_data(units: list[dict]) -> pd.DataFrame:
    """Judgments of finished Mephisto units (shape in the module docstring)."""
    rows = []
    for number, unit in enumerate(units):
        rows.extend(_rows_of_unit(unit, f"unit {unit.get('unit_id', number)}"))
    return to_frame(rows)

