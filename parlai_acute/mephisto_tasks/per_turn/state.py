"""What the per-turn task stores per worker-unit (the Mephisto agent state), saved at every step.

Saved data (``agent.state.get_data()``; read by :mod:`.store`)::

    {"schema": "parlai_acute.per_turn/1", "worker_name": "w1", "dialogue_id": "r3-a17",
     "status": "onboarding" | "chatting" | "complete" | "blocked" | "unavailable",
     "setting": "pm", "protocol": "soba", "model_set": ["a", "b"], "seed": {...},
     "onboarding": {"item": 0, "picked": [1], "passed": true} | null,
     "messages": [{"speaker": "human"|"bot", "text": ..., "source": model|"human"|"seed"}, ...],
     "pending": {"turn": 3, "worker_message": ..., "order": ["b", "a"], "candidates": [CANDIDATE, ...],
                 "shown_at": 1700000000.0} | null,        # candidates on the page, not yet judged
     "turns": [TURN, ...]}

    CANDIDATE = {"model": "a", "text": ..., "position": 0 | null, "latency": 0.8, "attempts": 1,
                 "error": "", "decoding": {...},          # position null: the model failed
                 "context_digest": "sha1 of the turns this model conditioned on" | null}
    TURN = {"turn": 3, "worker_message": ..., "candidates": [CANDIDATE + {"picked", "continued"}, ...],
            "fallback": "picked", "user_reply": "", "justification": "", "shown_at": ..., "decided_at": ...}

The file is rewritten atomically (parlai_acute.files) each time, so a crash or SIGTERM never
loses a judged turn nor leaves a half-written file.
"""
from __future__ import annotations

import os
from typing import Any

from mephisto.abstractions.blueprint import AgentState

from parlai_acute.files import write_json

SCHEMA = "parlai_acute.per_turn/1"


class PerTurnAgentState(AgentState):
    def _path(self) -> str:
        agent_dir = self.agent.get_data_dir()
        os.makedirs(agent_dir, exist_ok=True)
        return os.path.join(agent_dir, "per_turn_state.json")

    def _load_data(self) -> None:
        self.data: dict[str, Any] = {"schema": SCHEMA, "status": None, "messages": [], "turns": [],
                                     "pending": None, "onboarding": None, "final_submission": None}
        path = self._path()
        if self.agent.db.key_exists(path):
            self.data.update(self.agent.db.read_dict(path))

    def _set_init_state(self, data: Any) -> None:
        self.data.update(data)

    def get_init_state(self):
        return self.data if self.data.get("status") is not None else None

    def get_data(self) -> dict[str, Any]:
        return dict(self.data, start_time=self.metadata.task_start, end_time=self.metadata.task_end)

    def _save_data(self) -> None:
        write_json(self._path(), self.data)

    def update_data(self, live_update: dict[str, Any]) -> None:
        """Packets are never stored raw: the runner stores what it validated."""

    def _update_submit(self, submit_data: dict[str, Any]) -> None:
        self.data["final_submission"] = submit_data
