"""The conversation bookkeeping model wrappers share: one history of turns per episode.

ParlAI drives an agent in two ways: ``observe`` then ``act`` (one conversation), or
``BatchWorld``, which calls ``observe`` on every copy, ``batch_act`` on the first copy
with the *returned* observations, then ``self_observe`` on every copy with its reply.
So ``observe`` returns a copy of the message carrying the whole context
(``context_system``, ``context_turns``, ``context_seed_key``), ``batch_act`` answers
from that alone, and ``self_observe`` adds the reply to the history.

Same conventions as :class:`parlai_acute.agents.llama_cpp.LlamaCppAgent`: ``your
persona:`` lines of a first (or ``id == "context"``) message go into the system prompt;
consecutive turns of one speaker are merged; after replying to an ``episode_done``
message the next observation starts a new conversation; the seed key holds the
conversation's number, so identical openings in different conversations get different
samples, and batched or one-at-a-time runs give the same replies.
"""
from __future__ import annotations

import json

from parlai.core.agents import Agent
from parlai.core.message import Message

from parlai_acute.agents.llama_cpp import build_system_prompt, split_context

USER, BOT = "user", "assistant"
SILENCE = "__SILENCE__"


class TurnTakingAgent(Agent):
    """Subclasses implement :meth:`reply_batch` over :class:`Context` objects.

    ``self.default_system`` (set by the subclass) is the base system prompt; the
    ``--system-prompt`` and ``--persona`` options, when present, override/extend it.
    """

    default_system = ""

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.batch_index = int(opt.get("batchindex") or 0)
        self.batch_size = max(1, int(opt.get("batchsize") or 1))
        self.conversations_started = 0
        self._last_reply = None
        self.reset()

    def reset(self):
        super().reset()
        self.persona = [self.opt["persona"]] if self.opt.get("persona") else []
        self.partner_persona = []
        self.turns: list = []  # (role, text) without the system prompt
        self.started = False
        self._reset_after_reply = False
        self.observation = None

    @property
    def system(self) -> str:
        base = self.opt.get("system_prompt")
        return build_system_prompt(self.default_system if base is None else base, self.persona, self.partner_persona)

    def _add(self, role: str, text: str):
        if not self.started:
            self.started = True
            self.conversations_started += 1
        text = (text or "").strip()
        if not text or text == SILENCE:
            return
        if self.turns and self.turns[-1][0] == role:
            self.turns[-1] = (role, self.turns[-1][1] + "\n" + text)
        else:
            self.turns.append((role, text))

    def observe(self, observation):
        if self._reset_after_reply:
            self.reset()
        obs = Message(observation or {})
        text = obs.get("text") or ""
        if not self.started or obs.get("id") == "context":
            own, partner, text = split_context(text)
            self.persona += own
            self.partner_persona += partner
        self._add(USER, text)
        if obs.get("episode_done"):
            self._reset_after_reply = True
        number = (self.conversations_started - 1) * self.batch_size + self.batch_index
        system, turns = self.system, list(self.turns)
        obs.force_set("context_system", system)
        obs.force_set("context_turns", turns)
        obs.force_set("context_seed_key", f"{number}\x00{json.dumps([system, turns])}")
        self.observation = obs
        return obs

    def self_observe(self, self_message):
        """Remember what this agent said (its reply, or a seed utterance said on its behalf)."""
        if self_message is None or self_message is self._last_reply:
            return
        self._last_reply = self_message
        if self._reset_after_reply:
            self.reset()
            return
        self._add(BOT, self_message.get("text", ""))

    def act(self):
        if self.observation is None:  # speaks first, e.g. the opener of a self-chat
            self.observe({"episode_done": False})
        reply = self.batch_act([self.observation])[0]
        self.self_observe(reply)
        return reply

    def batch_act(self, observations):
        return self.reply_batch([self.context_of(obs) for obs in observations])

    def context_of(self, obs) -> "Context":
        """What an observation asks us to answer (a message not observed by us: its text alone)."""
        obs = obs or {}
        if obs.get("context_turns") is not None:
            return Context(obs.get("context_system") or "", [tuple(t) for t in obs["context_turns"]],
                           obs.get("context_seed_key") or "")
        turns = [(USER, obs["text"])] if obs.get("text") else []
        system = self.system
        return Context(system, turns, json.dumps([system, turns]))

    def reply_batch(self, contexts: list) -> list:
        raise NotImplementedError


class Context:
    """System prompt, ``(role, text)`` turns and the seed key of one reply to produce."""

    __slots__ = ("system", "turns", "seed_key")

    def __init__(self, system: str, turns: list, seed_key: str):
        self.system, self.turns, self.seed_key = system, turns, seed_key

    @property
    def history(self) -> list:
        """Texts of the earlier turns, for the repetition filter."""
        return [t for _, t in self.turns]
