"""The per-turn model timeout with the real SmolLM2 engine: a slow generation that is working is waited
for, a stalled one is timed out (issue 25: a slow first turn was killed at 60 s and asked again from scratch)."""
from __future__ import annotations

import os
import signal

from parlai_acute.worlds.per_turn import ModelPool, PerTurnDialogue

SMOL = "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --inference greedy --max-new-tokens 32"


def test_a_generation_longer_than_the_timeout_but_progressing_is_not_retried(tmp_path):
    pool = ModelPool({"smol": SMOL}, str(tmp_path), timeout=60, retries=0)
    try:
        PerTurnDialogue(pool, ["smol"]).candidates("Warm up.")
        (first,) = PerTurnDialogue(pool, ["smol"]).candidates("Tell me about your favourite book.")
        assert first.ok and first.extra["decoding"]
        # the same greedy generation again, with a timeout a quarter of its time in the model: a wall-clock
        # timeout kills it (no reply within ...); a timeout on lack of progress lets it finish
        pool.timeout = first.generation_seconds / 4
        retried = []
        (again,) = PerTurnDialogue(pool, ["smol"]).candidates("Tell me about your favourite book.",
                                                               on_retry=lambda *a: retried.append(a))
        assert again.ok, again.error
        assert again.attempts == 1 and not retried
        assert again.text == first.text  # the whole reply, not a cut or a second try's
        assert again.latency > pool.timeout  # it did outlast the timeout: the test tested something
    finally:
        pool.close()


def test_a_stalled_engine_is_timed_out_on_no_progress(tmp_path):
    pool = ModelPool({"smol": SMOL}, str(tmp_path), timeout=1.0, retries=1)
    master = pool._masters["smol"]
    engine = master.engine
    assert pool.opts["smol"]["llama_process"]  # the task's engine: its own process (see share_engines)
    try:
        PerTurnDialogue(pool, ["smol"]).candidates("Warm up.")
        os.kill(engine.pid, signal.SIGSTOP)  # the engine stops computing: its CPU time stands still
        try:
            retried = []
            (stalled,) = PerTurnDialogue(pool, ["smol"]).candidates("Hello?", on_retry=lambda *a: retried.append(a))
        finally:
            os.kill(engine.pid, signal.SIGCONT)
        assert not stalled.ok and stalled.attempts == 2
        assert stalled.error == "no progress for 1 s" and retried == [("smol", 2, "no progress for 1 s")]
    finally:
        pool.close()
