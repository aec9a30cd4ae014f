"""The agent state of the item tasks (SSA labelling, multi-reference): one JSON file, rewritten atomically.

Saved data (``agent.state.get_data()``)::

    {"schema": "<task>/1", "worker_name": "w1", "status": "working" | "complete" | "blocked" | "unavailable",
     "plan": [{"index": 4, "item_id": "...", "onboarding": false}, ...],   # the unit's items, in order
     "results": [RESULT, ...],          # one per finished plan entry, in order (task-specific)
     "current": {...} | null,           # answers so far to the entry on the page (multi-reference replies)
     "shown_at": 1700000000.0,          # when the current entry was first shown (server clock)
     "last_seq": 7, "version": 12, "final_submission": {...} | null}

Every answer is written (``parlai_acute.files.write_json``: temporary file, fsync, rename) before
the page hears back, so a crash or SIGTERM never loses one nor leaves a half-written file.
"""
from __future__ import annotations

import os
from typing import Any

from mephisto.abstractions.blueprint import AgentState

from parlai_acute.files import write_json


class ItemAgentState(AgentState):
    SCHEMA = "parlai_acute.items/1"
    FILENAME = "item_state.json"

    def _path(self) -> str:
        agent_dir = self.agent.get_data_dir()
        os.makedirs(agent_dir, exist_ok=True)
        return os.path.join(agent_dir, self.FILENAME)

    def _load_data(self) -> None:
        self.data: dict[str, Any] = {"schema": self.SCHEMA, "status": None, "plan": None, "results": [],
                                     "current": None, "shown_at": None, "last_seq": -1, "version": 0,
                                     "final_submission": None}
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
