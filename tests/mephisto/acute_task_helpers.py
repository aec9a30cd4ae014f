"""Helpers for the ACUTE-Eval Mephisto task tests: pairings files, free ports, a launcher subprocess.

The launcher runs exactly as a user runs it (``python -m parlai_acute.scripts.main acute launch``),
with the real local architect (Node router), the mock provider and a Mephisto database in a
tmp data directory (``PARLAI_ACUTE_MEPHISTO_DATA``), so ``~/.mephisto`` is never touched.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

XSS = "<script>window.__pwned=1</script><b>x</b>"


def dialogue(did: str, model: str, texts: list[str]) -> dict:
    turns = [{"id": model if k % 2 else "other_speaker", "text": t} for k, t in enumerate(texts)]
    return {"id": did, "speakers": ["other_speaker", model], "dialogue": turns}


def make_pairings(n_regular: int, xss_in: int | None = 0) -> list[dict]:
    """One onboarding pair (good_bot must win) and ``n_regular`` model_a vs model_b pairs.

    model_a's turns contain "A-line", model_b's "B-line", so a simulated worker can pick a
    model from the text alone (as a person does: the page never shows model names).
    """
    lines = [{"is_onboarding": True, "speakers_to_eval": ["good_bot", "bad_bot"], "correct_answer": "good_bot",
              "dialogue_dicts": [
                  dialogue("gold-good", "good_bot", ["Hi! How are you?", "Great, I just got back from a hike. Do you hike?",
                                                     "Sometimes.", "Which trail do you like best?"]),
                  dialogue("gold-bad", "bad_bot", ["Hi! How are you?", "i i i i", "What?", "i i i"])]}]
    for n in range(n_regular):
        a_last = XSS if n == xss_in else f"A-line closing {n}"
        lines.append({"is_onboarding": False, "speakers_to_eval": ["model_a", "model_b"],
                      "dialogue_ids": [f"a{n}", f"b{n}"],
                      "dialogue_dicts": [
                          dialogue(f"a{n}", "model_a", [f"Hello {n}", f"A-line hi {n}", "ok", a_last]),
                          dialogue(f"b{n}", "model_b", [f"Hello {n}", f"B-line hi {n}", "ok", f"B-line bye {n}"])]})
    return lines


def write_pairings(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "parlai_acute.scripts.main", "acute", "launch", *args]


class Launcher:
    """``parlai-acute acute launch`` as a subprocess, with its log in a file."""

    def __init__(self, data_dir: Path, pairings: Path, port: int, log: Path, *overrides: str,
                 task_name: str = "acute_test"):
        self.port, self.log_path, self.data_dir, self.task_name = port, log, data_dir, task_name
        env = dict(os.environ, PARLAI_ACUTE_MEPHISTO_DATA=str(data_dir), PYTHONUNBUFFERED="1")
        self._log = open(log, "w")
        self.proc = subprocess.Popen(
            launch_cmd("--pairings", str(pairings), f"mephisto.architect.port={port}",
                       f"mephisto.task.task_name={task_name}", *overrides),
            stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 240) -> None:
        end = time.time() + timeout
        while time.time() < end:
            text = self.log()
            if "Open http" in text and "Mock task launched" in text:
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
        """Test cleanup only: whatever is left of the launcher's session."""
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


