"""The shape shared by tasks whose episode ``k`` starts from ``seed_of(k, --context-seed)``.

``persona`` and ``topics`` differ only in where their seeds come from (a function of
:mod:`parlai_acute.tasks.sources`) and which seed fields their teacher shows; the
teacher and both worlds are otherwise the same, so they live here once.
"""
from __future__ import annotations

from parlai.core.message import Message
from parlai.core.teachers import FixedDialogTeacher

from parlai_acute.worlds.interactive import SeededInteractiveWorld
from parlai_acute.worlds.self_chat import SeededSelfChatWorld, add_context_args, context_seed


class SeedTeacher(FixedDialogTeacher):
    """One example per episode (for ``display_data``): speaker 1's context as text, plus
    the seed fields of :meth:`fields`. Subclasses set ``id``, ``seed_of`` and
    :meth:`num_episodes`."""

    seed_of = None  # staticmethod: (episode index, context seed) -> sources.Seed

    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        super().add_cmdline_args(parser, partial_opt)
        add_context_args(parser)
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.reset()

    def num_episodes(self):
        raise NotImplementedError

    def num_examples(self):
        return self.num_episodes()

    def fields(self, seed) -> dict:
        return {}

    def get(self, episode_idx, entry_idx=0):
        seed = self.seed_of(episode_idx, context_seed(self.opt))
        return Message({"text": seed.contexts[0], **self.fields(seed), "episode_done": True})


class SeedSelfChatWorld(SeededSelfChatWorld):
    """Self-chat whose episode ``k`` starts from ``seed_of(k, --context-seed)``."""

    seed_of = None

    def make_seed(self, index):
        return self.seed_of(index, context_seed(self.opt))


class SeedInteractiveWorld(SeededInteractiveWorld):
    """Human chat whose episode ``k`` starts from ``seed_of(k, --context-seed)``."""

    seed_of = None

    def make_seed(self, index):
        return self.seed_of(index, context_seed(self.opt))
