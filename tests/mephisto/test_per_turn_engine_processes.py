"""The per-turn task's llama.cpp engine processes (one per engine, :class:`ProcessEngine`) end with
the task: stopped by Ctrl-C (SIGINT) or by a process manager (SIGTERM), none is left behind; one killed
under a running task is replaced and the task goes on."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from parlai_acute.mephisto_tasks.live.local_run import pid_alive

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


def test_a_crashed_engine_process_is_restarted_mid_task_and_the_operator_is_told(launch_per_turn):
    """The task survives an engine killed under it: the next turn's candidates come from a new process
    of that model (every model answers), and the task's output says so in one line."""
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    task = launch_per_turn("--model", f"greedy={SMOL} --inference greedy",
                           "--model", f"sampled={SMOL} --inference sample",
                           "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1")
    task.wait_ready()
    engines = engine_pids(task.proc.pid)
    assert len(engines) == 2, task.log()[-2000:]
    killed = engines[0]
    os.kill(killed, signal.SIGKILL)

    async def one_turn():
        client = pw.Client(task.url, "kai", "k1")
        assert await client.open() == ""
        view = await client.send({"type": "message", "text": "Hi! What do you like to cook?"})
        await client.close()
        return view

    view = pw.run_sync(one_turn)
    assert view["error"] is None and view["failed"] == 0 and len(view["candidates"]) == 2, view
    now = engine_pids(task.proc.pid)
    assert len(now) == 2 and killed not in now and engines[1] in now  # the other model's process untouched
    lines = [line for line in task.log().splitlines() if "restarted it as pid" in line]
    assert len(lines) == 1 and f"(pid {killed}) was killed by SIGKILL" in lines[0], task.log()[-2000:]
    assert f"restarted it as pid {(set(now) - {engines[1]}).pop()}" in lines[0]
