"""Self-chat worlds whose conversations start from a :class:`~parlai_acute.tasks.sources.Seed`.

:class:`SeededSelfChatWorld` keeps the behaviour of ParlAI's ``SelfChatWorld`` (a parley
that hands each agent its context, then seed utterances, then the agents talk), so any
ParlAI agent works unchanged, and adds:

* seeds that are a pure function of ``(--context-seed, episode index)``; a batched run
  gives episode ``k`` the same seed as an unbatched one;
* seed utterances and contexts carry a ``seed`` field, so evaluations can tell real
  human openings from model turns;
* :func:`run_parley`, one implementation of a parley for one world or a batch of worlds
  (the batch path calls ``batch_act`` once per speaker, see :mod:`.batch`);
* ``write()``, which ParlAI's ``self_chat`` script calls, saving the log atomically.
"""
from __future__ import annotations

import argparse

from parlai.core.message import Message
from parlai.core.worlds import validate
from parlai.tasks.self_chat.worlds import SelfChatWorld

from parlai_acute.tasks.sources import Seed
from parlai_acute.worlds.conversations_log import save_conversations


def add_context_args(parser) -> None:
    """Options shared by every seeded task (teacher and world); safe to add twice."""
    group = parser.add_argument_group("parlai_acute contexts")
    try:
        group.add_argument("--context-seed", type=int, default=None,
                           help="seed for choosing conversation seeds (default: --seed if given, else 0)")
    except argparse.ArgumentError:
        pass


class TaskOptions:
    """``add_cmdline_args`` of this package's teachers and worlds, written once: ParlAI's own options
    (the parent class's) first, then the class's ``options`` function (safe to add twice)."""

    options = staticmethod(add_context_args)

    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        super().add_cmdline_args(parser, partial_opt)
        cls.options(parser)
        return parser


def context_seed(opt) -> int:
    value = opt.get("context_seed")
    if value is None:
        value = opt.get("seed") or 0
    return int(value)


class SeededSelfChatWorld(TaskOptions, SelfChatWorld):
    """Base class: subclasses implement :meth:`make_seed`."""

    def __init__(self, opt, agents, shared=None):
        # episode k of a batch of B worlds is global episode k*B + batch index
        self.episode_offset = 0
        self.episode_stride = 1
        self.seed = Seed()
        self.observations = [None, None]
        super().__init__(opt, agents, shared)

    def make_seed(self, index: int) -> Seed:
        raise NotImplementedError

    def global_episode(self) -> int:
        return self.episode_cnt * self.episode_stride + self.episode_offset

    def get_contexts(self):
        self.seed = self.make_seed(self.global_episode())
        return self.seed.contexts

    def get_openers(self, episode_num):
        if self._openers:  # --seed-messages-from-task / --seed-messages-from-file win
            return super().get_openers(episode_num)
        return list(self.seed.openers)

    def _seed_acts(self) -> list[Message]:
        openers = self.get_openers(self.episode_cnt) or []
        return [Message({"id": self.agents[k % 2].id, "text": text, "episode_done": False, "seed": self.seed.info})
                for k, text in enumerate(openers)]

    def begin_parley(self):
        """Start a parley. Returns ``None`` if it only delivered the contexts, else the
        seed act for each speaker (``None`` where the agent itself must act)."""
        if self.episode_done():
            self._end_episode()
        if self.turn_cnt == 0:
            self.acts = [None, None]
            self.observations = [None, None]
            self.contexts = self.get_contexts()
            self.seed_utterances = self._seed_acts()
        if self.contexts:
            for i in (0, 1):
                context = Message({"id": "context", "text": self.contexts[i], "episode_done": False,
                                   "seed": self.seed.info})
                self.acts[i] = context
                self.observations[i] = self.agents[i].observe(validate(context))
            self.contexts = None
            return None
        utts, self.seed_utterances = self.seed_utterances[:2], self.seed_utterances[2:]
        return [utts[i] if i < len(utts) else None for i in (0, 1)]

    def use_seed(self, i: int, act: Message) -> None:
        """Agent ``i`` 'says' a seed utterance: as in ParlAI, it remembers it as its own."""
        self.acts[i] = act
        agent = self.agents[i]
        if hasattr(agent, "self_observe"):
            agent.observe({"episode_done": False})
            agent.self_observe(act)

    def deliver(self, i: int) -> None:
        """The partner of agent ``i`` observes what ``i`` just said."""
        self.observations[1 - i] = self.agents[1 - i].observe(validate(self.acts[i]))

    def end_parley(self) -> None:
        self.update_counters()
        self.turn_cnt += 1

    def parley(self):
        run_parley([self])

    def write(self, logger, outfile):
        """Called by ParlAI's self_chat script: save the log atomically."""
        return save_conversations(logger.get_logs(), outfile, self.opt, self_chat=True,
                                  **log_extra(self.opt))


def log_extra(opt) -> dict:
    """Metadata fields we add to every log: what seeded it and which package wrote it."""
    import parlai_acute

    return {"parlai_acute_version": parlai_acute.__version__, "task": opt.get("task"),
            "context_seed": context_seed(opt)}


def run_parley(worlds, root_agents=None) -> None:
    """One parley in each world. With ``root_agents`` (a batch), each speaker's turn is a
    single ``batch_act`` over the observations of its copies in all worlds, like
    ParlAI's ``BatchWorld``; agents without ``batch_act`` act one by one."""
    plans = [(w, w.begin_parley()) for w in worlds]
    active = [(w, plan) for w, plan in plans if plan is not None]
    for i in (0, 1):
        acting = [w for w, plan in active if plan[i] is None]
        if acting:
            _act(acting, i, root_agents)
        for w, plan in active:
            if plan[i] is not None:
                w.use_seed(i, plan[i])
            w.deliver(i)
    for w in worlds:
        w.end_parley()


def _act(worlds, i: int, root_agents) -> None:
    root = root_agents[i] if root_agents is not None else None
    if root is None or not hasattr(root, "batch_act"):
        for w in worlds:
            w.acts[i] = w.agents[i].act()
        return
    replies = root.batch_act([w.observations[i] for w in worlds])
    for w, reply in zip(worlds, replies):
        w.acts[i] = reply
        if hasattr(w.agents[i], "self_observe"):
            w.agents[i].self_observe(reply)
