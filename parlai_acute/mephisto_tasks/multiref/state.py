"""What the multi-reference task stores per worker-unit (see :mod:`..item_state` for the shape).

``current`` holds the replies accepted so far for the context on the page (stored at once, so a
set cut short keeps them); a context's RESULT once all its replies are in::

    {"position": 2, "item_id": "dd-17:3", "index": 5, "onboarding": false,
     "context_id": "dd-17:3", "dialogue_id": "dd-17", "turn_index": 3,
     "context": [...], "reference": "...",                  # the server's copy of the context
     "replies": [REPLY, ...], "shown_at": ..., "answered_at": ...}

    REPLY = {"index": 1, "text": "...", "received_at": 1700000012.3,
             "server_seconds": 9.1,      # since the context was shown or the previous reply (server clock)
             "fast": false, "warned": false,
             "client_timing": {"client_reported": true, "keys": [ms, ...], "clicks": [ms, ...],
                               "shown": ms, "submitted": ms, "via": "enter" | "button"}}

``client_timing`` is what the page reported (key presses and clicks, browser clock in ms):
kept as reported, never trusted for anything the server decides.
"""
from parlai_acute.mephisto_tasks.live.item_state import ItemAgentState


class MultirefAgentState(ItemAgentState):
    SCHEMA = "parlai_acute.multiref/1"
    FILENAME = "multiref_state.json"
