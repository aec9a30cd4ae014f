"""ConvAI2's end-of-chat questions and their 1-4 anchors (Dinan et al. 2019; See et al. 2019).

The protocol's definition in one place: the per-turn task's survey shows these, and a ratings
table's ``question`` column takes these keys. The partner is called "your partner" (ConvAI2's
form said "this user").
"""
from __future__ import annotations

__all__ = ["SURVEY"]

#: key -> (question, anchors of 1, 2, 3, 4)
SURVEY = {
    "engagingness": ("How much did you enjoy talking to your partner?",
                     ("Not at all", "A little", "Somewhat", "A lot")),
    "fluency": ("How naturally did your partner speak English?",
                ("Very unnatural", "Mostly unnatural", "Mostly natural", "Very natural")),
    "consistency": ("How often did your partner say something which did NOT make sense?",
                    ("Never made any sense", "Most responses didn't make sense", "Some responses didn't make sense",
                     "Everything made perfect sense")),
    "humanness": ("Do you think your partner is a bot or a human?",
                  ("Definitely a bot", "Probably a bot", "Probably a human", "Definitely a human")),
}
