"""``-t parlai_acute.tasks.persona``: each speaker gets its own persona (PersonaChat style).

Personas are our own, shipped in ``tasks/data/personas.json`` (36 profiles of four
sentences). Each agent's first observation is its persona as ``your persona: ...``
lines, the convention of ConvAI2/BlendedSkillTalk models. In human chat the person and
the model each get one. The teacher lists the persona pairs (for ``display_data``).
"""
from __future__ import annotations

from parlai.core.message import Message
from parlai.core.teachers import FixedDialogTeacher

from parlai_acute.tasks import sources
from parlai_acute.worlds.interactive import SeededInteractiveWorld
from parlai_acute.worlds.self_chat import SeededSelfChatWorld, add_context_args, context_seed


class DefaultTeacher(FixedDialogTeacher):
    """One example per episode: speaker 1's persona as text, both personas as fields."""

    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        super().add_cmdline_args(parser, partial_opt)
        add_context_args(parser)
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = "persona"
        self.reset()

    def num_episodes(self):
        return len(sources.personas())

    def num_examples(self):
        return self.num_episodes()

    def get(self, episode_idx, entry_idx=0):
        seed = sources.persona_seed(episode_idx, context_seed(self.opt))
        return Message({"text": seed.contexts[0], "persona": seed.info["personas"][0],
                        "partner_persona": seed.info["personas"][1], "episode_done": True})


class SelfChatWorld(SeededSelfChatWorld):
    def make_seed(self, index):
        return sources.persona_seed(index, context_seed(self.opt))


class InteractiveWorld(SeededInteractiveWorld):
    def make_seed(self, index):
        return sources.persona_seed(index, context_seed(self.opt))
