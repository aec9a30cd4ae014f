"""``parlai-acute status``: where a running evaluation stands, safe to look at any time.

Reads a Mephisto run (``--task-name``; ACUTE-Eval, per-turn or SSA, found from what the run
stored) or a tidy table file (``--table``: ACUTE judgments, per-turn turns or SSA labels) and
prints each comparison's estimate with its confidence sequence (an interval valid however
often one looks), whether it is decided, and about how many more judgments the undecided
ones need. The unit is the worker (ACUTE), the dialogue (per-turn), the conversation or
worker (SSA). For a run, it also says whether the task's stop rule (``stop_alpha`` /
``stop_budget``) has stopped it, and why. ``--json FILE`` also writes the result.

  parlai-acute status --task-name my-acute-task
  parlai-acute status --table turns.csv --alpha 0.05 --json status.json
  parlai-acute status --task-name my-acute-task --top-k 3

``--top-k K`` (ACUTE) also says whether the set of the best K models is decided: each of them
decided ahead of every model outside by its own confidence sequence, at --alpha over all pairs.
"""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError
from parlai_acute.scripts.options import add_mephisto_db


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--task-name", help="read what this Mephisto task has stored so far")
    source.add_argument("--table", metavar="FILE", help="read a tidy table (.csv or .jsonl) of judgments, turns or labels")
    parser.add_argument("--protocol", choices=["acute", "per-turn", "ssa"], default=None,
                        help="which protocol the data are (default: found from the table's columns or the run)")
    add_mephisto_db(parser)
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="error rate over all comparisons together, at every look (default: %(default)s)")
    parser.add_argument("--budget", type=int, default=1_000_000,
                        help="judgments beyond which a projection says 'no decision in sight'")
    parser.add_argument("--top-k", type=int, default=None, metavar="K",
                        help="ACUTE: also say whether the set of the top K models is decided (at --alpha over all "
                             "model pairs), and which pairs across the boundary are still open")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the status as JSON")


def _read_table(path: str, protocol: str | None):
    """A table file through its protocol's reader (:func:`parlai_acute.api.load_table`); the
    protocol, unless given, from the header (csv) or first row (jsonl)."""
    from parlai_acute import api
    from parlai_acute.status import SIGNATURE

    if protocol is None:
        from parlai_acute.jsonl import input_file

        try:
            with open(input_file(path, "table file", "pass a judgments, turns or labels .csv/.jsonl"),
                      encoding="utf-8-sig") as handle:
                head = handle.readline()
        except OSError as exc:
            raise UserError(f"{path}: cannot read it ({exc.strerror}); check the path") from None
        if not head.strip():
            raise UserError(f"table file {path} is empty; pass a judgments, turns or labels .csv/.jsonl")
        found = [p for p, column in SIGNATURE.items() if f'"{column}"' in head or column in head.strip().split(",")]
        if len(found) != 1:
            from parlai_acute.table_files import header

            raise UserError(f"{path}: cannot tell the protocol from the columns ({api.describe_columns(header(path))}); "
                            f"pass an ACUTE judgments, per-turn turns or SSA labels table, or --protocol "
                            f"acute|per-turn|ssa")
        protocol = found[0]
    return api.load_table(protocol, path), protocol


def _read_run(args):
    """The run's table: the first protocol whose Mephisto task stored rows for ``--task-name``."""
    from parlai_acute import api, extras

    if extras.missing(["live"]):  # before the loop below, which reads a refusal as "not this protocol"
        raise extras.needs("parlai-acute status --task-name", ["live"])
    tried = []
    for protocol in ([args.protocol] if args.protocol else ["acute", "per-turn", "ssa"]):
        try:
            return api.load_table(protocol, task_name=args.task_name, mephisto_db=args.mephisto_db), protocol
        except UserError as exc:
            if "no Mephisto task named" in str(exc):
                raise
            tried.append(protocol)
    raise UserError(f"Mephisto task {args.task_name!r} has no stored judgments, turns or labels yet (looked for "
                    f"{', '.join(tried)}); check the task name and --mephisto-db")


def run(args) -> int:
    from parlai_acute.status import status, status_lines

    if args.budget < 1:
        raise UserError(f"--budget must be a positive number of judgments, got {args.budget}")
    df, protocol = _read_table(args.table, args.protocol) if args.table else _read_run(args)
    if args.top_k is not None and protocol != "acute":
        raise UserError(f"--top-k ranks ACUTE-Eval models and these are {protocol} data; leave --top-k out")
    result = status(df, protocol, alpha=args.alpha, budget=args.budget)
    print("\n".join(status_lines(result)))
    if args.top_k is not None:
        from parlai_acute.status import top_k, top_k_lines

        result["top_k"] = top_k(df, args.top_k, alpha=args.alpha, budget=args.budget)
        print("\n".join(top_k_lines(result["top_k"])))
    if args.task_name:
        from parlai_acute.mephisto_tasks.database import open_mephisto_db
        from parlai_acute.mephisto_tasks.stored_units import stop_decisions
        from parlai_acute.stopping import decision_lines

        result["stop_decisions"] = stop_decisions(open_mephisto_db(args.mephisto_db), args.task_name)
        print("\n".join(decision_lines(result["stop_decisions"])
                        or ["the task's stop rule has not stopped it (or it has none)"]))
    if args.json:
        from parlai_acute.files import write_json
        from parlai_acute import __version__

        write_json(args.json, result | {"source": args.table or f"Mephisto task {args.task_name}",
                                        "version": __version__})
    return 0
