"""The Python API: read a protocol's table, analyse it, write or just return the outputs.

The command line (``parlai-acute <protocol> analyze|export``) and a notebook use the same
four functions::

    from parlai_acute import api

    table = api.load_table("ssa", "labels.csv")            # a .csv (BOM or not) or .jsonl file
    table = api.load_table("ssa", dataframe)               # a pandas DataFrame, or a list of dicts
    table = api.load_table("ssa", task_name="my_task", mephisto_db="data/database.db")  # a Mephisto run
    result = api.analyze("ssa", table, bootstrap=1000, seed=0)
    paths = api.write_outputs("ssa", result, "ssa_out")     # summary.csv, tables, results.json, run.json, report.html

Every protocol's result has the same four members (:class:`parlai_acute.result.Result`)::

    result.summary()    # DataFrame: every reported estimate (group, comparison, measure, estimate, n,
                        # clusters, low, high, interval, why_no_interval) -- what summary.csv holds
    result.meta()       # dict: protocol, config, seed, parlai_acute_version, estimand definitions, ...
    result.tables()     # {file stem: DataFrame}: every table write_outputs writes ("summary", "pairs", ...)
    result.warnings()   # [str]: what to know before trusting a number

and its outputs the same names: ``summary.csv``, ``results.json``, ``run.json``, ``report.html``,
a pairwise win-rate grid ``winrate_grid.csv``, pairwise comparisons ``pairs.csv``, per-model
results ``models.csv``, per-worker ``workers.csv``. ``api.estimates(name, table)`` gives the
estimates alone, cheaply, where the protocol reads them row by row (acute, per-turn, ssa, convai2).

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

from parlai_acute import extras
from parlai_acute.errors import UserError
from parlai_acute.registry import PROTOCOLS, Protocol, protocol, resolve

__all__ = ["PROTOCOLS", "Protocol", "protocol", "load_table", "analyze", "estimates", "write_outputs", "export",
           "write_table", "review"]


def resembles(columns) -> tuple[str, list[str]] | None:
    """(protocol, its required columns missing) of the protocol whose table ``columns`` (a file's
    header) is most like: the largest share of its required columns present, at least half; None
    when no protocol's table is that close."""
    best = None
    for name, p in PROTOCOLS.items():
        required = list(p.get("required"))
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
    table = f"the {name} protocol's table (one {PROTOCOLS[name].row} per row)"
    return f"its columns are {shown}: " + (table if not missing else f"most like {table}, without {', '.join(missing)}")


def _check_file(p: Protocol, path) -> None:
    """A file that is another protocol's table said as such, before the reader names only the first
    column it misses: ``analyze("ssa", "judgments.csv")`` is a mix-up, not a broken labels file."""
    from parlai_acute.table_files import header

    columns = header(path)
    like = resembles(columns)
    if not columns or like is None or like[0] == p.name:
        return  # empty, unlike any table, or this protocol's (broken or not): the reader says, line by line
    missing = [c for c in p.get("required") if c not in columns]
    raise UserError(f"{path} is not a table of the {p.name} protocol ({', '.join(missing)} missing); "
                    f"{describe_columns(columns)}")


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
    if extras.missing(["live"]):
        raise UserError(f"reading a Mephisto run (task_name=) needs the live extra, which is not installed here: "
                        f"{extras.pip_line(['live'])}; or export the {p.row}s to a file where it is "
                        f"(`parlai-acute {p.name} export`) and read that", param="task_name")
    from parlai_acute.mephisto_tasks.live.database import open_mephisto_db

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
        _check_file(p, source)
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


def analyze(name: str, table, config=None, *, warn: bool = True, judges: list | None = None, replies=None,
            **options):
    """Analyse protocol ``name``'s ``table`` (anything :func:`load_table` reads: a DataFrame is validated
    first) with ``config`` or keyword options; returns the analysis's result object.

    The protocol settles what its options leave open from the table itself (ACUTE-Eval: the
    per-worker cap as the run was launched, none for a model judge's verdicts -- ``judges``: its run
    summaries -- else the paper's one per model pair and question); when that default drops rows, a
    warning says how many (``warn=False``: the command line, which prints its own summary).
    ``replies``: ACUTE-Eval's replies' style table for ``style_control=True``
    (:mod:`parlai_acute.acute.replies`).
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
    extra = {**({"judges": judges} if judges else {}), **({"replies": replies} if replies is not None else {})}
    result = p.get("analyze")(table, config, **extra)
    if warn:
        for text in getattr(result, "default_warnings", lambda: [])():
            warnings.warn(text, stacklevel=2)
    return result


def estimates(name: str, table, **options) -> pd.DataFrame:
    """The protocol's estimate of every comparison in ``table``, without intervals: the number
    ``analyze``, ``status`` and ``ppi`` all report (see the protocol's ``estimands`` module); a
    protocol whose estimates need its analysis (multiref: BLEU) says so in one line."""
    p = protocol(name)
    module = p.estimands_module("estimates")
    if not (isinstance(table, pd.DataFrame) and table.attrs.get("source")):
        table = load_table(name, table)
    return module.estimates(table, **options)


def write_outputs(name: str, result, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """Write ``result``'s tables (``result.tables()``, each as STEM.csv: summary.csv first),
    results.json, run.json and (with ``report``) report.html into ``outdir``; returns {file name: path}."""
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


def review(task_name: str, mephisto_db: str | Path | None = None, rules=None, *, min_hourly_wage: float | None = None,
           block_qualification: str | None = None, apply: bool = False, log: str | Path | None = None,
           alpha: float = 0.05):
    """Review the Mephisto run ``task_name`` from what it stored (any protocol's live task): returns a
    :class:`parlai_acute.review.plan.ReviewPlan` -- ``table`` (one row per worker: evidence and pay),
    ``proposals`` (what ``rules`` propose for each worker, with the evidence) and, with ``apply``,
    ``done`` (each action carried out through Mephisto, or skipped and why; logged to ``log``,
    default beside the database). ``rules``: a YAML/JSON file or a dict (see
    :mod:`parlai_acute.review.rules`); ``min_hourly_wage`` and ``block_qualification`` override it."""
    from parlai_acute.review.plan import TABLE_COLUMNS
    from parlai_acute.review.rules import Policy

    try:
        from parlai_acute.mephisto_tasks.live import review as live_review
        from parlai_acute.mephisto_tasks.live.database import open_mephisto_db
    except ModuleNotFoundError as exc:
        raise UserError(f"reviewing a Mephisto run needs Mephisto ({exc}); install parlai_acute[live]") from None
    overrides = {"min_hourly_wage": min_hourly_wage, "block_qualification": block_qualification}
    if isinstance(rules, dict) or isinstance(rules, list):
        spec = {"rules": rules} if isinstance(rules, list) else dict(rules)
        policy = Policy.read(None, TABLE_COLUMNS, **spec, **{k: v for k, v in overrides.items() if v is not None})
    else:
        policy = Policy.read(rules, TABLE_COLUMNS, **overrides)
    db = open_mephisto_db(mephisto_db)
    log = Path(log) if log is not None else live_review.default_log(db, task_name)
    plan = live_review.review(db, task_name, policy, log_path=log, alpha=alpha)
    if apply:
        plan.done = live_review.apply(db, plan, log, dry_run=False)
    return plan
