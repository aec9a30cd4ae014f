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
import signal
import sys
from pathlib import Path

from parlai_acute.errors import UserError



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = __doc__.split("\n\n", 1)[1]
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="Hydra overrides: mephisto.blueprint.* (see --help-blueprint), mephisto.task.*, "
                             "mephisto.architect.*, mephisto/architect=..., mephisto/provider=...")
    parser.add_argument("--pairings", help="shortcut for mephisto.blueprint.pairings_file=PATH")
    parser.add_argument("--data-dir", help="Mephisto data directory (default: $PARLAI_ACUTE_MEPHISTO_DATA, "
                                           "else main_data_directory in ~/.mephisto/config.yml)")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    parser.add_argument("--help-blueprint", action="store_true", help="list the mephisto.blueprint.* options")


def blueprint_help() -> str:
    from dataclasses import fields

    from parlai_acute.mephisto_tasks.acute_eval.blueprint import AcuteEvalBlueprintArgs

    lines = ["mephisto.blueprint.* options of the ACUTE-Eval task:"]
    for f in fields(AcuteEvalBlueprintArgs):
        if f.name.startswith("_") or "help" not in f.metadata:
            continue
        default = "(required)" if f.metadata.get("required") else f"default: {f.default!r}"
        lines.append(f"  {f.name}  {default}\n      {f.metadata['help']}")
    return "\n".join(lines)


def compose(overrides: list[str]):
    """The task config: our defaults (hydra_configs/conf/default.yaml) plus ``overrides``."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from parlai_acute.mephisto_tasks.acute_eval.config import CONFIG_DIR, CONFIG_NAME

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
            cfg = hydra_compose(config_name=CONFIG_NAME, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"bad configuration override: {first}; see `parlai-acute acute launch --help-blueprint`") from None
    OmegaConf.set_struct(cfg, False)
    return cfg


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def serve(operator) -> bool:
    """Run the operator's loop until its runs finish (-> False) or SIGTERM/Ctrl-C (-> True)."""
    import asyncio

    loop = operator._event_loop
    asyncio.set_event_loop(loop)
    operator._stop_task = loop.create_task(operator._stop_loop_when_no_running_tasks(log_rate=300))
    try:
        loop.run_forever()
        return False
    except KeyboardInterrupt:
        return True


def stop(operator, interrupted: bool) -> None:
    """Shut Mephisto down without its interactive waits (judgments are already stored)."""
    import contextlib

    task, operator._stop_task = operator._stop_task, None
    if task is not None and not task.done():
        task.cancel()
    with contextlib.suppress(RuntimeError):  # Mephisto stops its loop from inside its own tasks
        if interrupted:
            operator.force_shutdown(timeout=5)
        else:
            operator.shutdown()


def worker_url(cfg, worker: str = "worker1", assignment: str = "1") -> str:
    arch = cfg.mephisto.architect
    host = str(arch.get("hostname", "localhost"))
    if "://" not in host:
        host = "http://" + host
    return f"{host}:{arch.get('port', 3000)}/?worker_id={worker}&assignment_id={assignment}"


def run(args) -> int:
    if args.help_blueprint:
        print(blueprint_help())
        return 0
    overrides = list(args.overrides)
    if args.pairings:
        overrides.append(f"mephisto.blueprint.pairings_file={Path(args.pairings).resolve()}")
    cfg = compose(overrides)
    from omegaconf import OmegaConf

    if OmegaConf.is_missing(cfg.mephisto.blueprint, "pairings_file") or not cfg.mephisto.blueprint.pairings_file:
        raise UserError("no pairings file; pass --pairings FILE or mephisto.blueprint.pairings_file=FILE")
    cfg.mephisto.blueprint.pairings_file = str(Path(cfg.mephisto.blueprint.pairings_file).expanduser().resolve())
    if args.print_config:
        print(OmegaConf.to_yaml(cfg))
        return 0

    from parlai_acute.mephisto_tasks import setup
    from parlai_acute.mephisto_tasks.acute_eval.blueprint import AcuteEvalSharedState, build_scheduler

    local = cfg.mephisto.architect.get("_architect_type") == "local"
    if local:
        setup.check_port_free(cfg.mephisto.architect.hostname, cfg.mephisto.architect.port)
    db = setup.open_db(args.data_dir)
    data_dir = setup.configure_data_dir(args.data_dir)
    task_name = cfg.mephisto.task.task_name
    scheduler = build_scheduler(cfg.mephisto, db, task_name)  # validates pairings before anything starts
    if scheduler.remaining() == 0:
        print(f"task {task_name!r}: every pair already has its judgments; nothing to launch "
              f"(use another mephisto.task.task_name for a new run)")
        return 0
    if cfg.mephisto.provider.get("_provider_type") == "mock" and not cfg.mephisto.provider.get("requester_name"):
        cfg.mephisto.provider.requester_name = setup.ensure_mock_requester(db)
    if local and not cfg.mephisto.architect.get("server_source_path"):
        cfg.mephisto.architect.server_source_path = setup.router_source()

    from mephisto.operations.operator import Operator
    from mephisto.tools.scripts import augment_config_from_db

    cfg = augment_config_from_db(cfg, db)
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    operator = Operator(db)
    architects, interrupted = [], True
    try:
        operator.launch_task_run_or_die(cfg.mephisto, shared_state=AcuteEvalSharedState(scheduler=scheduler))
        architects = setup.local_architects(operator)
        print(f"ACUTE-Eval task {task_name!r}: {scheduler.remaining()} judgments to collect in "
              f"{scheduler.units_needed()} units.", flush=True)
        if local and cfg.mephisto.provider.get("_provider_type") == "mock":
            print(f"Open {worker_url(cfg)} in a browser (any worker_id; a new assignment_id for each unit).",
                  flush=True)
        interrupted = serve(operator)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish cleanup even if signalled again
        try:
            stop(operator, interrupted)
        finally:
            setup.stop_server_processes(architects)
        signal.signal(signal.SIGTERM, old_term)
    print(f"ACUTE-Eval task {task_name!r} stopped; judgments are in {data_dir}.", flush=True)
    return 0


if __name__ == "__main__":
    from parlai_acute.scripts.main import main

    sys.exit(main(["acute", "launch", *sys.argv[1:]]))
