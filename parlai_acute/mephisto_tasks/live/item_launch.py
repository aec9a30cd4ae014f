"""``parlai-acute ssa|multiref launch``: the one launch of an item task (SSA labelling, multi-reference
collection), from the composed Hydra config to the stop message.

Every check runs before any port or database is touched (the settings, then the input file by
building the live set-up once), the stored answers of the task name are read so a relaunch hands
out only what is missing, and the task runs until it is complete or stopped.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from parlai_acute.mephisto_tasks.live import launcher


@dataclass
class ItemTask:
    label: str                # "static SSA labelling task"
    args_class: type          # the blueprint's arguments dataclass (for --help-blueprint)
    config: object            # the task's config module (CONFIG_DIR, CONFIG_NAME)
    file_key: str             # mephisto.blueprint.<file_key> set by the command's file option
    check: Callable           # blueprint settings -> None, or a UserError
    live_class: type
    store: object             # the task's store module (history, unit_data_for_task)
    nothing_left: str         # said when every item already has its answers
    started: Callable         # (cfg, live, task_name) -> the line printed once the task serves
    stopped: Callable         # (db, task_name, data_dir) -> the line printed when it stops


def command(option: str, help: str, task_module: str, file_key: str) -> tuple[Callable, Callable]:
    """(add_arguments, run) of an item task's ``launch`` subcommand: the launch options every task
    has, the task's input file ``option`` (stored as ``file_key``, the blueprint's name for it, which
    the task's errors name), and :func:`launch` of ``task_module``'s ``item_task()``."""

    def add_arguments(parser) -> None:
        launcher.add_launch_arguments(parser)
        parser.add_argument(option, dest=file_key, metavar="FILE", help=help)

    def run(args) -> int:
        import importlib

        return launch(args, importlib.import_module(task_module).item_task(), getattr(args, file_key))

    return add_arguments, run


def launch(args, task: ItemTask, input_file: str | None) -> int:
    if args.help_blueprint:
        print(launcher.blueprint_help(task.args_class, task.label))
        return 0
    cfg = launcher.compose(task.config.CONFIG_DIR, task.config.CONFIG_NAME, list(args.overrides))
    if input_file:
        cfg.mephisto.blueprint[task.file_key] = input_file
    if args.print_config:
        from omegaconf import OmegaConf

        print(OmegaConf.to_yaml(cfg))
        return 0
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.live.task_blueprint import LiveSharedState

    task.check(cfg.mephisto.blueprint)  # bad settings fail before any port or database is touched
    task.live_class(cfg.mephisto)  # so does a bad input file
    launcher.check_architect(cfg)
    db = setup.open_db(args.data_dir)
    task_name = cfg.mephisto.task.task_name
    live = task.live_class(cfg.mephisto, task.store.history(task.store.unit_data_for_task(db, task_name)))
    if live.scheduler.remaining() == 0:
        from parlai_acute.mephisto_tasks.live.item_runner import ItemTaskRunner
        from parlai_acute.monitoring.stopping import already_stopped

        # every item task's runner is an ItemTaskRunner: one rule for which stored units are finished
        if launcher.nothing_to_launch(db, task_name, ItemTaskRunner, already_stopped(live.scheduler.stop)
                                      or task.nothing_left):
            return 0

    def started() -> None:
        launcher.announce(task.started(cfg, live, task_name), cfg)

    data_dir = launcher.run_task(cfg, LiveSharedState(live=live), data_dir=args.data_dir, db=db,
                                 on_started=started, verbose=args.verbose)
    print(task.stopped(db, task_name, data_dir), flush=True)
    return 0
