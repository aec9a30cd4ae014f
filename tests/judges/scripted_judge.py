"""A tiny ParlAI agent that answers judge prompts deterministically, for testing OUR handling
(parsing, retries, position swap, tables), not model quality.

``--script first``: always "Answer: 1"; ``garbage``: prose without the format;
``longest``: an order-invariant judge that prefers the speaker/reply with more words;
``ssa``: answers the SSA questions -- not sensible when the reply has a word of ``NONSENSE``,
not specific when it is a generic reply (``GENERIC``: "I don't know", "ok", ...);
``yes`` / ``no``: always that answer; ``close``: as ``longest``, but "tie" where the prompt
offers one and neither speaker says more than 20 words (both say too little to prefer one).
"""
from __future__ import annotations

import re

from parlai.core.agents import Agent

SCRIPTS = ("first", "garbage", "longest", "ssa", "yes", "no", "close")
NONSENSE = ("bananas", "purple", "the the")
GENERIC = ("i don't know", "ok", "okay", "that's nice", "cool")


def _words(lines) -> int:
    return sum(len(line.split()) for line in lines)


def speaker_words(prompt: str) -> tuple[int, int]:
    """Words of the highlighted speaker in ACUTE's conversation 1 and 2."""
    one = prompt.split("Conversation 1:", 1)[1].split("Conversation 2:", 1)[0]
    two = prompt.split("Conversation 2:", 1)[1].split("Question:", 1)[0]
    return (_words(line for line in one.splitlines() if line.startswith("Speaker 1:")),
            _words(line for line in two.splitlines() if line.startswith("Speaker 2:")))


def close_answer(prompt: str) -> str:
    a, b = speaker_words(prompt)
    if "or tie" in prompt and max(a, b) <= 20:
        return "Answer: tie\nReason: they say about as much as each other"
    return longest_answer(prompt)


def longest_answer(prompt: str) -> str:
    if "Conversation 1:" in prompt:  # ACUTE
        a, b = speaker_words(prompt)
        return f"Answer: {1 if a >= b else 2}\nReason: that speaker says more, and more specifically"
    candidates = re.findall(r"^(\d+)\. (.*)$", prompt, flags=re.MULTILINE)
    if "yes or no" in prompt:
        reply = prompt.split("next turn:\n", 1)[1].split("\n\n", 1)[0]
        return f"Answer: {'yes' if len(reply.split()) > 3 else 'no'}\nReason: length"
    if "separated by commas" in prompt:
        good = [n for n, text in candidates if len(text.split()) > 3]
        return f"Answer: {', '.join(good) or 'none'}\nReason: the longer ones say something"
    best = max(candidates, key=lambda c: (len(c[1].split()), c[1]))[0]
    return f"Answer: {best}\nReason: the most specific reply"


def ssa_answer(prompt: str) -> str:
    reply = prompt.split("by B):\n", 1)[1].split("\n\nQuestion:", 1)[0].strip().lower()
    if "Does the response make sense?" in prompt:
        sensible = not any(word in reply for word in NONSENSE)
        return f"Answer: {'yes' if sensible else 'no'}\nReason: common sense"
    specific = reply.rstrip(".!?") not in GENERIC
    return f"Answer: {'yes' if specific else 'no'}\nReason: generic or not"


class ScriptedJudgeAgent(Agent):
    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        parser.add_argument("--script", default="first", choices=list(SCRIPTS))
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = "ScriptedJudge"
        self.prompt = ""

    def observe(self, observation):
        self.prompt = observation.get("text", "")
        return observation

    def act(self):
        script = self.opt.get("script", "first")
        if script == "first":
            text = "Answer: 1\nReason: the first one reads well"
        elif script == "garbage":
            text = "What a lovely pair of conversations! Both speakers are great."
        elif script in ("yes", "no"):
            text = f"Answer: {script}\nReason: always"
        elif script == "ssa":
            text = ssa_answer(self.prompt)
        elif script == "close":
            text = close_answer(self.prompt)
        else:
            text = longest_answer(self.prompt)
        return {"id": self.id, "text": text, "episode_done": False}
