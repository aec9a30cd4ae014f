"""Tiny ParlAI agents for per-turn world tests of OUR handling: concurrency, failures, time-outs.

They answer deterministically so a test can assert what the world does with them; model
quality is tested with the real SmolLM2 elsewhere.
"""
import threading
import time

from parlai.core.agents import Agent
from parlai.core.message import Message

# two BarrierAgent copies must be inside batch_act at the same time, or both fail
BARRIER = threading.Barrier(2, timeout=20)
CALLS = {"flaky": 0}


class _Base(Agent):
    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = type(self).__name__

    def reply(self, text):
        return Message({"id": self.id, "text": text, "episode_done": False})

    def batch_act(self, observations):
        return [self.reply(self.answer((o or {}).get("text", ""))) for o in observations]


class BarrierAgent(_Base):
    def answer(self, text):
        BARRIER.wait()  # raises BrokenBarrierError if the other model is not running at the same time
        return f"together: {text}"


class FlakyAgent(_Base):
    """Fails every other call: a retry succeeds."""

    def answer(self, text):
        CALLS["flaky"] += 1
        if CALLS["flaky"] % 2:
            raise ConnectionError("backend went away")
        return f"second try: {text}"


class BrokenAgent(_Base):
    def answer(self, text):
        raise RuntimeError("model crashed")


class HangingAgent(_Base):
    def answer(self, text):
        time.sleep(30)
        return "too late"
