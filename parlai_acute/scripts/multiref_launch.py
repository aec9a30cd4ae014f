"""``parlai-acute multiref launch``: serve the multi-reference collection task.

Each unit shows a few contexts (``contexts_per_unit``, default 5), one at a time; the worker
writes several different replies to each, submitted with Enter or a button, with a count of
how many remain. Modes (``mephisto.blueprint.mode``): 4R1W (4 replies from 1 worker, the
default), 2R2W, 1R4W. Replies shorter than 2 characters or repeated are refused, by the page
and the server; replies entered consistently too fast get a warning; key-press and click times
are stored. Every reply is stored the moment it is accepted; SIGTERM or Ctrl-C stops the task
without losing one, and launching again with the same task name continues.
`parlai-acute multiref export` writes the DailyDialog multi-reference file.

    parlai-acute multiref launch                       # 20 of the package's static contexts, 4R1W
    parlai-acute multiref launch --contexts dialogues.jsonl mephisto.blueprint.mode=2R2W
    parlai-acute multiref launch mephisto.blueprint.num_contexts=100 mephisto.blueprint.mode=1R4W \\
        mephisto.task.task_name=multiref_1r4w
"""
from __future__ import annotations

import argparse

from parlai_acute.mephisto_tasks import launcher


def add_arguments(parser: argparse.ArgumentParser) -> None:
    launcher.add_launch_arguments(parser)
    parser.add_argument("--contexts", metavar="FILE", help="JSON lines of dialogues in the DailyDialog multi-reference "
                                                           "layout (default: the package's static contexts)")


def run(args) -> int:
    from parlai_acute.mephisto_tasks.item_launch import ItemTask, launch
    from parlai_acute.mephisto_tasks.multiref import config, store
    from parlai_acute.mephisto_tasks.multiref.blueprint import MultirefBlueprintArgs
    from parlai_acute.mephisto_tasks.multiref.live import MultirefLive, check_args

    def started(cfg, live, task_name) -> str:
        return (f"Multi-reference task {task_name!r} ({live.mode}): {live.scheduler.remaining()} reply sets to "
                f"collect ({len(live.items)} contexts x {live.workers_per_context} workers x "
                f"{live.replies_per_worker} replies, {cfg.mephisto.blueprint.contexts_per_unit} contexts per unit).")

    def stopped(db, task_name, data_dir) -> str:
        rows = store.reply_records(store.unit_data_for_task(db, task_name))
        return (f"Multi-reference task {task_name!r} stopped; {len(rows)} replies stored in {data_dir} "
                f"(export them with `parlai-acute multiref export --task-name {task_name} -o FILE.jsonl`).")

    return launch(args, ItemTask(
        "multiref launch", "multi-reference collection task", MultirefBlueprintArgs, config, "contexts_file",
        check_args, MultirefLive, store,
        "every context has its replies; nothing to launch (use another mephisto.task.task_name)", started, stopped),
        args.contexts)
