"""``-t parlai_acute.tasks.topics``: both speakers are asked to talk about one topic.

Topics are our own list (``tasks/data/topics.json``, 40 everyday subjects). Each agent's
first observation is ``Let's talk about <topic>.``; the teacher lists them.
"""
from __future__ import annotations

from parlai.core.message import Message
from parlai.core.teachers import FixedDialogTeacher

from parlai_acute.tasks import sources
from parlai_acute.worlds.interactive import SeededInteractiveWorld
from parlai_acute.worlds.self_chat import SeededSelfChatWorld, add_context_args, context_seed


class DefaultTeacher(FixedDialogTeacher):
    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        super().add_cmdline_args(parser, partial_opt)
        add_context_args(parser)
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = "topics"
        self.reset()

    def num_episodes(self):
        return len(sources.topics())

    def num_examples(self):
        return self.num_episodes()

    def get(self, episode_idx, entry_idx=0):
        seed = sources.topic_seed(episode_idx, context_seed(self.opt))
        return Message({"text": seed.contexts[0], "topic": seed.info["topic"], "episode_done": True})


class SelfChatWorld(SeededSelfChatWorld):
    def make_seed(self, index):
        return sources.topic_seed(index, context_seed(self.opt))


class InteractiveWorld(SeededInteractiveWorld):
    def make_seed(self, index):
        return sources.topic_seed(index, context_seed(self.opt))
