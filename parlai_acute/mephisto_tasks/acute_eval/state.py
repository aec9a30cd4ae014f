"""What the ACUTE-Eval task stores per worker-unit (the Mephisto agent state), saved on every judgment.

Saved data shape (``agent.state.get_data()``, also what ``DataBrowser.get_data_from_unit``
returns under ``"data"``; read by :func:`parlai_acute.acute.judgments.judgments_from_unit_data`)::

    {"schema": "parlai_acute.acute_eval/1",
     "worker_name": "w1",                      # provider's worker name (worker_id is Mephisto's db id)
     "question": "...", "question_key": "engaging",
     "plan": [{"index": 4, "left": 1, "is_onboarding": true}, ...],   # what this unit shows, in order
     "blocked": false,                          # true once the worker failed onboarding here
     "comparisons": [COMPARISON, ...],          # one per submitted judgment, in order
     "final_submission": {...} | null}

    COMPARISON = {
      "pairing": {"pair_id": "3|17", "pairing_index": 4, "dialogue_ids": [3, 17],
                  "speakers_to_eval": ["model_a", "model_b"], "is_onboarding": false,
                  "correct_answer": "model_a"},          # onboarding only
      "position": 1, "n_comparisons": 6,                  # "comparison k of n" as shown
      "left": 1, "left_model": "model_b",                 # randomised side, recorded
      "choice": "model_a", "choice_side": "right",        # the model picked, and where it was
      "reason": "...",
      "question": "...", "question_key": "engaging",
      "onboarding_correct": null | true | false,
      "start_time": 1700000010.0, "end_time": 1700000050.0}

The file is rewritten atomically (parlai_acute.files) each time a judgment arrives, so a
crash or SIGTERM never loses a submitted judgment nor leaves a half-written file.
"""
from __future__ import annotations

import os
from typing import Any

from mephisto.abstractions.blueprint import AgentState

from parlai_acute.files import write_json

SCHEMA = "parlai_acute.acute_eval/1"


class AcuteEvalAgentState(AgentState):
    def _path(self) -> str:
        agent_dir = self.agent.get_data_dir()
        os.makedirs(agent_dir, exist_ok=True)
        return os.path.join(agent_dir, "acute_eval_state.json")

    def _load_data(self) -> None:
        self.data: dict[str, Any] = {"schema": SCHEMA, "plan": None, "comparisons": [], "blocked": False,
                                     "final_submission": None}
        path = self._path()
        if self.agent.db.key_exists(path):
            self.data.update(self.agent.db.read_dict(path))

    def _set_init_state(self, data: Any) -> None:
        self.data.update(data)

    def get_init_state(self):
        return self.data if self.data.get("plan") is not None else None

    def get_data(self) -> dict[str, Any]:
        return dict(self.data, start_time=self.metadata.task_start, end_time=self.metadata.task_end)

    def _save_data(self) -> None:
        write_json(self._path(), self.data)

    def update_data(self, live_update: dict[str, Any]) -> None:
        """Packets are not stored raw: the runner adds validated judgments with :meth:`add_comparison`."""

    def add_comparison(self, comparison: dict[str, Any]) -> None:
        self.data["comparisons"].append(comparison)
        self.save_data()

    def _update_submit(self, submit_data: dict[str, Any]) -> None:
        self.data["final_submission"] = submit_data
