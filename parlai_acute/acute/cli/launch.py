"""``parlai-acute acute launch``: serve the ACUTE-Eval Mephisto task from the installed package.

Configuration is Mephisto's Hydra config; pass overrides after the options::

    parlai-acute acute launch mephisto.blueprint.pairings_file=pairings.jsonl
    parlai-acute acute launch mephisto.blueprint.pairings_file=p.jsonl mephisto.blueprint.question=humanlike \\
        mephisto.architect.port=3001 mephisto.task.task_name=my_eval
    parlai-acute acute launch ... mephisto/architect=heroku mephisto/provider=mturk_sandbox \\
        mephisto.provider.requester_name=my_sandbox_requester

The default is the local architect (a Node router on localhost) with the mock provider,
so a person can do the task in a browser at the printed address. Relaunching with the same
``mephisto.task.task_name`` continues the run: pairs already judged enough are not handed
out again. SIGTERM or Ctrl-C stops it cleanly: every submitted judgment is already stored,
and the router process is stopped too.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.live import launcher

NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    launcher.add_launch_arguments(parser)
    parser.add_argument("--pairings", help="shortcut for mephisto.blueprint.pairings_file=PATH")


def run(args) -> int:
    from parlai_acute.mephisto_tasks.acute.blueprint import AcuteEvalBlueprintArgs

    if args.help_blueprint:
        print(launcher.blueprint_help(AcuteEvalBlueprintArgs, "ACUTE-Eval task"))
        return 0
    overrides = list(args.overrides)
    if args.pairings:
        overrides.append(f"mephisto.blueprint.pairings_file={Path(args.pairings).resolve()}")
    from parlai_acute.mephisto_tasks.acute.config import CONFIG_DIR, CONFIG_NAME

    cfg = launcher.compose(CONFIG_DIR, CONFIG_NAME, overrides)
    from omegaconf import OmegaConf

    if OmegaConf.is_missing(cfg.mephisto.blueprint, "pairings_file") or not cfg.mephisto.blueprint.pairings_file:
        raise UserError("no pairings file; pass --pairings FILE or mephisto.blueprint.pairings_file=FILE")
    cfg.mephisto.blueprint.pairings_file = str(Path(cfg.mephisto.blueprint.pairings_file).expanduser().resolve())
    if args.print_config:
        print(OmegaConf.to_yaml(cfg))
        return 0

    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.acute.blueprint import AcuteEvalSharedState
    from parlai_acute.mephisto_tasks.acute.live import build_scheduler

    launcher.check_architect(cfg)
    db = setup.open_db(args.data_dir)
    task_name = cfg.mephisto.task.task_name
    scheduler = build_scheduler(cfg.mephisto, db, task_name)  # validates pairings before anything starts
    if scheduler.remaining() == 0:
        from parlai_acute.mephisto_tasks.acute.runner import AcuteEvalRunner
        from parlai_acute.monitoring.stopping import already_stopped

        if launcher.nothing_to_launch(db, task_name, AcuteEvalRunner, already_stopped(scheduler.stop) or (
                "every pair already has its judgments; nothing to launch (use another mephisto.task.task_name "
                "for a new run)")):
            return 0

    def started() -> None:
        launcher.announce(f"ACUTE-Eval task {task_name!r}: {scheduler.remaining()} judgments to collect in "
                          f"{scheduler.units_needed()} units.", cfg)

    data_dir = launcher.run_task(cfg, AcuteEvalSharedState(scheduler=scheduler), data_dir=args.data_dir, db=db,
                                 on_started=started, verbose=args.verbose)
    print(f"ACUTE-Eval task {task_name!r} stopped; judgments are in {data_dir}.", flush=True)
    return 0
