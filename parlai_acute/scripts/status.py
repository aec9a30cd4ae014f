"""``parlai-acute status``: where a running evaluation stands, safe to look at any time.

Reads a Mephisto run (``--task-name``; ACUTE-Eval, per-turn or SSA, found from what the run
stored) or a tidy table file (``--table``: ACUTE judgments, per-turn turns or SSA labels) and
prints each comparison's estimate with its confidence sequence (an interval valid however
often one looks), whether it is decided, and about how many more judgments the undecided
ones need. The unit is the worker (ACUTE), the dialogue (per-turn), the conversation or
worker (SSA). Where ACUTE conversations are reused across judgments, those comparisons' intervals
treat workers and conversations both as sampled (a two-facet sequence; the one over workers
alone, a statement about these conversations, is printed beside it), and results.json and
run.json record the design read and the procedure used. For a run, it also says whether the
task's stop rule (``stop_alpha`` /
``stop_budget``) has stopped it, and why. ``-o DIR`` also writes results.json, run.json,
status.csv (the rows) and report.html (unless ``--no-report``); ``--json FILE`` the result alone.

  parlai-acute status --task-name my-acute-task
  parlai-acute status --table turns.csv --alpha 0.05 -o status_now
  parlai-acute status --task-name my-acute-task --top-k 3 --json status.json

``--top-k K`` (ACUTE) also says whether the set of the best K models is decided: each of them
decided ahead of every model outside by its own confidence sequence, at --alpha over all pairs
(where a pair's conversations are reused, by the two-facet sequence as well, as its row above).
"""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError
from parlai_acute.scripts.options import (add_alpha, add_exclusion_rules, add_mephisto_db, add_output_dir,
                                          add_report_switch, cap_value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--task-name", help="read what this Mephisto task has stored so far")
    source.add_argument("--table", metavar="FILE", help="read a tidy table (.csv, .jsonl or .parquet) of judgments, turns or labels")
    parser.add_argument("--protocol", choices=["acute", "per-turn", "ssa"], default=None,
                        help="which protocol the data are (default: found from the table's columns or the run)")
    add_mephisto_db(parser)
    add_alpha(parser, "the decisions, familywise over all comparisons together and at every look (the intervals "
                      "are confidence sequences at that level)")
    parser.add_argument("--budget", type=int, default=1_000_000,
                        help="judgments beyond which a projection says 'no decision in sight'")
    # dest "k": the library's top_k(df, k) names it so in its errors; the terminal says --top-k
    parser.add_argument("--top-k", dest="k", type=int, default=None, metavar="K",
                        help="ACUTE: also say whether the set of the top K models is decided (at --alpha over all "
                             "model pairs), and which pairs across the boundary are still open")
    rules = parser.add_argument_group("ACUTE exclusion rules (as acute analyze takes them)")
    add_exclusion_rules(rules, "the paper's, number of model pairs x questions")
    add_output_dir(parser, "results.json, run.json, status.csv and the report", required=False)
    add_report_switch(parser)
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the status as JSON")


def _read_table(path: str, protocol: str | None):
    """A table file through its protocol's reader (:func:`parlai_acute.api.load_table`); the
    protocol, unless given, from the header (csv) or first row (jsonl)."""
    from parlai_acute import api
    from parlai_acute.monitoring.status import monitors

    if protocol is None:
        from parlai_acute.jsonl import input_file

        from parlai_acute.table_files import header

        try:
            table_file = input_file(path, "table file", "pass a judgments, turns or labels .csv/.jsonl/.parquet")
            if table_file.suffix.lower() == ".parquet":  # binary: its columns from its schema
                head = ",".join(header(table_file))
            else:
                with open(table_file, encoding="utf-8-sig") as handle:
                    head = handle.readline()
        except OSError as exc:
            raise UserError(f"{path}: cannot read it ({exc.strerror}); check the path") from None
        if not head.strip():
            raise UserError(f"table file {path} is empty; pass a judgments, turns or labels .csv/.jsonl/.parquet")
        watched = {p: m.signature for p, m in monitors().items()}
        found = [p for p, column in watched.items() if f'"{column}"' in head or column in head.strip().split(",")]
        if len(found) != 1:
            raise UserError(f"{path}: cannot tell the protocol from the columns ({api.describe_columns(header(path))}); "
                            f"pass a table of {', '.join(watched)}, or --protocol {'|'.join(watched)}")
        protocol = found[0]
    return api.load_table(protocol, path), protocol


def _read_run(args):
    """The run's table: the first protocol whose Mephisto task stored rows for ``--task-name``."""
    from parlai_acute import api, extras

    if extras.missing(["live"]):  # before the loop below, which reads a refusal as "not this protocol"
        raise extras.needs("parlai-acute status --task-name", ["live"])
    tried = []
    from parlai_acute.monitoring.status import monitors

    for protocol in ([args.protocol] if args.protocol else list(monitors())):
        try:
            return api.load_table(protocol, task_name=args.task_name, mephisto_db=args.mephisto_db), protocol
        except UserError as exc:
            if "no Mephisto task named" in str(exc):
                raise
            tried.append(protocol)
    raise UserError(f"Mephisto task {args.task_name!r} has no stored judgments, turns or labels yet (looked for "
                    f"{', '.join(tried)}); check the task name and --mephisto-db")


def exclusion_settings(args, protocol: str) -> dict:
    """The ACUTE rules' settings the command line changed (only those: a run's launched cap stays
    the default); for another protocol a changed one is a one-line error."""
    settings = {}
    if args.min_reason_chars != 3:
        settings["min_reason_chars"] = args.min_reason_chars
    if args.max_per_worker is not None:
        settings["max_per_worker"] = cap_value(args.max_per_worker)
    if settings and protocol != "acute":
        flags = " and ".join(f"--{name.replace('_', '-')}" for name in settings)
        raise UserError(f"{flags} set ACUTE's exclusion rules; the {protocol} table has none: leave them out")
    return settings


def run(args) -> int:
    from parlai_acute import __version__
    from parlai_acute.monitoring.status import status, status_lines

    if args.budget < 1:
        raise UserError(f"--budget must be a positive number of judgments, got {args.budget}")
    if args.outdir:
        from parlai_acute.files import check_outdir

        check_outdir(args.outdir)
    df, protocol = _read_table(args.table, args.protocol) if args.table else _read_run(args)
    settings = exclusion_settings(args, protocol)
    result = status(df, protocol, alpha=args.alpha, budget=args.budget, settings=settings)
    print("\n".join(status_lines(result)))
    if args.k is not None:
        from parlai_acute.monitoring.status import top_k, top_k_lines

        result["top_k"] = top_k(df, args.k, alpha=args.alpha, budget=args.budget, protocol=protocol,
                                settings=settings)
        print("\n".join(top_k_lines(result["top_k"])))
    if args.task_name:
        from parlai_acute.mephisto_tasks.live.database import open_mephisto_db
        from parlai_acute.mephisto_tasks.live.stored_units import stop_decisions
        from parlai_acute.monitoring.stopping import decision_lines

        result["stop_decisions"] = stop_decisions(open_mephisto_db(args.mephisto_db), args.task_name)
        result["stop_lines"] = decision_lines(result["stop_decisions"])
        print("\n".join(result["stop_lines"] or ["the task's stop rule has not stopped it (or it has none)"]))
    source = args.table or f"Mephisto task {args.task_name}"
    if args.json:
        from parlai_acute.files import write_json

        write_json(args.json, result | {"source": source, "version": __version__})
    if args.outdir:
        from parlai_acute.files import output_dir

        with output_dir(args.outdir):  # all or nothing
            paths = write_outputs(result, args, source)
        print(f"wrote {', '.join(name for name in paths if '/' not in name)} to {args.outdir}")
    return 0


def write_outputs(result: dict, args, source: str) -> dict:
    """results.json (everything, strict JSON), run.json (configuration and version), status.csv (the
    rows) and, unless ``--no-report``, report.html (:mod:`parlai_acute.monitoring.report`) in ``-o DIR``."""
    from pathlib import Path

    from parlai_acute import __version__
    from parlai_acute.files import write_csv, write_json
    from parlai_acute.metrics.tables import write_run
    from parlai_acute.monitoring.report import build_report, rows_table

    outdir = Path(args.outdir)
    config = {"protocol": result["protocol"], "alpha": args.alpha, "budget": args.budget, "top_k": args.k,
              "source": source, "mephisto_db": args.mephisto_db, "seed": None, "settings": result.get("settings", {}),
              "design": result.get("design", {})}  # the facets read and the procedures that decided the rows
    result["run"] = {"command": "status", "version": __version__, "config": config,
                     "randomness": "none: the same rows give the same status"}
    paths = {"results.json": outdir / "results.json",
             "status.csv": write_csv(outdir / "status.csv", rows_table(result))}
    write_json(paths["results.json"], result | {"source": source, "version": __version__})
    paths["run.json"] = write_run(outdir, "status", config, randomness=result["run"]["randomness"])
    if not args.no_report:
        paths.update(build_report(result, source).write(outdir))
    return paths
