"""Fixtures for tasks, worlds and the self-chat/chat CLI."""
from __future__ import annotations

import contextlib
import io

import pytest

import parlai_acute  # noqa: F401
from parlai.core.agents import Agent
from parlai.core.message import Message


class RecorderAgent(Agent):
    """A real ParlAI agent that keeps every observation and says which turn it is on."""

    def __init__(self, opt, shared=None, name="rec"):
        super().__init__(opt, shared)
        self.id = name
        self.seen = []

    def observe(self, observation):
        self.seen.append(dict(observation))
        self.observation = observation
        return observation

    def act(self):
        return Message({"id": self.id, "text": f"{self.id} turn {len(self.seen)}", "episode_done": False})


@pytest.fixture()
def recorder():
    return RecorderAgent


@pytest.fixture()
def quiet():
    """Run ParlAI scripts in-process without flooding the test output."""
    @contextlib.contextmanager
    def _quiet():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            yield out
    return _quiet
