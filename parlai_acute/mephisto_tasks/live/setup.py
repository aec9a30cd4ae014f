"""Make Mephisto 1.1.1 run unattended: data directory, mock requester, Node router, port, child process.

Out of the box Mephisto prompts for a data directory (and fails without a terminal), needs
``mephisto register mock`` by hand, runs ``npm install`` inside site-packages at every
launch, and leaves its ``node server.js`` child running when the launcher gets SIGTERM.
Each helper here fixes one of those, idempotently.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import parlai_acute  # noqa: F401  (compat fixes before mephisto)
from parlai_acute.errors import UserError

DATA_ENV = "PARLAI_ACUTE_MEPHISTO_DATA"
CACHE_ENV = "PARLAI_ACUTE_CACHE"
MOCK_REQUESTER = "parlai_acute_mock"


def configure_data_dir(data_dir: str | os.PathLike | None = None, create: bool = True) -> str:
    """Choose Mephisto's data directory without prompting; return it.

    Order: ``data_dir``, then ``$PARLAI_ACUTE_MEPHISTO_DATA`` (both leave ~/.mephisto alone:
    tests use them), then ``main_data_directory`` of ``~/.mephisto/config.yml``; when that is
    unset it is written there as ``~/.mephisto/data`` (what Mephisto's own prompt would do).
    With ``create=False`` (reading a stored run) nothing is written or created, not even
    ``~/.mephisto``: an unconfigured directory, or one without a database, is a UserError.
    """
    if not create:
        return _existing_data_dir(data_dir)
    from mephisto.operations import config_handler
    from mephisto.utils import dirs

    chosen = data_dir or os.environ.get(DATA_ENV)
    if not chosen:
        config_handler.init_config()
        chosen = config_handler.get_config_arg(config_handler.CORE_SECTION, config_handler.DATA_STORAGE_KEY)
        if not chosen:
            chosen = str(Path(config_handler.DEFAULT_CONFIG_FOLDER) / "data")
            config_handler.add_config_arg(config_handler.CORE_SECTION, config_handler.DATA_STORAGE_KEY, chosen)
    chosen = str(Path(chosen).expanduser().resolve())
    try:
        os.makedirs(chosen, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the Mephisto data directory {chosen}: {exc.strerror}; "
                        f"pass data_dir=DIR or set {DATA_ENV}", param="data_dir") from None
    dirs.loaded_data_dir = chosen
    return chosen


def open_db(data_dir: str | None = None, create: bool = True):
    """The Mephisto database of ``data_dir`` (configured as by :func:`configure_data_dir`;
    ``create=False``: an existing database only, and nothing is created)."""
    root = configure_data_dir(data_dir, create)
    with no_mephisto_config_written():
        from mephisto.abstractions.databases.local_database import LocalMephistoDB

    return LocalMephistoDB(database_path=os.path.join(root, "database.db"))


def _mephisto_config_file() -> Path:
    return Path(os.path.expanduser("~/.mephisto/config.yml"))  # Mephisto's DEFAULT_CONFIG_FILE


@contextlib.contextmanager
def no_mephisto_config_written():
    """Import Mephisto inside this block to undo its import-time side effect:
    ``import mephisto`` writes ``~/.mephisto/config.yml`` (``core: {}``) when it is absent."""
    config = _mephisto_config_file()
    existed, folder_existed = config.exists(), config.parent.exists()
    try:
        yield
    finally:
        if not existed and config.exists():
            with contextlib.suppress(OSError):
                config.unlink()
                if not folder_existed:
                    config.parent.rmdir()


def _existing_data_dir(data_dir) -> str:
    """The configured data directory holding a database.db, found without writing anything."""
    chosen = data_dir or os.environ.get(DATA_ENV)
    if not chosen:
        import yaml

        config = _mephisto_config_file()
        with contextlib.suppress(OSError, yaml.YAMLError, AttributeError):
            chosen = (yaml.safe_load(config.read_text()) or {}).get("core", {}).get("main_data_directory")
        if not chosen:
            raise UserError(f"Mephisto has no data directory configured (no main_data_directory in {config}); "
                            f"pass mephisto_db=DIR/database.db or set {DATA_ENV}=DIR", param="mephisto_db")
    chosen = str(Path(chosen).expanduser().resolve())
    if not Path(chosen, "database.db").is_file():
        raise UserError(f"there is no Mephisto database in {chosen} (no database.db); pass the data directory "
                        f"a task was launched with (mephisto_db=DIR/database.db or {DATA_ENV}=DIR)",
                        param="mephisto_db")
    with no_mephisto_config_written():
        from mephisto.utils import dirs
    dirs.loaded_data_dir = chosen
    return chosen


def ensure_mock_requester(db, name: str = MOCK_REQUESTER) -> str:
    """A registered mock requester (what ``mephisto register mock name=...`` makes); returns its name."""
    from mephisto.abstractions.providers.mock.mock_requester import MockRequester

    found = db.find_requesters(provider_type="mock")
    requester = found[0] if found else MockRequester.new(db, name)
    if not requester.is_registered():
        requester.register()
    return requester.requester_name


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "parlai_acute"))


# Exact text of Mephisto 1.1.1's server.js -> fix. Its send callback treats only `undefined` as
# success, but the pinned ws 5.2.3 reports success as `null`: every packet (worker registrations,
# judgments, replies) was sent a second time 500 ms later. Duplicated registrations raced the
# originals under load and answered some workers "You appear to have already completed this task".
#
# The last patch is a watchdog: Mephisto starts the router in its own process group, so it
# outlived a launcher killed with SIGKILL (no ``finally`` runs then). The router now exits
# within a second of its parent's death (Node's ``process.ppid`` is read live; an orphan is
# re-parented).
ROUTER_WATCHDOG = (
    "// parlai_acute: exit when the process that started this router is gone (even after SIGKILL)\n"
    "const PARENT_PID = process.ppid;\n"
    "setInterval(function () { if (process.ppid !== PARENT_PID) { process.exit(0); } }, 1000).unref();\n"
)
ROUTER_PATCHES = [
    ("    if (error === undefined) {\n", "    if (error === undefined || error === null) {\n"),
    ("        if (error2 === undefined) {\n", "        if (error2 === undefined || error2 === null) {\n"),
    ("const PORT = process.env.PORT || 3000;\n", "const PORT = process.env.PORT || 3000;\n" + ROUTER_WATCHDOG),
]


def patch_router(server_js: Path) -> None:
    """Apply :data:`ROUTER_PATCHES` to a copy of Mephisto's router (never to the installed one)."""
    text = server_js.read_text()
    for old, new in ROUTER_PATCHES:
        if old not in text:
            raise UserError(f"Mephisto's router {server_js} differs from the pinned 1.1.1 one; reinstall with "
                            f"`make install`")
        text = text.replace(old, new)
    server_js.write_text(text)


def router_source() -> str:
    """Mephisto's Node router with its npm packages installed once, outside site-packages.

    Passed as ``mephisto.architect.server_source_path`` so the local architect copies it
    instead of running ``npm install`` in the installed package at every launch. Installed
    with ``npm ci`` from the package-lock.json that Mephisto ships; :data:`ROUTER_PATCHES`
    applied. MTurk/Heroku architects build their own router and do not use this copy.
    """
    from mephisto.abstractions.architects.router import build_router

    source = Path(build_router.NODE_SERVER_SOURCE_ROOT)
    digest = hashlib.sha1((source / "package-lock.json").read_bytes() + (source / "server.js").read_bytes()
                          + repr(ROUTER_PATCHES).encode()).hexdigest()[:10]
    target = cache_dir() / f"mephisto-router-{digest}"
    marker = target / ".installed"
    if marker.exists():
        return str(target)
    if shutil.which("npm") is None:
        raise UserError("npm is not installed; the local Mephisto architect needs Node.js and npm "
                        "(Debian: apt-get install nodejs npm)")
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns("node_modules"))
    patch_router(tmp / "server.js")
    result = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=tmp,
                            capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        last = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise UserError(f"npm could not install Mephisto's router packages ({last}); check access to the "
                        f"npm registry and retry")
    (tmp / ".installed").write_text("ok\n")
    with contextlib.suppress(OSError):
        os.rename(tmp, target)  # another launcher may have won the race: then use theirs
    shutil.rmtree(tmp, ignore_errors=True)
    return str(target)


def check_port_free(host: str, port: int | str) -> None:
    """Fail with a one-line UserError if ``host:port`` is taken (before anything is created)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Node does: TIME_WAIT is not "taken"
        try:
            sock.bind(("127.0.0.1" if host in ("localhost", "") else host, int(port)))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UserError(f"port {port} on {host} is already in use; choose another with "
                                f"mephisto.architect.port=PORT (or stop what is using it)") from None
            raise UserError(f"cannot listen on {host}:{port} ({exc.strerror}); set mephisto.architect.hostname "
                            f"and mephisto.architect.port") from None


def local_architects(operator) -> list:
    """The architects of ``operator``'s runs; take them right after launch (shutdown forgets runs)."""
    return [live_run.architect for live_run in operator.get_running_task_runs().values()]


def stop_server_processes(architects) -> list[int]:
    """Terminate the router processes of local ``architects`` (and their process groups).

    Mephisto starts ``node server.js`` in its own process group, so a signal to the launcher
    never reaches it; this is called from the launcher's ``finally``. Returns the pids stopped.
    """
    stopped = []
    for architect in architects:
        proc = getattr(architect, "server_process", None)
        if proc is None or proc.poll() is not None:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        stopped.append(proc.pid)
    return stopped
