"""``parlai-acute PROTOCOL export``: what a Mephisto run stored -> the protocol's table file.

Reads every row stored for ``--task-name`` (every run of that name, finished units or not)
straight from the Mephisto database and the stored state files, without importing the task's
blueprint, and writes the protocol's tidy table (``.csv``, ``.jsonl`` or ``.parquet``): the file that
``analyze``, ``judge agreement`` and ``parlai_acute.api.load_table`` read back. SSA labels
include interactive SSA of per-turn runs (label_mode=ssa); ConvAI2 ratings come from the
survey at the end of per-turn runs (survey=convai2).

  parlai-acute acute export --task-name my-acute-task --mephisto-db data/database.db -o judgments.csv
  parlai-acute per-turn export --task-name my-per-turn-task -o turns.jsonl
  parlai-acute ssa export --task-name my-ssa-task -o labels.csv
  parlai-acute convai2 export --task-name my-per-turn-task -o ratings.csv
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import add_mephisto_db, add_output_file

NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task-name", required=True, help="the Mephisto task (its mephisto.task.task_name)")
    add_mephisto_db(parser)
    add_output_file(parser, "the table file (.csv, .jsonl or .parquet)")


def run(args) -> int:
    from parlai_acute import api

    n = api.export(args.protocol, args.task_name, args.output, mephisto_db=args.mephisto_db)
    print(f"wrote {args.output}: {n} {api.protocol(args.protocol).row}s from Mephisto task {args.task_name}")
    return 0
