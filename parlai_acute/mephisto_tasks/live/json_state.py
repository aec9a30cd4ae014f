"""What every task of this package stores per worker-unit: one JSON file, rewritten atomically.

Mephisto's ``AgentState`` keeps the data of one agent (a worker doing a unit). Our tasks
never store the page's packets raw: the runner validates each one and saves the resulting
state at once (``parlai_acute.files.write_json``: a crash or SIGTERM never loses a stored
answer nor leaves a half-written file). Subclasses name their file, schema, defaults and the
key whose presence means the unit was initialised.
"""
from __future__ import annotations

import copy
import os
from typing import Any

from mephisto.abstractions.blueprint import AgentState

from parlai_acute.files import write_json


class JsonAgentState(AgentState):
    FILENAME = "state.json"
    SCHEMA = ""
    DEFAULTS: dict[str, Any] = {}
    INIT_KEY = "status"  # the unit is initialised once this key is not None

    def _path(self) -> str:
        agent_dir = self.agent.get_data_dir()
        os.makedirs(agent_dir, exist_ok=True)
        return os.path.join(agent_dir, self.FILENAME)

    def _load_data(self) -> None:
        self.data: dict[str, Any] = {"schema": self.SCHEMA, self.INIT_KEY: None, "final_submission": None,
                                     **copy.deepcopy(self.DEFAULTS)}
        path = self._path()
        if self.agent.db.key_exists(path):
            self.data.update(self.agent.db.read_dict(path))

    def _set_init_state(self, data: Any) -> None:
        self.data.update(data)

    def get_init_state(self):
        return self.data if self.data.get(self.INIT_KEY) is not None else None

    def get_data(self) -> dict[str, Any]:
        return dict(self.data, start_time=self.metadata.task_start, end_time=self.metadata.task_end)

    def _save_data(self) -> None:
        write_json(self._path(), self.data)

    def update_data(self, live_update: dict[str, Any]) -> None:
        """Packets are never stored raw: the runner stores what it validated."""

    def _update_submit(self, submit_data: dict[str, Any]) -> None:
        self.data["final_submission"] = submit_data
