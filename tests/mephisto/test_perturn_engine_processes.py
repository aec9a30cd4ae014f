"""The per-turn task's llama.cpp engine processes (one per engine, :class:`ProcessEngine`) end with
the task: stopped by Ctrl-C (SIGINT) or by a process manager (SIGTERM), none is left behind."""
from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from parlai_acute.mephisto_tasks.local_run import pid_alive

SMOL = "parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 16"


def engine_pids(parent: int) -> list[int]:
    """The launcher's children running an engine (``python -m parlai_acute.agents.llama_engine``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"parlai_acute.agents.llama_engine" in cmdline:
            pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_engine_processes_end_with_the_task(launch_per_turn, stop):
    task = launch_per_turn("--model", f"greedy={SMOL} --inference greedy",
                           "--model", f"sampled={SMOL} --inference sample",
                           "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1")
    task.wait_ready()
    engines = engine_pids(task.proc.pid)
    assert len(engines) == 2, task.log()[-2000:]  # two configurations on a 2-core plan: two engine processes
    task.proc.send_signal(stop)  # to the launcher only, as a process manager or a terminal's Ctrl-C does
    task.wait_exit(timeout=120)
    deadline = time.time() + 15
    while any(pid_alive(pid) for pid in engines) and time.time() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in engines if pid_alive(pid)], "an engine process outlived the task"
