"""The per-turn task under stress: what the server enforces, stopping and relaunching, workers who
leave, a model server that dies, and bad input. Nothing lost, nothing hangs, nothing left behind."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from per_turn_task_helpers import GENERIC, careful, stored, write

from parlai_acute.mephisto_tasks.live.browser import HEARTBEAT_S
from parlai_acute.mephisto_tasks.live.local_run import free_port, launch_cmd, pid_alive
from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
from parlai_acute.mephisto_tasks.per_turn import simulated_workers as sw
from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

OTHER = "other_bot=parlai_acute.agents.generic_bot:GenericBotAgent"  # a second (cheap) model name


def first(view) -> Choice:
    return careful(view) if view["status"] == "onboarding" else Choice(picked=[0])


def test_the_server_enforces_the_protocol_whatever_a_client_sends(tmp_path, launch_per_turn):
    task = launch_per_turn("--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=2",
                           "mephisto.blueprint.max_turns=2", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=1")
    task.wait_ready()

    async def client():
        c = pw.Client(task.url, "pushy", "p1")
        assert await c.open() == ""
        await asyncio.sleep(2 * HEARTBEAT_S)  # open, as a page: heartbeats and an ownership ping at least
        refused = [(await c.send({"type": "finish"}))["error"]]  # before the minimum number of turns
        assert c.pings >= 1 and c.owner is not None and c.owner["tab"] == c.tab  # answered: this tab owns it
        view = await c.send({"type": "message", "text": "Hello there, how are you?"})
        assert len(view["candidates"]) == 2 and view["error"] is None
        refused.append((await c.send({"type": "message", "text": "again"}))["error"])  # candidates are waiting
        for picked in ([0, 1], [7], ["0"], []):
            refused.append((await c.send({"type": "choice", "turn": view["turn"], "picked": picked}))["error"])
        refused.append((await c.send({"type": "choice", "turn": view["turn"] + 5, "picked": [0]}))["error"])
        ok = await c.send({"type": "choice", "turn": view["turn"], "picked": [1]})
        assert ok["error"] is None and ok["turns_done"] == 1
        view = await c.send({"type": "message", "text": "Tell me more."})
        last = await c.send({"type": "choice", "turn": view["turn"], "picked": [0]})
        assert last["status"] == "complete" and last["turns_done"] == 2  # max_turns: the chat ended itself
        refused.append((await c.send({"type": "message", "text": "one more?"}))["error"])  # past max_turns
        done = await c.send({"type": "finish"})
        await c.submit()
        await c.close()
        return refused, done

    refused, done = pw.run_sync(client)
    assert done["status"] == "complete"
    assert "at least 2 turns" in refused[0]
    assert "judge the replies shown" in refused[1]
    assert all("exactly one" in e or "does not match" in e or "buttons" in e for e in refused[2:6]), refused
    assert "turn is over" in refused[6] and "last turn" in refused[7]
    assert task.wait_exit(timeout=120) == 0
    _, _, records = stored(task.data_dir)
    assert len(records) == 4 and sum(r["picked"] for r in records) == 2  # only the two valid choices


def test_sigterm_mid_chat_keeps_every_turn_and_a_relaunch_continues(tmp_path, launch_per_turn):
    args = ("--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=3", "mephisto.blueprint.max_turns=4",
            "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1")
    task = launch_per_turn(*args)
    task.wait_ready()
    [node] = task.node_pids()

    async def chat_then_stop():
        c = pw.Client(task.url, "kim", "k1")
        assert await c.open() == ""
        for _ in range(2):
            view = await c.send({"type": "message", "text": write(c.view)})
            await c.send({"type": "choice", "turn": view["turn"], "picked": [1]})
        await asyncio.to_thread(task.terminate)  # the worker is still on the page, mid-chat
        await c.close()

    pw.run_sync(chat_then_stop)
    assert task.proc.returncode == 0 and not pid_alive(node), "the Node router outlived the launcher"
    _, units, records = stored(task.data_dir)
    assert len(records) == 4 and {r["dialogue_status"] for r in records} == {"partial"}
    assert "dialogues in" in task.log()  # the Conversations log is written on stop too

    again = launch_per_turn(*args, data_dir=task.data_dir)
    again.wait_ready()
    assert "1 dialogues to collect" in again.log()  # the cut-short dialogue does not count
    run = pw.run_sync(lambda: pw.run_protocol_worker(again.url, "lee", "l1", write, first, turns=3))
    assert run.status == "complete" and len(run.turns) == 3
    assert again.wait_exit(timeout=120) == 0
    _, _, records = stored(task.data_dir)
    by_status = {s: len({r["dialogue"] for r in records if r["dialogue_status"] == s}) for s in ("partial", "complete")}
    assert by_status == {"partial": 1, "complete": 1} and len(records) == 4 + 6


def test_a_worker_who_leaves_keeps_a_partial_dialogue_and_frees_the_set(tmp_path, launch_per_turn, chromium):
    task = launch_per_turn("--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=2",
                           "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1")
    task.wait_ready()
    gone = sw.run_worker(chromium, task.url, "gus", "g1", write, first, turns=2, leave_after=1)  # closes the page
    assert gone.status == "chatting" and len(gone.made) == 1
    # the router notices the silent page (heartbeats), Mephisto marks the agent disconnected and the
    # runner gives the model set back
    deadline, run = time.time() + 120, None
    while time.time() < deadline:
        run = sw.run_worker(chromium, task.url, "hal", f"h{int(time.time())}", write, first, turns=2)
        if run.status != "unavailable":
            break
        time.sleep(3)
    assert run is not None and run.status == "complete"
    assert task.wait_exit(timeout=120) == 0
    _, _, records = stored(task.data_dir)
    partial = [r for r in records if r["dialogue_status"] == "partial"]
    assert len(partial) == 2 and partial[0]["worker"].startswith("simulated-gus")


def _serve_smollm2(port: int) -> subprocess.Popen:
    """A llama.cpp HTTP server (xllamacpp) with SmolLM2 in its own process, killable like a real one."""
    code = ("import time, xllamacpp\nfrom parlai_acute.paths import default_gguf\n"
            "p = xllamacpp.CommonParams(); p.model.path = default_gguf(); p.n_ctx = 2048; p.n_parallel = 2\n"
            "p.cpuparams.n_threads = 1; p.cpuparams_batch.n_threads = 1; p.hostnames = ['127.0.0.1']\n"
            f"p.port = {port}; p.verbosity = -1\ns = xllamacpp.Server(p)\nprint('READY', flush=True)\n"
            "time.sleep(3600)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout.readline().strip() == "READY"
    return proc


def test_an_endpoint_that_dies_mid_run_marks_the_turn_and_the_worker_finishes(tmp_path, launch_per_turn, chromium):
    port = free_port()
    server = _serve_smollm2(port)
    remote = (f"remote=-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url "
              f"http://127.0.0.1:{port}/v1 --openai-retries 0 --openai-timeout 5 --max-new-tokens 16")
    try:
        task = launch_per_turn("--model", remote, "--model", GENERIC, "mephisto.blueprint.min_turns=2",
                               "mephisto.blueprint.onboarding=false", "mephisto.blueprint.model_timeout=10",
                               "mephisto.blueprint.model_retries=1")
        task.wait_ready()

        def choose(view):
            if view["turn"] == 0:
                assert len(view["candidates"]) == 2
                server.send_signal(signal.SIGKILL)  # the endpoint dies before the next turn
                server.wait(timeout=30)
            return Choice(picked=[0])

        run = sw.run_worker(chromium, task.url, "ivy", "i1", write, choose, turns=2)
        assert run.status == "complete" and [len(m["candidates"]) for m in run.made] == [2, 1]
        assert task.terminate() == 0
    finally:
        if server.poll() is None:
            server.kill()
    _, _, records = stored(task.data_dir)
    dead = [r for r in records if r["turn"] == 1 and r["model"] == "remote"]
    assert len(dead) == 1 and dead[0]["incomplete"] and dead[0]["position"] is None and dead[0]["error"]
    assert [r["continued"] for r in records if r["turn"] == 1 and r["model"] == "generic_bot"] == [True]


@pytest.mark.parametrize("args, message", [
    (["--model", "a=no_such_module_here:Agent", "--model", GENERIC], "cannot load model"),
    (["--model", GENERIC, "--model", OTHER, "mephisto.blueprint.model_sets=generic_bot"], "needs two models per set, got 1"),
    (["--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=9", "mephisto.blueprint.max_turns=4"],
     "min_turns 9 and max_turns 4"),
    (["--model", "missing-equals-sign"], "write NAME=MODEL"),
    (["--model", GENERIC, "mephisto.blueprint.setting=mm"], "three or more"),
    (["--model", GENERIC, "--model", OTHER, "mephisto.blueprint.opening=persona", "PERSONAS=1"],
     "has 1 persona(s); a persona chat needs at least 2"),
    (["--model", GENERIC, "--model", OTHER, "mephisto.blueprint.opening=persona", "mephisto.blueprint.survey=convai2",
      "PERSONAS=2"], "the convai2 survey 3"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    import json

    for i, arg in enumerate(args):  # PERSONAS=n: a persona file with n personas
        if arg.startswith("PERSONAS="):
            path = tmp_path / "personas.json"
            path.write_text(json.dumps([[f"I am person {k}."] for k in range(int(arg.split("=")[1]))]))
            args = args[:i] + [f"mephisto.blueprint.persona_file={path}"] + args[i + 1:]
    data = tmp_path / "data"
    result = subprocess.run(launch_cmd("--data-dir", str(data), *args, f"mephisto.architect.port={free_port()}",
                                       group="per-turn"), capture_output=True, text=True, timeout=180)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr and message in lines[0], result.stderr


def test_port_taken_fails_before_any_model_is_loaded(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(launch_cmd("--data-dir", str(tmp_path / "data"), "--model",
                                           "smol=-m parlai_acute.agents.llama_cpp:LlamaCppAgent", "--model", GENERIC,
                                           f"mephisto.architect.port={port}", group="per-turn"),
                                capture_output=True, text=True, timeout=180, env=dict(os.environ))
    assert result.returncode == 2 and f"port {port}" in result.stderr
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("args, message", [(["--port", "-5"], "--port -5 is not a TCP port"),
                                           (["--workers", "-1"], "--workers must be 0 or more")])
def test_demo_checks_its_arguments_before_loading_anything(tmp_path, args, message):
    result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "per-turn", "demo",
                             "--workdir", str(tmp_path / "demo"), *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "demo").exists()


def test_relaunching_a_finished_task_in_the_background_exits_by_itself(tmp_path, launch_per_turn):
    """Issue 25: a relaunch of a stopped task under `nohup ... &` printed "nothing to launch" and never
    exited (its SmolLM2 engine hung the process when dropped). Here with SIGHUP ignored, stdin not a
    terminal, in its own session: it ends by itself, with the line that says why."""
    from pathlib import Path

    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
    from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

    bot = "parlai_acute.agents.generic_bot:GenericBotAgent"
    smol = "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 8"
    common = ["mephisto.blueprint.min_turns=1", "mephisto.blueprint.max_turns=1", "mephisto.blueprint.onboarding=false",
              "mephisto.blueprint.target=1", "mephisto.task.task_name=per_turn_test"]
    task = launch_per_turn("--model", f"g1={bot}", "--model", f"g2={bot}", *common[:-1])
    task.wait_ready()
    run = pw.run_sync(lambda: pw.run_protocol_worker(task.url, "w", "a1", write, lambda v: Choice(picked=[0]), turns=1))
    assert run.status == "complete" and task.wait_exit(timeout=120) == 0

    log = tmp_path / "relaunch.log"
    with open(log, "w") as out:  # g1 is SmolLM2 now: its engine is loaded, then dropped
        proc = subprocess.Popen(["nohup", *launch_cmd("--model", f"g1={smol}", "--model", f"g2={bot}", *common,
                                                      f"mephisto.architect.port={free_port()}", group="per-turn")],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, PARLAI_ACUTE_MEPHISTO_DATA=str(task.data_dir)))
        try:
            assert proc.wait(timeout=240) == 0, Path(log).read_text()[-2000:]
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert "every model set has its dialogues; nothing to launch" in log.read_text()
