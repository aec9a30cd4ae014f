"""What the SSA labelling task stores per worker-unit (see :mod:`..item_state` for the shape).

One RESULT per labelled item, in order::

    {"position": 3, "item_id": "ctx12:smollm2", "index": 41, "onboarding": false,
     "model": "smollm2", "context": [...], "reply": "...",       # the server's copy of the item
     "context_id": "ctx12", "source": "static", "conversation": "", "turn": null,
     "sensible": true, "specific": false,                          # not sensible -> not specific
     "gold_passed": null | true | false,                           # gold items only
     "shown_at": 1700000000.0, "answered_at": 1700000007.5}
"""
from parlai_acute.mephisto_tasks.live.item_state import ItemAgentState


class SsaLabelAgentState(ItemAgentState):
    SCHEMA = "parlai_acute.ssa_label/1"
    FILENAME = "ssa_label_state.json"
