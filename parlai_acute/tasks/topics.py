"""``-t parlai_acute.tasks.topics``: both speakers are asked to talk about one topic.

Topics are our own list (``tasks/data/topics.json``, 40 everyday subjects). Each agent's
first observation is ``Let's talk about <topic>.``; the teacher lists them.
"""
from __future__ import annotations

from parlai_acute.tasks import sources
from parlai_acute.tasks.base import seeded_task

DefaultTeacher, SelfChatWorld, InteractiveWorld = seeded_task(
    "topics", sources.topic_seed, lambda: len(sources.topics()), lambda seed: {"topic": seed.info["topic"]})
