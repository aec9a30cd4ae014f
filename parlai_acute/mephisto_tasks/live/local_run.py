"""Run a ``parlai-acute ... launch`` command as a subprocess on this machine (demos, tests, benchmarks).

The launcher runs exactly as a user runs it, with the real local architect (Node router),
the mock provider and a Mephisto database in ``data_dir`` (``PARLAI_ACUTE_MEPHISTO_DATA``),
so ``~/.mephisto`` is never touched.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch_cmd(*args: str, group: str = "acute") -> list[str]:
    """``parlai-acute GROUP launch ARGS`` with this interpreter."""
    return [sys.executable, "-m", "parlai_acute.scripts.main", group, "launch", *args]


class LocalRun:
    """``parlai-acute GROUP launch`` as a subprocess, with its log in a file.

    ``args`` are the command's options and Hydra overrides; the port and task name are added.
    """

    def __init__(self, data_dir: Path, args: list[str], port: int, log: Path, *, group: str = "acute",
                 task_name: str = "acute_test", env: dict | None = None):
        self.port, self.log_path, self.data_dir, self.task_name = port, log, data_dir, task_name
        env = dict(os.environ, PARLAI_ACUTE_MEPHISTO_DATA=str(data_dir), PYTHONUNBUFFERED="1", **(env or {}))
        self._log = open(log, "w")
        self.proc = subprocess.Popen(
            launch_cmd(*args, f"mephisto.architect.port={port}", f"mephisto.task.task_name={task_name}", group=group),
            stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    @classmethod
    def acute(cls, data_dir: Path, pairings: Path, port: int, log: Path, *overrides: str,
              task_name: str = "acute_test") -> "LocalRun":
        """``parlai-acute acute launch --pairings PAIRINGS OVERRIDES``."""
        return cls(data_dir, ["--pairings", str(pairings), *overrides], port, log, task_name=task_name)

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def address(self) -> str | None:
        """The address the launcher printed for a person to open (its line of its own), once printed."""
        return next((line for line in self.log().splitlines() if line.startswith("http://")), None)

    def wait_ready(self, timeout: float = 240) -> None:
        """Until the launcher printed the address: it does once the task serves a launched unit."""
        end = time.time() + timeout
        while time.time() < end:
            text = self.log()
            if self.address():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"launcher exited early ({self.proc.returncode}):\n{text[-3000:]}")
            time.sleep(0.3)
        raise AssertionError(f"launcher not ready after {timeout}s:\n{self.log()[-3000:]}")

    def node_pids(self) -> list[int]:
        out = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(self.proc.pid)], capture_output=True, text=True)
        return [int(line.split()[0]) for line in out.stdout.splitlines() if line.split()[1:] == ["node"]]

    def wait_exit(self, timeout: float = 90) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self._log.close()

    def terminate(self, timeout: float = 90) -> int:
        """SIGTERM to the launcher process only (not its group): what a process manager sends."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit(timeout)

    def kill_all(self) -> None:
        """Cleanup (tests, demos): stop whatever is left of the launcher's session."""
        for pid in self.node_pids():
            _kill(pid)
        if self.proc.poll() is None:
            _kill(self.proc.pid)
            self.proc.wait(timeout=30)
        if not self._log.closed:
            self._log.close()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


