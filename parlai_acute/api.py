"""The Python API: read a protocol's table, analyse it, write or just return the outputs.

The command line (``parlai-acute <protocol> analyze|export``) and a notebook use the same
four functions::

    from parlai_acute import api

    table = api.load_table("ssa", "labels.csv")            # a .csv (BOM or not) or .jsonl file
    table = api.load_table("ssa", dataframe)               # a pandas DataFrame, or a list of dicts
    table = api.load_table("ssa", task_name="my_task", mephisto_db="data/database.db")  # a Mephisto run
    result = api.analyze("ssa", table, bootstrap=1000, seed=0)
    paths = api.write_outputs("ssa", result, "ssa_out")     # tables, results.json, run.json, report.html

Protocols: ``acute`` (judgments), ``per-turn`` (turns), ``ssa`` (labels), ``convai2``
(ratings), ``multiref`` (collected replies). Every table passes the protocol's one validator
whatever its source, so a DataFrame with a missing or bad column is a one-line
:class:`~parlai_acute.errors.UserError` naming it. Reading a file, a DataFrame or records needs neither Mephisto nor ParlAI; only
``task_name=`` imports the Mephisto side (to open its database).
"""
from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from parlai_acute import extras
from parlai_acute.errors import UserError

__all__ = ["PROTOCOLS", "Protocol", "load_table", "analyze", "write_outputs", "export", "write_table"]


@dataclass(frozen=True)
class Protocol:
    """Where each part of a protocol lives (``module:function`` strings, imported on use)."""

    name: str
    table: str            # what one row is, in words ("judgment")
    columns: str          # module:attribute of the column list (required ones checked on a DataFrame)
    required: str
    from_records: str     # (records or DataFrame, where) -> validated table
    read: str             # path -> validated table
    write: str            # (path, table) -> None
    config: str           # the analysis's configuration dataclass
    analyze: str
    outputs: str          # (result, outdir, ...) -> {name: path}
    task_records: tuple   # module:function(db, task_name) -> records, for each Mephisto task that stores rows


PROTOCOLS: dict[str, Protocol] = {
    "acute": Protocol(
        "acute", "judgment", "parlai_acute.acute.judgments:COLUMNS", "parlai_acute.acute.judgments:REQUIRED",
        "parlai_acute.acute.judgments:judgments_table", "parlai_acute.acute.judgments:read_judgments",
        "parlai_acute.acute.judgments:write_judgments", "parlai_acute.acute.analysis:AnalysisConfig",
        "parlai_acute.acute.analysis:analyze", "parlai_acute.acute.analysis:write_outputs",
        ("parlai_acute.mephisto_tasks.acute_eval.store:judgment_records",)),
    "per-turn": Protocol(
        "per-turn", "turn row", "parlai_acute.perturn.turns:COLUMNS", "parlai_acute.perturn.turns:REQUIRED",
        "parlai_acute.perturn.turns:turns_table", "parlai_acute.perturn.turns:read_turns",
        "parlai_acute.perturn.turns:write_turns", "parlai_acute.perturn.analysis:AnalysisConfig",
        "parlai_acute.perturn.analysis:analyze", "parlai_acute.perturn.outputs:write_outputs",
        ("parlai_acute.mephisto_tasks.per_turn.store:turns_for_task",)),
    "ssa": Protocol(
        "ssa", "label", "parlai_acute.ssa.labels:COLUMNS", "parlai_acute.ssa.labels:REQUIRED",
        "parlai_acute.ssa.labels:labels_table", "parlai_acute.ssa.labels:read_labels",
        "parlai_acute.ssa.labels:write_labels", "parlai_acute.ssa.analysis:SSAConfig",
        "parlai_acute.ssa.analysis:analyze", "parlai_acute.ssa.outputs:write_outputs",
        # static labelling runs, and interactive SSA inside per-turn runs (label_mode=ssa)
        ("parlai_acute.mephisto_tasks.ssa_label.store:labels_for_task",
         "parlai_acute.mephisto_tasks.per_turn.store:labels_for_task")),
    "convai2": Protocol(
        "convai2", "rating", "parlai_acute.convai2.ratings:COLUMNS", "parlai_acute.convai2.ratings:REQUIRED",
        "parlai_acute.convai2.ratings:ratings_table", "parlai_acute.convai2.ratings:read_ratings",
        "parlai_acute.convai2.ratings:write_ratings", "parlai_acute.convai2.analysis:ConvAI2Config",
        "parlai_acute.convai2.analysis:analyze", "parlai_acute.convai2.outputs:write_outputs",
        # the ConvAI2 survey at the end of per-turn chats (survey=convai2)
        ("parlai_acute.mephisto_tasks.per_turn.store:ratings_for_task",)),
    "multiref": Protocol(
        "multiref", "collected reply", "parlai_acute.multiref.references:COLUMNS",
        "parlai_acute.multiref.references:REQUIRED", "parlai_acute.multiref.references:references_table",
        "parlai_acute.multiref.references:read_references", "parlai_acute.multiref.references:write_references",
        "parlai_acute.multiref.analysis:MultirefConfig", "parlai_acute.multiref.analysis:analyze",
        "parlai_acute.multiref.outputs:write_outputs",
        ("parlai_acute.mephisto_tasks.multiref.store:references_for_task",)),
}
_ALIASES = {"perturn": "per-turn", "per_turn": "per-turn", "acute-eval": "acute"}


def _get(ref: str):
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def protocol(name: str) -> Protocol:
    """The protocol called ``name`` (``acute``, ``per-turn``, ``ssa``, ``convai2``, ``multiref``)."""
    found = PROTOCOLS.get(_ALIASES.get(name, name))
    if found is None:
        raise UserError(f"unknown protocol {name!r}; choose one of {', '.join(PROTOCOLS)}")
    return found


def resembles(columns) -> tuple[str, list[str]] | None:
    """(protocol, its required columns missing) of the protocol whose table ``columns`` (a file's
    header) is most like: the largest share of its required columns present, at least half; None
    when no protocol's table is that close."""
    best = None
    for name, p in PROTOCOLS.items():
        required = list(_get(p.required))
        missing = [c for c in required if c not in columns]
        share = 1 - len(missing) / len(required)
        if share >= 0.5 and (best is None or share > best[0]):
            best = (share, name, missing)
    return best and best[1:]


def describe_columns(columns: list[str], limit: int = 8) -> str:
    """A table's columns in a message: the first ``limit`` of them and how many in all, and which
    protocol's table they make or are most like."""
    shown = ", ".join(columns[:limit]) + (f", ... ({len(columns)} in all)" if len(columns) > limit else "")
    like = resembles(columns)
    if like is None:
        return f"its columns are {shown or 'none'}: no protocol's table"
    name, missing = like
    table = f"the {name} protocol's table (one {PROTOCOLS[name].table} per row)"
    return f"its columns are {shown}: " + (table if not missing else f"most like {table}, without {', '.join(missing)}")


def _check_file(p: Protocol, path) -> None:
    """A file that is another protocol's table said as such, before the reader names only the first
    column it misses: ``analyze("ssa", "judgments.csv")`` is a mix-up, not a broken labels file."""
    from parlai_acute.table_files import header

    columns = header(path)
    like = resembles(columns)
    if not columns or like is None or like[0] == p.name:
        return  # empty, unlike any table, or this protocol's (broken or not): the reader says, line by line
    missing = [c for c in _get(p.required) if c not in columns]
    raise UserError(f"{path} is not a table of the {p.name} protocol ({', '.join(missing)} missing); "
                    f"{describe_columns(columns)}")


def _check_frame(p: Protocol, frame: pd.DataFrame) -> None:
    """A DataFrame's missing required columns, all named in one line (before row checks)."""
    required = list(_get(p.required))
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise UserError(f"the {p.name} table is missing column{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(repr(c) for c in missing)}; a {p.table} needs {', '.join(required)} "
                        f"(optional: {', '.join(c for c in _get(p.columns) if c not in required)})")
    if frame.empty:
        raise UserError(f"the {p.name} table has no rows; give at least one {p.table}")


def records_for_task(name: str, task_name: str, mephisto_db: str | Path | None = None) -> tuple[list[dict], dict]:
    """(records, settings): every row a Mephisto run of ``task_name`` stored for protocol ``name``, and
    the run's stored settings the analysis needs (ACUTE-Eval: the per-worker cap it was launched with).
    Read without importing any task blueprint (nor ParlAI): the database and the stored state files only."""
    p = protocol(name)
    if extras.missing(["live"]):
        raise UserError(f"reading a Mephisto run (task_name=) needs the live extra, which is not installed here: "
                        f"{extras.pip_line(['live'])}; or export the {p.table}s to a file where it is "
                        f"(`parlai-acute {p.name} export`) and read that")
    from parlai_acute.mephisto_tasks.database import open_mephisto_db

    db = open_mephisto_db(mephisto_db)
    if not db.find_tasks(task_name=task_name):
        known = sorted({task.task_name for task in db.find_tasks()})
        raise UserError(f"no Mephisto task named {task_name!r} (known: {', '.join(known) or 'none'}); pass the "
                        f"mephisto.task.task_name the run was launched with (and its --mephisto-db)")
    records = []
    for ref in p.task_records:
        records += _get(ref)(db, task_name)
    if not records:
        raise UserError(f"Mephisto task {task_name!r} has no stored {p.table}s yet; check the task name and that "
                        f"workers have finished some work")
    settings = {}
    if p.name == "acute":
        from parlai_acute.mephisto_tasks.acute_eval.store import stored_cap

        settings["per_worker_cap"] = stored_cap(db, task_name)
    return records, settings


def load_table(name: str, source=None, *, task_name: str | None = None, mephisto_db: str | Path | None = None,
               **checks) -> pd.DataFrame:
    """Protocol ``name``'s validated table from ``source`` -- a ``.csv``/``.jsonl`` path, a DataFrame
    or a list of dicts -- or from the Mephisto run ``task_name`` (database ``mephisto_db``, default
    Mephisto's configured one). ``checks`` go to the table's validator (ConvAI2: ``scale=(1, 5)``).
    ``table.attrs["source"]`` says where it came from."""
    p = protocol(name)
    if (source is None) == (task_name is None):
        raise UserError("give either a source (a file path, a DataFrame or records) or task_name=, not both")
    settings = {}
    if task_name is not None:
        records, settings = records_for_task(name, task_name, mephisto_db)
        table, where = _get(p.from_records)(records, **checks), f"Mephisto task {task_name}"
    elif isinstance(source, (str, Path)):
        _check_file(p, source)
        table, where = _get(p.read)(source, **checks), str(source)
    elif isinstance(source, pd.DataFrame):
        _check_frame(p, source)
        table, where = _get(p.from_records)(source, **checks), "DataFrame"
    else:
        records = list(source)
        _check_frame(p, pd.DataFrame.from_records(records) if records else pd.DataFrame())
        table, where = _get(p.from_records)(records, **checks), "records"
    table.attrs.update(settings, source=where)
    return table


def make_config(name: str, config=None, **options):
    """The protocol's analysis configuration: ``config`` as given, or built from ``options``
    (the same names as the command's options: ``bootstrap``, ``seed``, ``confidence``, ...)."""
    cls = _get(protocol(name).config)
    if config is not None:
        if options:
            raise UserError("give either config= or keyword options, not both")
        return config
    known = set(cls.__dataclass_fields__)
    unknown = sorted(set(options) - known)
    if unknown:
        raise UserError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} for the {name} "
                        f"analysis; known: {', '.join(sorted(known))}")
    return cls(**options)


def analyze(name: str, table, config=None, *, warn: bool = True, **options):
    """Analyse protocol ``name``'s ``table`` (anything :func:`load_table` reads: a DataFrame is validated
    first) with ``config`` or keyword options; returns the analysis's result object.

    ACUTE-Eval caps the judgments one worker contributes (the paper: one per model pair and
    question). Pass ``max_per_worker=`` to choose the cap; when the default cap drops
    judgments, a warning says how many (``warn=False``: the command line, which prints its own summary).
    """
    p = protocol(name)
    if not (isinstance(table, pd.DataFrame) and table.attrs.get("source")):
        table = load_table(name, table)
    config = make_config(name, config, **options)
    if not getattr(config, "source", ""):
        config.source = table.attrs.get("source", "")
    default_cap = p.name == "acute" and _acute_cap(config, table)
    result = _get(p.analyze)(table, config)
    over = int((result.excluded["excluded_because"] == "over per-worker cap").sum()) if default_cap else 0
    if warn and over:
        warnings.warn(f"the default per-worker cap of {result.cap} judgment(s) (one per model pair and question) "
                      f"excluded {over} of {len(table)} judgments; pass max_per_worker=N to choose the cap",
                      stacklevel=2)
    return result


def _acute_cap(config, table: pd.DataFrame) -> bool:
    """Set the per-worker cap of an ACUTE-Eval analysis: as given, else as the run was launched with;
    True when neither says, so the paper's default applies."""
    if config.max_per_worker is not None:
        config.cap_source = config.cap_source or "max_per_worker"
    elif "per_worker_cap" in table.attrs:
        cap, where = table.attrs["per_worker_cap"]
        config.max_per_worker = cap
        config.cap_source = f"as launched, {where}" if cap else f"default: model pairs x questions ({where})"
    return config.max_per_worker is None


def write_outputs(name: str, result, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """Write ``result``'s tables (CSV), results.json, run.json and (with ``report``) report.html
    into ``outdir``; returns {file name: path}."""
    return _get(protocol(name).outputs)(result, outdir, report=report)


def write_table(name: str, table: pd.DataFrame | list, path: str | Path) -> int:
    """Write protocol ``name``'s table (validated first if it is raw records) to ``path``
    (``.csv``, or ``.jsonl`` where the protocol supports it); returns the number of rows."""
    if not (isinstance(table, pd.DataFrame) and table.attrs.get("source")):
        table = load_table(name, table)
    _get(protocol(name).write)(path, table)
    return len(table)


def export(name: str, task_name: str, path: str | Path, mephisto_db: str | Path | None = None) -> int:
    """Write everything the Mephisto run ``task_name`` stored for protocol ``name`` to the protocol's
    table file ``path``; returns the number of rows."""
    return write_table(name, load_table(name, task_name=task_name, mephisto_db=mephisto_db), path)
