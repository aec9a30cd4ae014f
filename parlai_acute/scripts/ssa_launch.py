"""``parlai-acute ssa launch``: serve the static SSA labelling task over an items file.

Each unit shows several items (``items_per_unit``, default 10), one at a time: a short
context and a reply, then "Does the response make sense?" and, only if yes, "Is the response
specific?". Each item is labelled by ``labels_per_item`` different workers (default 5, as in
Meena). Every label is stored the moment it is given; SIGTERM or Ctrl-C stops the task (and
its router) without losing one, and launching again with the same task name continues.

    parlai-acute ssa launch --items items.jsonl
    parlai-acute ssa launch --items items.jsonl mephisto.blueprint.labels_per_item=3 \\
        mephisto.blueprint.items_per_unit=20 mephisto.task.task_name=ssa_pilot
    parlai-acute ssa launch --items items.jsonl mephisto/architect=heroku mephisto/provider=mturk_sandbox \\
        mephisto.provider.requester_name=my_sandbox_requester
"""
from __future__ import annotations

import argparse

from parlai_acute.mephisto_tasks import launcher


def add_arguments(parser: argparse.ArgumentParser) -> None:
    launcher.add_launch_arguments(parser)
    parser.add_argument("--items", metavar="FILE", help="JSON-lines items file: item, context (list of turns), "
                                                        "reply, model (from `parlai-acute ssa generate`)")


def run(args) -> int:
    from parlai_acute.mephisto_tasks.item_launch import ItemTask, launch
    from parlai_acute.mephisto_tasks.ssa_label import config, store
    from parlai_acute.mephisto_tasks.ssa_label.blueprint import SsaLabelBlueprintArgs
    from parlai_acute.mephisto_tasks.ssa_label.live import SsaLive, check_numbers

    def started(cfg, live, task_name) -> str:
        b = cfg.mephisto.blueprint
        return (f"SSA labelling task {task_name!r}: {live.scheduler.remaining()} labels to collect "
                f"({len(live.items)} items x {b.labels_per_item} workers, {b.items_per_unit} items per unit).")

    def stopped(db, task_name, data_dir) -> str:
        return f"SSA labelling task {task_name!r} stopped; {len(store.labels_for_task(db, task_name))} labels " \
               f"stored in {data_dir}."

    return launch(args, ItemTask(
        "ssa launch", "static SSA labelling task", SsaLabelBlueprintArgs, config, "items_file", check_numbers, SsaLive,
        store, "every item has its labels; nothing to launch (raise "
        "mephisto.blueprint.labels_per_item or use another mephisto.task.task_name)", started, stopped), args.items)
