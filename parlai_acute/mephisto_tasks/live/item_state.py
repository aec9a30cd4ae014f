"""The agent state of the item tasks (SSA labelling, multi-reference): one JSON file, rewritten atomically.

Saved data (``agent.state.get_data()``)::

    {"schema": "<task>/1", "worker_name": "w1", "status": "working" | "complete" | "blocked" | "unavailable",
     "plan": [{"index": 4, "item_id": "...", "onboarding": false}, ...],   # the unit's items, in order
     "results": [RESULT, ...],          # one per finished plan entry, in order (task-specific)
     "current": {...} | null,           # answers so far to the entry on the page (multi-reference replies;
                                        #   SSA {"step": 2}: "it makes sense", at the second question)
     "shown_at": 1700000000.0,          # when the current entry was first shown (server clock)
     "actions": ["tab:3", ...],         # ids of the page actions stored (a resend is never stored twice)
     "tab": "...", "registration": "<assignment>-<worker>", "version": 1700000000123,
     "resumed_from": ["12"] | absent,   # agents whose unfinished work this one continues (..sessions)
     "superseded_by": "15" | absent,    # this work continues in that agent
     "final_submission": {...} | null}

Every answer is written (``parlai_acute.files.write_json``: temporary file, fsync, rename) before
the page hears back, so a crash or SIGTERM never loses one nor leaves a half-written file.
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.json_state import JsonAgentState


class ItemAgentState(JsonAgentState):
    SCHEMA = "parlai_acute.items/1"
    FILENAME = "item_state.json"
    DEFAULTS = {"plan": None, "results": [], "current": None, "shown_at": None, "version": 0}
