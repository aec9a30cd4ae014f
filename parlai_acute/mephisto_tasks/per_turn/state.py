"""What the per-turn task stores per worker-unit (the Mephisto agent state), saved at every step.

Saved data (``agent.state.get_data()``; read by :mod:`.store`)::

    {"schema": "parlai_acute.per_turn/1", "worker_name": "w1", "dialogue_id": "r3-a17",
     "assignment": "7 (unit 12)",                          # Mephisto's, shown to the worker
     "status": "onboarding" | "chatting" | "complete" | "blocked" | "unavailable",
     "setting": "pm", "protocol": "soba", "model_set": ["a", "b"], "seed": {...},
     "onboarding": {"item": 0, "picked": [1], "passed": true} | null,
     "messages": [{"speaker": "human"|"bot", "text": ..., "source": model|"human"|"seed"}, ...],
     "pending": {"turn": 3, "worker_message": ..., "order": ["b", "a"], "candidates": [CANDIDATE, ...],
                 "received_at": 1699999990.0,             # the worker's message reached the server
                 "retrying": {"a": {"attempt": 2, "error": "no reply within 60 s"}},  # asked again, now
                 "shown_at": 1700000000.0} | null,        # candidates on the page, not yet judged
     "turns": [TURN, ...]}

    CANDIDATE = {"model": "a", "text": ..., "position": 0 | null, "attempts": 1,
                 "latency": 0.8,                          # the worker's wait for it: message -> ready, retries too
                 "generation_seconds": 0.7,               # its last attempt's own time in the model
                 "error": "", "decoding": {...},          # position null: the model failed
                 "context_digest": "sha1 of the turns this model conditioned on" | null}
    TURN = {"turn": 3, "worker_message": ..., "candidates": [CANDIDATE + {"picked", "continued"}, ...],
            "fallback": "picked", "user_reply": "", "justification": "", "shown_at": ..., "decided_at": ...,
            "wait_seconds": 106.9}                        # message received -> every candidate shown

The file is rewritten atomically (parlai_acute.files) each time, so a crash or SIGTERM never
loses a judged turn nor leaves a half-written file.
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.json_state import JsonAgentState

SCHEMA = "parlai_acute.per_turn/1"


class PerTurnAgentState(JsonAgentState):
    FILENAME = "per_turn_state.json"
    SCHEMA = SCHEMA
    DEFAULTS = {"messages": [], "turns": [], "pending": None, "onboarding": None}
