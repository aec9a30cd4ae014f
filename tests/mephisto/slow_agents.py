"""A ParlAI agent for live per-turn tests of a slow model: its first reply comes too late for the
task's model_timeout, the retry answers at once (what a busy machine did to a lone SmolLM2)."""
import threading
import time

from parlai.core.message import Message

from parlai_acute.agents.generic_bot import GenericBotAgent

_FIRST = threading.Event()
SLEEP_S = 6.0  # longer than the test's model_timeout


class SlowFirstAgent(GenericBotAgent):
    """A GenericBot (copies act at the same time, like a served model: the retry is not queued behind
    the slow first attempt) whose first reply of the process takes SLEEP_S."""

    def batch_act(self, observations):
        if not _FIRST.is_set():
            _FIRST.set()
            time.sleep(SLEEP_S)
        return [Message({"id": "SlowFirstAgent", "text": "Sorry, I was slow. Mountains are lovely.", "episode_done": False})
                for _ in observations]
