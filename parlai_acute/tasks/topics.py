"""``-t parlai_acute.tasks.topics``: both speakers are asked to talk about one topic.

Topics are our own list (``tasks/data/topics.json``, 40 everyday subjects). Each agent's
first observation is ``Let's talk about <topic>.``; the teacher lists them.
"""
from __future__ import annotations

from parlai_acute.tasks import sources
from parlai_acute.tasks.base import SeedInteractiveWorld, SeedSelfChatWorld, SeedTeacher


class DefaultTeacher(SeedTeacher):
    id = "topics"
    seed_of = staticmethod(sources.topic_seed)

    def num_episodes(self):
        return len(sources.topics())

    def fields(self, seed):
        return {"topic": seed.info["topic"]}


class SelfChatWorld(SeedSelfChatWorld):
    seed_of = staticmethod(sources.topic_seed)


class InteractiveWorld(SeedInteractiveWorld):
    seed_of = staticmethod(sources.topic_seed)
