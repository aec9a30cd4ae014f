"""``-t parlai_acute.tasks.persona``: each speaker gets its own persona (PersonaChat style).

Personas are our own, shipped in ``tasks/data/personas.json`` (36 profiles of four
sentences). Each agent's first observation is its persona as ``your persona: ...``
lines, the convention of ConvAI2/BlendedSkillTalk models. In human chat the person and
the model each get one. The teacher lists the persona pairs (for ``display_data``).
"""
from __future__ import annotations

from parlai_acute.tasks import sources
from parlai_acute.tasks.base import SeedInteractiveWorld, SeedSelfChatWorld, SeedTeacher


class DefaultTeacher(SeedTeacher):
    """One example per episode: speaker 1's persona as text, both personas as fields."""

    id = "persona"
    seed_of = staticmethod(sources.persona_seed)

    def num_episodes(self):
        return len(sources.personas())

    def fields(self, seed):
        persona, partner = seed.info["personas"]
        return {"persona": persona, "partner_persona": partner}


class SelfChatWorld(SeedSelfChatWorld):
    seed_of = staticmethod(sources.persona_seed)


class InteractiveWorld(SeedInteractiveWorld):
    seed_of = staticmethod(sources.persona_seed)
