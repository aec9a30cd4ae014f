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
import sys

from parlai_acute.mephisto_tasks import launcher


def add_arguments(parser: argparse.ArgumentParser) -> None:
    launcher.add_launch_arguments(parser)
    parser.add_argument("--items", metavar="FILE", help="JSON-lines items file: item_id, context (list of turns), "
                                                        "reply, model (from `parlai-acute ssa generate`)")


def run(args) -> int:
    from parlai_acute.mephisto_tasks.ssa_label.blueprint import SsaLabelBlueprintArgs

    if args.help_blueprint:
        print(launcher.blueprint_help(SsaLabelBlueprintArgs, "static SSA labelling task"))
        return 0
    from parlai_acute.mephisto_tasks.ssa_label.config import CONFIG_DIR, CONFIG_NAME

    cfg = launcher.compose(CONFIG_DIR, CONFIG_NAME, list(args.overrides), "ssa launch")
    if args.items:
        cfg.mephisto.blueprint.items_file = args.items
    if args.print_config:
        from omegaconf import OmegaConf

        print(OmegaConf.to_yaml(cfg))
        return 0

    from parlai_acute.mephisto_tasks import setup
    from parlai_acute.mephisto_tasks.ssa_label import store
    from parlai_acute.mephisto_tasks.ssa_label.blueprint import SsaLabelSharedState
    from parlai_acute.mephisto_tasks.ssa_label.live import SsaLive, check_numbers

    check_numbers(cfg.mephisto.blueprint)  # bad settings fail before any port or database is touched
    SsaLive(cfg.mephisto)  # so does a bad items file
    launcher.check_architect(cfg)
    db = setup.open_db(args.data_dir)
    task_name = cfg.mephisto.task.task_name
    live = SsaLive(cfg.mephisto, store.history(store.unit_data_for_task(db, task_name)))
    if live.scheduler.remaining() == 0:
        print(f"task {task_name!r}: every item has its labels; nothing to launch (raise "
              f"mephisto.blueprint.labels_per_item or use another mephisto.task.task_name)")
        return 0

    def started() -> None:
        b = cfg.mephisto.blueprint
        print(f"SSA labelling task {task_name!r}: {live.scheduler.remaining()} labels to collect "
              f"({len(live.items)} items x {b.labels_per_item} workers, {b.items_per_unit} items per unit).",
              flush=True)
        if launcher.is_local(cfg) and cfg.mephisto.provider.get("_provider_type") == "mock":
            print(f"Open {launcher.worker_url(cfg)} in a browser (any worker_id; a new assignment_id for each "
                  f"unit).", flush=True)

    data_dir = launcher.run_task(cfg, SsaLabelSharedState(live=live), data_dir=args.data_dir, db=db,
                                 on_started=started)
    labels = store.labels_for_task(db, task_name)
    print(f"SSA labelling task {task_name!r} stopped; {len(labels)} labels stored in {data_dir}.", flush=True)
    return 0


if __name__ == "__main__":
    from parlai_acute.scripts.main import main

    sys.exit(main(["ssa", "launch", *sys.argv[1:]]))
