"""The conversation bookkeeping all model wrappers share: one history of turns per episode.

ParlAI drives an agent in two ways: ``observe`` then ``act`` (one conversation), or
``BatchWorld``, which calls ``observe`` on every copy, ``batch_act`` on the first copy
with the *returned* observations, then ``self_observe`` on every copy with its reply.
So ``observe`` returns a copy of the message carrying the whole context
(``context_system``, ``context_turns``, ``context_seed_key``), ``batch_act`` answers
from that alone, and ``self_observe`` adds the reply to the history.

Conventions (the same for every model wrapper): ``your persona:`` lines of a first (or
``id == "context"``) message go into the system prompt (ParlAI's
ConvAI2/BlendedSkillTalk convention), ``partner's persona:`` lines too, as the other
person's; the rest of a context is the partner's first words; consecutive turns of one
speaker are merged; ``__SILENCE__`` adds no turn; after replying to an ``episode_done``
message the next observation starts a new conversation; the seed key holds the
conversation's number, so identical openings in different conversations get different
samples, and batched or one-at-a-time runs give the same replies.
"""
from __future__ import annotations

import json
from typing import Sequence

from parlai.core.agents import Agent
from parlai.core.message import Message

USER, BOT = "user", "assistant"
SILENCE = "__SILENCE__"
DEFAULT_SYSTEM_PROMPT = ("You are a person chatting casually with someone you just met. "
                         "Reply in one or two short sentences.")
PERSONA_PREFIXES = ("your persona:",)
PARTNER_PREFIXES = ("partner's persona:", "their persona:")


def split_context(text: str) -> tuple:
    """(own persona lines, partner persona lines, remaining text) of a context message."""
    own, partner, rest = [], [], []
    for line in (text or "").splitlines():
        low = line.strip().lower()
        for prefix in PERSONA_PREFIXES:
            if low.startswith(prefix):
                own.append(line.strip()[len(prefix):].strip())
                break
        else:
            for prefix in PARTNER_PREFIXES:
                if low.startswith(prefix):
                    partner.append(line.strip()[len(prefix):].strip())
                    break
            else:
                rest.append(line)
    return own, partner, "\n".join(rest).strip()


def build_system_prompt(base: str, persona: Sequence[str] = (), partner: Sequence[str] = ()) -> str:
    parts = [base.strip()] if base and base.strip() else []
    if persona:
        parts.append("Your persona: " + " ".join(persona))
    if partner:
        parts.append("The other person's persona: " + " ".join(partner))
    return "\n".join(parts)


def chat_messages(system: str, turns: Sequence) -> list:
    """Chat-completions messages (``{"role", "content"}``) of a system prompt and ``(role, text)`` turns."""
    return ([{"role": "system", "content": system}] if system else []) + [{"role": r, "content": t} for r, t in turns]


class TurnTakingAgent(Agent):
    """Subclasses implement :meth:`reply_batch` over :class:`Context` objects.

    ``self.default_system`` (set by the subclass) is the base system prompt; the
    ``--system-prompt`` and ``--persona`` options, when present, override/extend it.
    """

    default_system = ""
    #: what the copies of this agent share instead of building their own (a loaded model, an engine,
    #: a client): attribute names, handed on by :meth:`share` and taken with :meth:`from_shared`
    shared_attrs: tuple = ()
    #: the agent's own command-line options (a function of the parser); every agent also gets decoding's
    options = staticmethod(lambda parser: None)

    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        from parlai_acute.agents import decoding

        cls.options(parser)
        decoding.add_decoding_args(parser)
        return parser

    def share(self):
        shared = super().share()
        shared.update({name: getattr(self, name) for name in self.shared_attrs})
        return shared

    @staticmethod
    def from_shared(shared, name: str, build):
        """``shared[name]`` in a copy of an agent, else ``build()`` (the original builds it once)."""
        return shared[name] if shared is not None and name in shared else build()

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
        self._turns: list = []  # (role, text) without the system prompt
        self.started = False
        self._reset_after_reply = False
        self.observation = None

    @property
    def turns(self) -> list:
        """The conversation so far as ``(role, text)`` pairs, without the system prompt."""
        return list(self._turns)

    @property
    def system(self) -> str:
        base = self.opt.get("system_prompt")
        return build_system_prompt(self.default_system if base is None else base, self.persona, self.partner_persona)

    def prompt_key(self, system: str, turns: list) -> str:
        """The prompt part of a seed key (subclasses may key on the prompt they actually send)."""
        return json.dumps([system, turns])

    def _add(self, role: str, text: str):
        if not self.started:
            self.started = True
            self.conversations_started += 1
        text = (text or "").strip()
        if not text or text == SILENCE:
            return
        if self._turns and self._turns[-1][0] == role:
            self._turns[-1] = (role, self._turns[-1][1] + "\n" + text)
        else:
            self._turns.append((role, text))

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
        # conversation number, global across batch slots as ParlAI's batch worlds count
        number = (self.conversations_started - 1) * self.batch_size + self.batch_index
        system, turns = self.system, list(self._turns)
        obs.force_set("context_system", system)
        obs.force_set("context_turns", turns)
        obs.force_set("context_seed_key", f"{number}\x00{self.prompt_key(system, turns)}")
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
        return Context(system, turns, self.prompt_key(system, turns))

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
