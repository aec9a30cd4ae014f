"""Compatibility fixes for frozen upstream packages (parlai 1.7.2, mephisto 1.1.1).

Every fix lives here, is as narrow as possible, and is installed by ``import parlai_acute``.
Installed packages are never edited on disk. Each fix has a test in
``tests/test_compat.py`` that fails without it.

Fixes:

``mephisto-dataclass-defaults``
    ``mephisto/operations/hydra_config.py`` gives dataclass fields instance defaults
    (``task: TaskRunArgs = TaskRunArgs()``). Python 3.11 rejects unhashable instance
    defaults with ``ValueError: mutable default ... use default_factory``, so
    ``import mephisto.operations.operator`` fails. We rewrite exactly those three lines to
    ``field(default_factory=...)`` while the module is loaded (an import hook that patches
    the module's source text, compiled under its real file name so tracebacks stay true).
    Hydra's structured configs treat both spellings the same.

``parlai-conversations-atomic``
    ``parlai.utils.conversations.Conversations.save_conversations`` (used by ``parlai
    interactive --outfile``, ``parlai self_chat`` and every world logger) writes
    ``.jsonl`` and ``.metadata`` in place: an interrupted or failing run leaves a truncated
    log that reads as complete. Right after that module is imported we replace the method
    with :func:`parlai_acute.worlds.conversations_log.save_conversations`, which lets the
    original write into a staging directory and renames the finished files (metadata
    first, the ``.jsonl`` last). The original stays available as
    ``Conversations._parlai_save_conversations``.

``mephisto-local-server-dir``
    Mephisto's ``LocalArchitect.deploy`` copies the router to
    ``site-packages/tmp/local_server_<task_run_id>/server``: one directory for every data
    directory on the machine, keyed by a run id that restarts at 1 in each database, so a
    second launch (another data dir, a test, a benchmark, a leftover of a killed run) fails
    with ``FileExistsError`` or shares the first one's files. We put it beside the run's own
    build directory (``<data dir>/data/runs/.../<run id>/local_server/server``) instead.

``mephisto-single-log-lines``
    ``mephisto.utils.logger_core.get_logger`` gives every Mephisto logger its own Rich
    handler *and* installs the same kind of handler on the root logger, so every Mephisto log
    line was printed twice. Loggers it returns no longer propagate to the root (their own
    handler prints them once).

``mephisto-metrics-port``
    ``Operator()`` always starts a Prometheus metrics endpoint on port 3031; a second launcher
    on the machine (two tasks, a test beside a demo) logs a 40-line traceback, twice. We never
    use it: the operator's ``start_metrics_server`` starts it only when port 3031 is free.

``mephisto-live-updates-off-loop``
    ``ClientIOHandler`` hands every packet from the router's socket thread to the operator's
    event loop, which also registers arriving workers with blocking database calls
    (``TaskRun.get_units`` builds every unit of the run, per registration). A worker's action
    (a ``mephisto_bound_live_update``) waited behind them: with 200 workers arriving, a
    judgment took up to 0.5 s to reach its unit. Handling that packet needs no loop (a
    duplicate check, a queue put, an event set), so we handle it where it arrives, in the
    socket thread, in arrival order; every other packet still goes through the loop. An error
    is logged as the loop's handler logs it (raising would restart the router socket).

``mephisto-prints-as-log-lines``
    ``MockUnit.launch`` prints "Mock task launched: ..." for every unit (beside the same INFO log
    line) and ``LocalArchitect.deploy`` prints the router's pid, straight to stdout, so a launch's
    own lines (the worker address) drown and no log level hides them. In those two modules
    ``print`` becomes a DEBUG log line (the unit's INFO line stays, so ``launch --verbose``, which
    shows Mephisto's INFO lines, still says each unit once).

``mephisto-worker-get-or-create``
    ``WorkerPool.register_worker`` looks a worker up by name and creates it when none is found, in
    two separate executor calls: two first registrations of a brand-new worker at the same instant
    (two assignments opened together, two browsers) both find none, the second insert hits the
    ``workers.worker_name`` UNIQUE constraint, and its coroutine dies with
    ``EntryAlreadyExistsException``: that page's ``/request_agent`` is never answered (the router
    has no timeout). ``Worker._register_worker`` (every provider's ``new`` goes through it) now
    gets or creates: when the row exists already it returns that worker (of the same provider),
    so both registrations are answered and one worker row exists (the live race, with and without
    the fix: ``tests/mephisto/test_new_worker_race.py``).

``pkg_resources-warning``
    ``parlai.core.opt`` imports ``pkg_resources``, which setuptools 80 deprecates with a
    UserWarning printed on every ParlAI start. We silence only that warning.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

# module name -> list of (exact upstream text, replacement)
SOURCE_PATCHES: dict[str, list[tuple[str, str]]] = {
    "mephisto.operations.hydra_config": [
        ("    task: TaskRunArgs = TaskRunArgs()\n",
         "    task: TaskRunArgs = field(default_factory=TaskRunArgs)\n"),
        ("    database: DatabaseArgs = DatabaseArgs()\n",
         "    database: DatabaseArgs = field(default_factory=DatabaseArgs)\n"),
        ("    mephisto: MephistoConfig = MephistoConfig()\n",
         "    mephisto: MephistoConfig = field(default_factory=MephistoConfig)\n"),
    ],
    "mephisto.abstractions.architects.local_architect": [
        ('            get_mephisto_tmp_dir(), f"local_server_{self.task_run_id}", "server"\n',
         '            os.path.dirname(os.path.abspath(self.build_dir)), "local_server", "server"\n'),
    ],
}


# module name -> "module:function" called with the module right after it is executed
# (or at install() if it was imported before parlai_acute, e.g. by the `parlai` script)
POST_IMPORT_FIXES: dict[str, str] = {
    "parlai.utils.conversations": "parlai_acute.worlds.conversations_log:make_atomic",
    "mephisto.utils.logger_core": "parlai_acute.compat:single_log_lines",
    "mephisto.operations.operator": "parlai_acute.compat:quiet_metrics_server",
    "mephisto.operations.client_io_handler": "parlai_acute.compat:live_updates_off_loop",
    "mephisto.abstractions.providers.mock.mock_unit": "parlai_acute.compat:prints_as_debug_lines",
    "mephisto.abstractions.architects.local_architect": "parlai_acute.compat:prints_as_debug_lines",
    "mephisto.data_model.worker": "parlai_acute.compat:worker_get_or_create",
}


def single_log_lines(logger_core) -> None:
    """``mephisto-single-log-lines`` (see the module docstring)."""
    original = logger_core.get_logger

    def get_logger(*args, **kwargs):
        logger = original(*args, **kwargs)
        logger.propagate = False
        return logger

    get_logger.__wrapped__ = original
    logger_core.get_logger = get_logger
    for logger in logger_core.loggers.values():
        logger.propagate = False


def worker_get_or_create(worker_module) -> None:
    """``mephisto-worker-get-or-create`` (see the module docstring)."""
    worker_class = worker_module.Worker
    original = worker_class.__dict__["_register_worker"].__func__

    def _register_worker(db, worker_name: str, provider_type: str):
        # read from the loaded module, not imported: the worker module is loaded while
        # mephisto.abstractions.database is half-initialised, and importing Mephisto here would put it
        # on the import path of every module that imports parlai_acute (the statistics must not reach it)
        EntryAlreadyExistsException = sys.modules["mephisto.abstractions.database"].EntryAlreadyExistsException

        try:
            return original(db, worker_name, provider_type)
        except EntryAlreadyExistsException:  # made at the same instant by another registration
            found = db.find_workers(worker_name=worker_name, provider_type=provider_type)
            if not found:  # the name is taken under another provider: upstream's error stands
                raise
            return found[0]

    _register_worker.__wrapped__ = original
    worker_class._register_worker = staticmethod(_register_worker)


def prints_as_debug_lines(module) -> None:
    """``mephisto-prints-as-log-lines`` (see the module docstring): the module's ``print`` to stdout
    becomes a DEBUG line of its logger; a print to another file is left alone."""
    import builtins
    import logging

    logger = getattr(module, "logger", None) or logging.getLogger(module.__name__)

    def print(*args, sep=" ", end="\n", file=None, flush=False):  # noqa: A001 -- the module's own print
        if file is not None and file is not sys.stdout:
            return builtins.print(*args, sep=sep, end=end, file=file, flush=flush)
        logger.debug((sep or " ").join(str(a) for a in args))

    module.print = print


def quiet_metrics_server(operator_module) -> None:
    """``mephisto-metrics-port`` (see the module docstring)."""
    import socket

    original = operator_module.start_metrics_server

    def start_metrics_server(*args, **kwargs):
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("", 3031))
            except OSError:
                return None
        return original(*args, **kwargs)

    start_metrics_server.__wrapped__ = original
    operator_module.start_metrics_server = start_metrics_server


def live_updates_off_loop(client_io_handler) -> None:
    """``mephisto-live-updates-off-loop`` (see the module docstring)."""
    live_update = client_io_handler.PACKET_TYPE_MEPHISTO_BOUND_LIVE_UPDATE  # the module's own name for it
    handler_class = client_io_handler.ClientIOHandler
    original = handler_class._on_channel_message

    def _on_channel_message(self, channel_id, packet):
        if packet.type != live_update:
            return original(self, channel_id, packet)
        try:
            self._on_message(packet, channel_id)
        except Exception:
            client_io_handler.logger.exception(f"Channel {channel_id} encountered error on packet {packet}")

    _on_channel_message.__wrapped__ = original
    handler_class._on_channel_message = _on_channel_message


class CompatError(RuntimeError):
    """An upstream file no longer looks like the one a fix was written for."""


class _PatchedSourceLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from its real file with exact text replacements applied."""

    def __init__(self, fullname: str, path: str, patches: list[tuple[str, str]]):
        super().__init__(fullname, path)
        self._patches = patches

    def get_data(self, path):  # noqa: D401 - importlib API
        data = super().get_data(path)
        if not path.endswith(".py"):
            # refuse cached bytecode of the unpatched source; compile from text
            raise OSError("parlai_acute.compat compiles patched modules from source")
        text = data.decode("utf-8")
        for old, new in self._patches:
            if old not in text:
                raise CompatError(
                    f"{self.name}: expected upstream text {old.strip()!r} not found; "
                    "the installed version differs from the pinned one (reinstall with `make install`)"
                )
            text = text.replace(old, new)
        return text.encode("utf-8")

    def set_data(self, *args, **kwargs):
        """Never write patched bytecode into site-packages."""


def _run_post_import_fix(module) -> None:
    target = POST_IMPORT_FIXES.get(module.__name__)
    if target:
        fix_module, _, function = target.partition(":")
        getattr(importlib.import_module(fix_module), function)(module)


class _PostImportLoader(importlib.abc.Loader):
    """Executes a module with its own loader, then applies its fix."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _run_post_import_fix(module)

    def __getattr__(self, name):  # get_source, is_package, ... of the real loader
        return getattr(self._loader, name)


class _SourcePatchFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        patches = SOURCE_PATCHES.get(fullname)
        if patches is None and fullname not in POST_IMPORT_FIXES:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        if patches is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _PatchedSourceLoader(fullname, spec.origin, patches)
            spec.cached = None
        if fullname in POST_IMPORT_FIXES:  # a module may have both: its source patched, then the fix
            spec.loader = _PostImportLoader(spec.loader)
        return spec


_FINDER = _SourcePatchFinder()


def install() -> None:
    """Install every fix (idempotent). Called by ``import parlai_acute``."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    for name in POST_IMPORT_FIXES:
        if name in sys.modules:  # imported before parlai_acute (the `parlai` console script)
            _run_post_import_fix(sys.modules[name])
    warnings.filterwarnings("ignore", message="pkg_resources is deprecated", category=UserWarning)


def uninstall() -> None:
    """Remove the import hook (tests use this to show the defect it fixes)."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
