"""The conversation bookkeeping every model wrapper shares: one history of turns per episode.

ParlAI has two ways of driving an agent: ``observe`` then ``act`` (one conversation), or
``BatchWorld``, which calls ``observe`` on every copy, ``batch_act`` on the first copy
with the *returned* observations, then ``self_observe`` on every copy with its reply.
So ``observe`` returns a copy of the message carrying the whole context
(``context_turns``), ``batch_act`` answers from that alone, and ``self_observe`` adds the
reply to the history, or clears it after replying to an ``episode_done`` message.
"""
from __future__ import annotations

from parlai.core.agents import Agent
from parlai.core.message import Message

USER, BOT = "user", "assistant"


class TurnTakingAgent(Agent):
    """Subclasses implement :meth:`reply_batch`: a list of contexts -> a list of reply Messages.

    A context is a list of ``(role, text)`` pairs, roles ``"user"``/``"assistant"``.
    """

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.turns: list = []
        self.observation = None

    def reset(self):
        super().reset()
        self.turns = []
        self.observation = None

    def observe(self, observation):
        obs = Message(observation) if observation is not None else Message({})
        text = obs.get("text")
        if text:
            self.turns.append((USER, str(text)))
        obs.force_set("context_turns", list(self.turns))
        self.observation = obs
        return obs

    def self_observe(self, self_message):
        if self.observation is not None and self.observation.get("episode_done"):
            self.turns = []
            self.observation = None
            return
        if self_message is not None and self_message.get("text"):
            self.turns.append((BOT, self_message["text"]))

    def act(self):
        reply = self.batch_act([self.observation])[0]
        self.self_observe(reply)
        return reply

    def batch_act(self, observations):
        return self.reply_batch([context_of(obs) for obs in observations])

    def reply_batch(self, contexts: list) -> list:
        raise NotImplementedError


def context_of(obs) -> list:
    """The ``(role, text)`` turns an observation asks us to answer."""
    if obs is None:
        return []
    if obs.get("context_turns") is not None:
        return [tuple(t) for t in obs["context_turns"]]
    return [(USER, obs["text"])] if obs.get("text") else []
