"""``-t parlai_acute.tasks.persona``: each speaker gets its own persona (PersonaChat style).

Personas are our own, shipped in ``tasks/data/personas.json`` (36 profiles of four
sentences). Each agent's first observation is its persona as ``your persona: ...``
lines, the convention of ConvAI2/BlendedSkillTalk models. In human chat the person and
the model each get one. The teacher lists the persona pairs (for ``display_data``).
"""
from __future__ import annotations

from parlai_acute.tasks import sources
from parlai_acute.tasks.base import seeded_task

# speaker 1's persona as the teacher's text, both personas as fields
DefaultTeacher, SelfChatWorld, InteractiveWorld = seeded_task(
    "persona", sources.persona_seed, lambda: len(sources.personas()),
    lambda seed: dict(zip(("persona", "partner_persona"), seed.info["personas"])))
