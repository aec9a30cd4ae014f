"""Launch any of this package's Mephisto tasks: Hydra config, checks, operator loop, clean stop.

Every task script (``acute launch``, ``per-turn launch``) does the same things in the same
order, so they live here once:

1. :func:`compose` the task's Hydra config (its ``hydra_configs/conf/default.yaml`` plus the
   user's overrides) and :func:`check_architect` (port number and a free port) before anything
   slow or persistent happens;
2. :func:`run_task`: unattended Mephisto setup (data directory, mock requester, router copy),
   the operator, a loop that ends when the run is done or on SIGTERM/Ctrl-C, and a stop that
   neither waits interactively nor floods the terminal with Mephisto's shutdown tracebacks,
   and always stops the Node router.

What a launch prints: its own lines, ending (for a local run) with the address a person opens on a
line of its own (:func:`announce`); Mephisto's INFO log, its router's output and its metrics
notice only with ``--verbose``.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from dataclasses import fields
from pathlib import Path
from typing import Callable

from parlai_acute.errors import UserError


def add_launch_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every ``... launch`` subcommand shares (Hydra overrides come last)."""
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="Hydra overrides: mephisto.blueprint.* (see --help-blueprint), mephisto.task.*, "
                             "mephisto.architect.*, mephisto/architect=..., mephisto/provider=...")
    parser.add_argument("--data-dir", help="Mephisto data directory (default: $PARLAI_ACUTE_MEPHISTO_DATA, "
                                           "else main_data_directory in ~/.mephisto/config.yml)")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    parser.add_argument("--help-blueprint", action="store_true", help="list the mephisto.blueprint.* options")
    parser.add_argument("--verbose", action="store_true",
                        help="also show Mephisto's INFO log and its router's output (default: warnings and our lines)")


def blueprint_help(args_class, title: str) -> str:
    """The ``mephisto.blueprint.*`` options of a blueprint, from its dataclass ``help`` metadata."""
    lines = [f"mephisto.blueprint.* options of the {title}:"]
    for f in fields(args_class):
        if f.name.startswith("_") or "help" not in f.metadata:
            continue
        default = "(required)" if f.metadata.get("required") else f"default: {f.default!r}"
        lines.append(f"  {f.name}  {default}\n      {f.metadata['help']}")
    return "\n".join(lines)


def compose(config_dir: Path, config_name: str, overrides: list[str]):
    """The task config: the task's defaults plus ``overrides``."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base=None):
            cfg = hydra_compose(config_name=config_name, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if "Ambiguous value" in first:  # Hydra reads key=a,b as a sweep over a and b
            first += " (a value with commas must be quoted for Hydra: write 'KEY=\"a,b\"' in the shell)"
        raise UserError(f"bad configuration override: {first}; list the task's mephisto.blueprint.* options with "
                        f"help_blueprint", param="help_blueprint") from None
    OmegaConf.set_struct(cfg, False)
    return cfg


def is_local(cfg) -> bool:
    return cfg.mephisto.architect.get("_architect_type") == "local"


def check_port_number(value) -> int:
    """The port as an int in 1..65535, else a one-line UserError."""
    text = str(value).strip()
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise UserError(f"mephisto.architect.port={value} is not a port number; use 1-65535 "
                        f"(e.g. mephisto.architect.port=3000)")
    return int(text)


def nothing_to_launch(db, task_name: str, runner_class, why: str) -> bool:
    """Every answer is collected (``why`` says so): is there nothing to serve at all? Finished work an
    earlier run left unsubmitted (the launcher stopped between the last action and the page's submit)
    still needs a server: its page registers again and submits there, or the worker is never paid. Then
    the launch goes on, says so, hands out no new work, and ends once those pages submitted."""
    from parlai_acute.mephisto_tasks.live.sessions import unsubmitted_work

    waiting = unsubmitted_work(db, task_name, runner_class)
    if not waiting:
        print(f"task {task_name!r}: {why}", flush=True)
        return True
    print(f"task {task_name!r}: {waiting} finished assignment{'s were' if waiting > 1 else ' was'} not submitted "
          f"yet: serving {'them' if waiting > 1 else 'it'} so {'their pages' if waiting > 1 else 'its page'} "
          f"can submit; no new work", flush=True)
    return False


def check_architect(cfg) -> None:
    """For the local architect: a valid, free port (before anything is created)."""
    from parlai_acute.mephisto_tasks.live import setup

    if is_local(cfg):
        arch = cfg.mephisto.architect
        arch.port = str(check_port_number(arch.get("port", 3000)))
        setup.check_port_free(arch.hostname, arch.port)


def worker_url(cfg, worker: str = "worker1", assignment: str = "1") -> str:
    """Mock-provider address of one unit attempt, for a person to open."""
    arch = cfg.mephisto.architect
    host = str(arch.get("hostname", "localhost"))
    if "://" not in host:
        host = "http://" + host
    return f"{host}:{arch.get('port', 3000)}/?worker_id={worker}&assignment_id={assignment}"


def announce(what: str, cfg, how: str = "any worker_id; a new assignment_id for each unit",
             assignment: str = "1") -> None:
    """What a launch prints once its task serves: ``what`` (the task and the work it collects), then,
    for a local run with the mock provider, the address a person opens -- last, on a line of its own,
    easy to copy (``how``: which ids to use)."""
    print(what, flush=True)
    if is_local(cfg) and cfg.mephisto.provider.get("_provider_type") == "mock":
        print(f"Open this address in a browser ({how}); Ctrl-C stops the task:")
        print(worker_url(cfg, assignment=assignment), flush=True)


@contextlib.contextmanager
def _router_output_hidden(hidden: bool):
    """While the task launches (when the router process starts, inheriting our stdout), point file
    descriptor 1 at /dev/null: the router's lines ("Client connected", ...) go nowhere unless
    ``--verbose``. Python's own stdout is restored right after."""
    import os
    import sys

    if not hidden:
        yield
        return
    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _first_unit_launched(operator, patience: float = 60.0) -> None:
    """Wait (at most ``patience`` seconds) until each run launched a unit -- Mephisto launches them in
    a thread after the run starts -- so the address printed next can be opened at once."""
    import time

    from mephisto.data_model.constants.assignment_state import AssignmentState

    launchers = [run.task_launcher for run in operator.get_running_task_runs().values()]
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline and not all(
            launcher.finished_generators or any(u.get_status() == AssignmentState.LAUNCHED
                                                for u in list(launcher.launched_units.values()))
            for launcher in launchers):
        time.sleep(0.05)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


#: seconds Mephisto's own shutdown may take before the launcher stops the router and exits anyway
SHUTDOWN_GRACE_S = 45.0


def serve(operator) -> bool:
    """Run the operator's loop until its runs finish (-> False) or SIGTERM/Ctrl-C (-> True).

    While serving, SIGINT and SIGTERM stop the loop between two of its callbacks (asyncio's
    signal handlers) instead of raising inside whatever Mephisto code happens to run, which
    could leave a lock or a half-done database write behind and hang the shutdown.
    """
    loop = operator._event_loop
    asyncio.set_event_loop(loop)
    operator._stop_task = loop.create_task(operator._stop_loop_when_no_running_tasks(log_rate=300))
    signalled = []
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, lambda sig=sig: (signalled.append(sig), loop.stop()))
            installed.append(sig)
        except (RuntimeError, ValueError):  # not the main thread: the KeyboardInterrupt path below
            break
    try:
        loop.run_forever()
        return bool(signalled)
    except KeyboardInterrupt:
        return True
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        signal.signal(signal.SIGTERM, _raise_interrupt)


@contextlib.contextmanager
def shutdown_deadline(architects, seconds: float = SHUTDOWN_GRACE_S, *, interrupted: bool = True):
    """Bound the stop: if Mephisto's shutdown has not returned after ``seconds``, stop the router,
    say so and exit (every action was stored when it arrived, so nothing is lost): 130 after a
    signal, as a stopped command reports it, else 1 (a run that ended by itself did not finish cleanly)."""
    import os
    import sys
    import threading

    from parlai_acute.mephisto_tasks.live import setup

    def give_up():
        setup.stop_server_processes(architects)
        print(f"parlai-acute: Mephisto's shutdown did not finish in {seconds:g} s; stopped the router "
              "and exited (all answers were already stored)", file=sys.__stderr__, flush=True)
        os._exit(130 if interrupted else 1)

    timer = threading.Timer(seconds, give_up)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@contextlib.contextmanager
def quiet_shutdown(loop):
    """While stopping, Mephisto's channels see the router go away and print a traceback per socket
    (``ConnectionClosedError``, ``KeyError: 'local_channel_1_0'``, "Unhandled OSError") and a progress
    bar of expired units: expected, so hidden (logging, asyncio's handler and stderr alike)."""
    import io
    import sys

    previous_level = logging.root.manager.disable
    previous_handler = loop.get_exception_handler() if loop is not None else None
    logging.disable(logging.ERROR)
    if loop is not None:
        loop.set_exception_handler(lambda _loop, _context: None)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(previous_level)
        if loop is not None:
            loop.set_exception_handler(previous_handler)
        sys.stderr.flush()


def stop(operator, interrupted: bool) -> None:
    """Shut Mephisto down without its interactive waits (everything is already stored)."""
    task, operator._stop_task = operator._stop_task, None
    if task is not None and not task.done():
        task.cancel()
    with quiet_shutdown(getattr(operator, "_event_loop", None)), contextlib.suppress(RuntimeError):
        if interrupted:  # Mephisto stops its loop from inside its own tasks: RuntimeError is expected
            operator.force_shutdown(timeout=5)
        else:
            operator.shutdown()


def run_task(cfg, shared_state, *, data_dir: str | None, db=None,
             on_started: Callable[[], None] = lambda: None, verbose: bool = False) -> str:
    """Launch the configured task and serve it until done or stopped; returns the data directory.

    ``db``: the task's Mephisto database if already open. ``on_started`` runs once the task
    serves and its first unit is launched (print the address there: :func:`announce`). SIGTERM and
    Ctrl-C stop the run cleanly; the router process is stopped in every case. Without ``verbose``,
    Mephisto logs warnings and errors only, and its router's output is not shown.
    """
    from parlai_acute.mephisto_tasks.live import setup

    db = db if db is not None else setup.open_db(data_dir)
    root = setup.configure_data_dir(data_dir)
    if cfg.mephisto.provider.get("_provider_type") == "mock" and not cfg.mephisto.provider.get("requester_name"):
        cfg.mephisto.provider.requester_name = setup.ensure_mock_requester(db)
    if is_local(cfg) and not cfg.mephisto.architect.get("server_source_path"):
        cfg.mephisto.architect.server_source_path = setup.router_source()

    from mephisto.operations.operator import Operator
    from mephisto.tools.scripts import augment_config_from_db

    if not verbose and cfg.mephisto.get("log_level", "info") == "info":  # Mephisto's default: ours is quieter
        cfg.mephisto.log_level = "warning"
    if not verbose:  # the `sh` package logs each command Mephisto's architect runs (rm -rf ...) at INFO
        logging.getLogger("sh").setLevel(logging.WARNING)
    cfg = augment_config_from_db(cfg, db)
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    previous = logging.root.manager.disable
    if not verbose:  # Operator() says once that Prometheus is not installed (we never use it)
        logging.disable(logging.WARNING)
    try:
        operator = Operator(db)
    finally:
        logging.disable(previous)
    architects, interrupted = [], True
    try:
        with _router_output_hidden(not verbose):
            operator.launch_task_run_or_die(cfg.mephisto, shared_state=shared_state)
        architects = setup.local_architects(operator)
        _first_unit_launched(operator)
        on_started()
        interrupted = serve(operator)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish cleanup even if signalled again
        try:
            with shutdown_deadline(architects, interrupted=interrupted):
                stop(operator, interrupted)
        finally:
            setup.stop_server_processes(architects)
        signal.signal(signal.SIGTERM, old_term)
    return root

