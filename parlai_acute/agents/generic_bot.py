"""GenericBot, the rule baseline of the Meena paper (Adiwardana et al. 2020, sec. 2.1).

It answers "I don't know" to any question and "ok" to any statement. It scores well on
sensibleness and zero on specificity, which is exactly why SSA pairs the two measures;
in ACUTE-Eval it is the natural weak side of an onboarding (gold) pair.
"""
from __future__ import annotations

import re

from parlai.core.agents import Agent
from parlai.core.message import Message

QUESTION_REPLY = "I don't know"
STATEMENT_REPLY = "ok"

# An utterance is a question if any sentence ends with "?" (ignoring closing quotes,
# brackets and trailing emoticons/spaces), or it opens with an interrogative word.
_ENDS_WITH_QUESTION = re.compile(r"\?[\s\"')\]]*$")
_QUESTION_START = re.compile(
    r"^\s*(who|what|when|where|why|how|which|whose|whom|is|are|am|was|were|do|does|did|"
    r"can|could|will|would|shall|should|may|might|have|has|had)\b[^.!]*$",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    """True if the last sentence of ``text`` asks something."""
    text = (text or "").strip()
    if not text:
        return False
    last = re.split(r"(?<=[.!?])\s+", text)[-1]
    return bool(_ENDS_WITH_QUESTION.search(last) or _QUESTION_START.match(last))


def generic_reply(text: str) -> str:
    return QUESTION_REPLY if is_question(text) else STATEMENT_REPLY


class GenericBotAgent(Agent):
    """``-m parlai_acute.agents.generic_bot:GenericBotAgent``: "I don't know" / "ok"."""

    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = "GenericBot"

    def observe(self, observation):
        self.observation = observation
        return observation

    def act(self):
        obs = self.observation or {}
        text = obs.get("text", "") if hasattr(obs, "get") else ""
        return Message({"id": self.getID(), "text": generic_reply(text), "episode_done": False})

    def batch_act(self, observations):
        return [Message({"id": self.getID(), "text": generic_reply((o or {}).get("text", "")),
                         "episode_done": False}) for o in observations]

    def share(self):
        return super().share()
