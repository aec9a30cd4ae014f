"""``parlai-acute multiref export``: the collected replies in the DailyDialog multi-reference layout.

Writes FILE.jsonl (one dialogue per line, each turn with ``text`` and, where replies were
collected, a ``responses`` list and the parallel ``response_workers``) from the complete reply
sets stored for a task, plus two CSVs beside it: every reply with its timing
(``.reply_timing.csv``: server-measured seconds, fast/warned flags, the page's key presses and
clicks as reported) and one row per worker (``.worker_timing.csv``). Sets cut short are left
out of the JSONL and kept in the reply CSV (``set_complete`` false).

    parlai-acute multiref export --task-name multiref -o multiref.jsonl
    parlai-acute multiref export --task-name multiref_2r2w --mephisto-db data/database.db -o refs.jsonl
"""
from __future__ import annotations

import argparse
from pathlib import Path

from parlai_acute.errors import UserError

NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--task-name", required=True, help="the Mephisto task name the replies were collected under")
    parser.add_argument("--mephisto-db", metavar="PATH", default=None,
                        help="Mephisto database.db (default: the one in Mephisto's configured data directory)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.jsonl", help="the multi-reference file to write")


def timing_paths(output: Path) -> tuple[Path, Path]:
    stem = output.with_suffix("") if output.suffix == ".jsonl" else output
    return Path(f"{stem}.reply_timing.csv"), Path(f"{stem}.worker_timing.csv")


def write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    import csv

    from parlai_acute.files import atomic_write

    with atomic_write(path) as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def run(args) -> int:
    from parlai_acute.mephisto_tasks.live.database import open_mephisto_db
    from parlai_acute.files import write_jsonl
    from parlai_acute.mephisto_tasks.multiref import store

    output = Path(args.output)
    if output.is_dir():
        raise UserError(f"-o {output} is a directory; pass a file name such as {output}/multiref.jsonl")
    db = open_mephisto_db(args.mephisto_db)
    units = store.unit_data_for_task(db, args.task_name)
    rows = store.reply_records(units)
    if not rows:
        raise UserError(f"Mephisto task {args.task_name!r} has no stored replies; check the task name and the "
                        f"data directory (--mephisto-db)")
    dialogues = store.multiref_dialogues(units)
    write_jsonl(output, dialogues)
    replies_csv, workers_csv = timing_paths(output)
    write_csv(replies_csv, rows, store.REPLY_COLUMNS)
    workers = store.worker_timing(rows)
    write_csv(workers_csv, workers, store.WORKER_COLUMNS)
    contexts = sum(1 for d in dialogues for t in d["dialogue"] if "responses" in t)
    exported = sum(len(t["responses"]) for d in dialogues for t in d["dialogue"] if "responses" in t)
    partial = sum(not r["set_complete"] for r in rows)
    print(f"wrote {output}: {len(dialogues)} dialogues, {contexts} contexts, {exported} replies "
          f"from {len(workers)} workers" + (f" ({partial} replies of sets cut short left out)" if partial else ""))
    print(f"timing: {replies_csv} (per reply), {workers_csv} (per worker)")
    for w in workers:
        typing = w["median_client_typing_seconds"]
        print(f"  {w['worker']}: {w['replies']} replies, {w['sets_complete']} sets, median "
              f"{w['median_server_seconds']:.1f} s per reply (server), typing "
              f"{'-' if typing is None else f'{typing:.1f} s'} (client-reported), {w['fast_replies']} fast")
    return 0
