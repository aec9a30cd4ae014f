"""Engines in their own processes (:class:`parlai_acute.agents.llama_engine.ProcessEngine`): the
per-turn configurations really generate at the same time, a crashed engine is restarted (within a bound,
then one line)."""
from __future__ import annotations

import os
import signal

import pytest

from parlai_acute.agents.llama_engine import ProcessEngine
from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.live.local_run import pid_alive
from parlai_acute.worlds.per_turn import ModelPool, PerTurnDialogue

SMOL = "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 24"
TWO = {"greedy": f"{SMOL} --inference greedy", "sampled": f"{SMOL} --inference sample --temperature 0.9"}


@pytest.fixture()
def pool(tmp_path, monkeypatch):
    from parlai_acute.agents import llama_cpp

    monkeypatch.setattr(llama_cpp, "cores", lambda: 2)  # the plan of a 2-core machine, whatever this one has
    models = ModelPool(TWO, str(tmp_path), timeout=300, retries=0)
    yield models
    models.close()
    for agent in models._masters.values():
        agent.engine.close()


def test_two_configurations_generate_at_the_same_time_in_two_processes(pool):
    engines = {name: pool._masters[name].engine for name in pool.names}
    assert all(isinstance(e, ProcessEngine) for e in engines.values())
    assert len({e.pid for e in engines.values()} | {os.getpid()}) == 3 and {e.threads for e in engines.values()} == {1}
    dialogue = PerTurnDialogue(pool, pool.names)
    for prompt in ("Hi! Tell me about the last trip you took.", "What did you eat there?"):
        candidates = dialogue.candidates(prompt)
        assert all(c.ok and c.text for c in candidates), [c.error for c in candidates]
        (a_start, a_end), (b_start, b_end) = (engines[name].generations[-1] for name in pool.names)
        # each engine timed its own generation: the two intervals overlap (neither waited for the other)
        assert max(a_start, b_start) < min(a_end, b_end), (a_start, a_end, b_start, b_end)
        dialogue.continue_with(candidates[0].text, source=candidates[0].model)


def test_a_crashed_engine_process_is_restarted_and_the_other_model_is_untouched(pool, capfd):
    dialogue = PerTurnDialogue(pool, pool.names)
    engines = {name: pool._masters[name].engine for name in pool.names}
    dead, other = engines["sampled"], engines["greedy"]
    pids = dead.pid, other.pid
    os.kill(dead.pid, signal.SIGKILL)
    greedy, sampled = dialogue.candidates("Hello, how are you today?")
    # the turn after the crash is answered by a fresh process; the other model's process is the same
    assert greedy.ok and greedy.text and sampled.ok and sampled.text, (greedy.error, sampled.error)
    assert dead.pid != pids[0] and pid_alive(dead.pid) and not pid_alive(pids[0]) and other.pid == pids[1]
    restarts = [line for line in capfd.readouterr().err.splitlines() if "restarted it as pid" in line]
    assert len(restarts) == 1, restarts
    assert f"(pid {pids[0]}) was killed by SIGKILL; restarted it as pid {dead.pid}" in restarts[0]


def test_an_engine_that_keeps_crashing_stays_failed_with_one_line():
    from parlai_acute.paths import default_gguf

    engine = ProcessEngine(default_gguf(), 256, 1, 1)
    engine.max_restarts = 1  # the bound, small: one restart, then the next crash is final
    request = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    try:
        first = engine.pid
        os.kill(first, signal.SIGKILL)
        assert engine.chat(request)["choices"]  # restart 1 of 1
        second = engine.pid
        assert second != first
        os.kill(second, signal.SIGKILL)
        for _ in range(2):  # this request and every later one: the same line, no new process
            with pytest.raises(RuntimeError) as error:
                engine.chat(request)
            message = str(error.value)
            assert "\n" not in message and f"(pid {second}) was killed by SIGKILL" in message
            assert "crashed 2 times within 10 min, so it is not restarted again" in message
            assert "restart the task" in message and engine.pid == second
    finally:
        engine.close()


def test_an_engine_process_ends_when_closed_or_dropped(tmp_path):
    import gc

    from parlai_acute.paths import default_gguf

    closed, dropped = ProcessEngine(default_gguf(), 256, 1, 1), ProcessEngine(default_gguf(), 256, 1, 1)
    pids = closed.pid, dropped.pid
    closed.close()
    del dropped
    gc.collect()
    assert not any(pid_alive(pid) for pid in pids)
    with pytest.raises(RuntimeError, match="was closed"):
        closed.chat({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4})


def test_an_engine_that_cannot_load_is_a_one_line_user_error(tmp_path):
    fake = tmp_path / "broken.gguf"
    fake.write_bytes(b"GGUF" + b"\0" * 64)  # a GGUF header and nothing llama.cpp can load
    with pytest.raises(UserError, match="could not load") as error:
        ProcessEngine(str(fake), 256, 1, 1)
    assert "\n" not in str(error.value)


# What a process killed in the middle of writing its answer leaves on the pipe: half a line.
HALF_AN_ANSWER = ("import sys, time\n"
                  "sys.stdin.readline()\n"
                  "sys.stdout.write('{\"id\": 0, \"response\": {\"choi'); sys.stdout.write('\\n'); sys.stdout.flush()\n"
                  "time.sleep(60)\n")


def test_a_cut_short_answer_fails_the_request_instead_of_leaving_it_waiting():
    import collections
    import subprocess
    import sys

    from parlai_acute.agents.llama_engine import EngineDied, _EngineLink

    proc = subprocess.Popen([sys.executable, "-c", HALF_AN_ANSWER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    link = _EngineLink(proc, "half.gguf", collections.deque())
    try:
        future = link.send({"messages": []})
        with pytest.raises(EngineDied, match=r"half\.gguf .* was killed by SIGKILL"):
            future.result(timeout=30)  # before the fix: the reader thread died and this waited for ever
        assert proc.poll() is not None  # the process that garbled its answer is not left running
    finally:
        proc.kill()
        proc.wait()
