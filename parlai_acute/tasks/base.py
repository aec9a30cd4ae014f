"""The shape shared by tasks whose episode ``k`` starts from ``seed_of(k, --context-seed)``.

``persona`` and ``topics`` differ only in where their seeds come from (a function of
:mod:`parlai_acute.tasks.sources`) and which seed fields their teacher shows; the
teacher and both worlds are otherwise the same, so they live here once.
"""
from __future__ import annotations

from parlai.core.message import Message
from parlai.core.teachers import FixedDialogTeacher

from parlai_acute.worlds.interactive import SeededInteractiveWorld
from parlai_acute.worlds.self_chat import SeededSelfChatWorld, TaskOptions, context_seed


class SeedTeacher(TaskOptions, FixedDialogTeacher):
    """One example per episode (for ``display_data``): speaker 1's context as text, plus
    the seed fields of :meth:`fields`. Subclasses set ``id``, ``seed_of`` and
    :meth:`num_episodes`."""

    seed_of = None  # staticmethod: (episode index, context seed) -> sources.Seed

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


def seeded_task(task_id: str, seed_of, count, fields=lambda seed: {}) -> tuple[type, type, type]:
    """(DefaultTeacher, SelfChatWorld, InteractiveWorld) of a task whose episode ``k`` starts from
    ``seed_of(k, context seed)``; ``count()`` is the number of distinct seeds (the teacher's episodes)
    and ``fields(seed)`` what the teacher shows of a seed besides speaker 1's context."""
    seed_of = staticmethod(seed_of)
    teacher = type("DefaultTeacher", (SeedTeacher,), {"id": task_id, "seed_of": seed_of,
                                                      "num_episodes": lambda self: count(),
                                                      "fields": lambda self, seed: fields(seed)})
    return (teacher, type("SelfChatWorld", (SeedSelfChatWorld,), {"seed_of": seed_of}),
            type("InteractiveWorld", (SeedInteractiveWorld,), {"seed_of": seed_of}))
