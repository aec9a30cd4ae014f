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
      "outcome": "win",                                   # with allow_tie: "tie" or "both_bad" (choice "")
      "reason": "...",
      "question": "...", "question_key": "engaging",
      "onboarding_correct": null | true | false,
      "start_time": 1700000010.0, "end_time": 1700000050.0}

The file is rewritten atomically (parlai_acute.files) each time a judgment arrives, so a
crash or SIGTERM never loses a submitted judgment nor leaves a half-written file.
"""
from __future__ import annotations

from typing import Any

from parlai_acute.mephisto_tasks.live.json_state import JsonAgentState

SCHEMA = "parlai_acute.acute_eval/1"


class AcuteEvalAgentState(JsonAgentState):
    FILENAME = "acute_eval_state.json"
    SCHEMA = SCHEMA
    INIT_KEY = "plan"
    DEFAULTS = {"comparisons": [], "blocked": False}

    def add_comparison(self, comparison: dict[str, Any]) -> None:
        self.data["comparisons"].append(comparison)
        self.save_data()
