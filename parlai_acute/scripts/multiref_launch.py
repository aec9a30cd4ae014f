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
import sys

from parlai_acute.mephisto_tasks import launcher


def add_arguments(parser: argparse.ArgumentParser) -> None:
    launcher.add_launch_arguments(parser)
    parser.add_argument("--contexts", metavar="FILE", help="JSON lines of dialogues in the DailyDialog multi-reference "
                                                           "layout (default: the package's static contexts)")


def run(args) -> int:
    from parlai_acute.mephisto_tasks.multiref.blueprint import MultirefBlueprintArgs

    if args.help_blueprint:
        print(launcher.blueprint_help(MultirefBlueprintArgs, "multi-reference collection task"))
        return 0
    from parlai_acute.mephisto_tasks.multiref.config import CONFIG_DIR, CONFIG_NAME

    cfg = launcher.compose(CONFIG_DIR, CONFIG_NAME, list(args.overrides), "multiref launch")
    if args.contexts:
        cfg.mephisto.blueprint.contexts_file = args.contexts
    if args.print_config:
        from omegaconf import OmegaConf

        print(OmegaConf.to_yaml(cfg))
        return 0

    from parlai_acute.mephisto_tasks import setup
    from parlai_acute.mephisto_tasks.multiref import store
    from parlai_acute.mephisto_tasks.multiref.blueprint import MultirefSharedState
    from parlai_acute.mephisto_tasks.multiref.live import MultirefLive, check_args

    check_args(cfg.mephisto.blueprint)  # bad settings fail before any port or database is touched
    MultirefLive(cfg.mephisto)  # so does a bad contexts file
    launcher.check_architect(cfg)
    db = setup.open_db(args.data_dir)
    task_name = cfg.mephisto.task.task_name
    live = MultirefLive(cfg.mephisto, store.history(store.unit_data_for_task(db, task_name)))
    if live.scheduler.remaining() == 0:
        print(f"task {task_name!r}: every context has its replies; nothing to launch (use another "
              f"mephisto.task.task_name)")
        return 0

    def started() -> None:
        print(f"Multi-reference task {task_name!r} ({live.mode}): {live.scheduler.remaining()} reply sets to collect "
              f"({len(live.items)} contexts x {live.workers_per_context} workers x {live.replies_per_worker} "
              f"replies, {cfg.mephisto.blueprint.contexts_per_unit} contexts per unit).", flush=True)
        if launcher.is_local(cfg) and cfg.mephisto.provider.get("_provider_type") == "mock":
            print(f"Open {launcher.worker_url(cfg)} in a browser (any worker_id; a new assignment_id for each "
                  f"unit).", flush=True)

    data_dir = launcher.run_task(cfg, MultirefSharedState(live=live), data_dir=args.data_dir, db=db,
                                 on_started=started)
    rows = store.reply_records(store.unit_data_for_task(db, task_name))
    print(f"Multi-reference task {task_name!r} stopped; {len(rows)} replies stored in {data_dir} "
          f"(export them with `parlai-acute multiref export --task-name {task_name} -o FILE.jsonl`).", flush=True)
    return 0


if __name__ == "__main__":
    from parlai_acute.scripts.main import main

    sys.exit(main(["multiref", "launch", *sys.argv[1:]]))
