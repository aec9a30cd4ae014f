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

import warnings
from pathlib import Path

import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.registry import PROTOCOLS, Protocol, protocol, resolve

__all__ = ["PROTOCOLS", "Protocol", "protocol", "load_table", "analyze", "estimates", "write_outputs", "export",
           "write_table"]


def _check_frame(p: Protocol, frame: pd.DataFrame) -> None:
    """A DataFrame's missing required columns, all named in one line (before row checks)."""
    required = list(p.get("required"))
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise UserError(f"the {p.name} table is missing column{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(repr(c) for c in missing)}; a {p.row} needs {', '.join(required)} "
                        f"(optional: {', '.join(c for c in p.get('columns') if c not in required)})")
    if frame.empty:
        raise UserError(f"the {p.name} table has no rows; give at least one {p.row}")


def records_for_task(name: str, task_name: str, mephisto_db: str | Path | None = None) -> tuple[list[dict], dict]:
    """(records, settings): every row a Mephisto run of ``task_name`` stored for protocol ``name``, and
    the run's stored settings the analysis needs (ACUTE-Eval: the per-worker cap it was launched with).
    Read without importing any task blueprint (nor ParlAI): the database and the stored state files only."""
    p = protocol(name)
    try:
        from parlai_acute.mephisto_tasks.live.database import open_mephisto_db
    except ModuleNotFoundError as exc:
        raise UserError(f"reading a Mephisto run needs Mephisto ({exc}); install parlai_acute[live], or export the "
                        f"table to a file where Mephisto is installed (`parlai-acute {p.name} export`)") from None
    db = open_mephisto_db(mephisto_db)
    if not db.find_tasks(task_name=task_name):
        known = sorted({task.task_name for task in db.find_tasks()})
        raise UserError(f"no Mephisto task named {task_name!r} (known: {', '.join(known) or 'none'}); pass the "
                        f"mephisto.task.task_name the run was launched with (and its mephisto_db)", param="mephisto_db")
    records, settings = [], {}
    for ref in p.task_records:
        found = resolve(ref)(db, task_name)
        # a store may return (records, settings): what the run was launched with that the analysis needs
        if isinstance(found, tuple):
            found, more = found
            settings.update(more)
        records += found
    if not records:
        raise UserError(f"Mephisto task {task_name!r} has no stored {p.row}s yet; check the task name and that "
                        f"workers have finished some work")
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
        table, where = p.get("from_records")(records, **checks), f"Mephisto task {task_name}"
    elif isinstance(source, (str, Path)):
        table, where = p.get("read")(source, **checks), str(source)
    elif isinstance(source, pd.DataFrame):
        _check_frame(p, source)
        table, where = p.get("from_records")(source, **checks), "DataFrame"
    else:
        records = list(source)
        _check_frame(p, pd.DataFrame.from_records(records) if records else pd.DataFrame())
        table, where = p.get("from_records")(records, **checks), "records"
    table.attrs.update(settings, source=where)
    return table


def make_config(name: str, config=None, **options):
    """The protocol's analysis configuration: ``config`` as given, or built from ``options``
    (the same names as the command's options: ``bootstrap``, ``seed``, ``confidence``, ...)."""
    cls = protocol(name).get("config")
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


def analyze(name: str, table, config=None, *, warn: bool = True, judges: list | None = None, **options):
    """Analyse protocol ``name``'s ``table`` (anything :func:`load_table` reads: a DataFrame is validated
    first) with ``config`` or keyword options; returns the analysis's result object.

    The protocol settles what its options leave open from the table itself (ACUTE-Eval: the
    per-worker cap as the run was launched, none for a model judge's verdicts -- ``judges``: its run
    summaries -- else the paper's one per model pair and question); when that default drops rows, a
    warning says how many (``warn=False``: the command line, which prints its own summary).
    """
    p = protocol(name)
    if not (isinstance(table, pd.DataFrame) and table.attrs.get("source")):
        table = load_table(name, table)
    config = make_config(name, config, **options)
    if not getattr(config, "source", ""):
        config.source = table.attrs.get("source", "")
    settle = getattr(p.estimands_module(), "config_for", None) if p.estimands else None
    if settle is not None:
        config = settle(table, config, judges)
    result = p.get("analyze")(table, config, **({"judges": judges} if judges else {}))
    if warn:
        for text in getattr(result, "default_warnings", lambda: [])():
            warnings.warn(text, stacklevel=2)
    return result


def estimates(name: str, table, **options) -> pd.DataFrame:
    """The protocol's estimate of every comparison in ``table``, without intervals: the number
    ``analyze``, ``status`` and ``ppi`` all report (see the protocol's ``estimands`` module)."""
    p = protocol(name)
    if not (isinstance(table, pd.DataFrame) and table.attrs.get("source")):
        table = load_table(name, table)
    return p.estimands_module().estimates(table, **options)


def write_outputs(name: str, result, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """Write ``result``'s tables (CSV), results.json, run.json and (with ``report``) report.html
    into ``outdir``; returns {file name: path}."""
    return protocol(name).get("write_outputs")(result, outdir, report=report)


def write_table(name: str, table: pd.DataFrame | list, path: str | Path) -> int:
    """Write protocol ``name``'s table (validated first if it is raw records) to ``path``
    (``.csv``, or ``.jsonl`` where the protocol supports it); returns the number of rows."""
    if not (isinstance(table, pd.DataFrame) and table.attrs.get("source")):
        table = load_table(name, table)
    protocol(name).get("write")(path, table)
    return len(table)


def export(name: str, task_name: str, path: str | Path, mephisto_db: str | Path | None = None) -> int:
    """Write everything the Mephisto run ``task_name`` stored for protocol ``name`` to the protocol's
    table file ``path``; returns the number of rows."""
    return write_table(name, load_table(name, task_name=task_name, mephisto_db=mephisto_db), path)
