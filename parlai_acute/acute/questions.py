"""The question asked in each comparison: the ACUTE-Eval paper's optimised wordings, or your own.

Li, Weston & Roller (2019), Table 2: wordings chosen for the best inter-annotator agreement.
"""
from __future__ import annotations

from parlai_acute.errors import UserError

PRESETS: dict[str, str] = {
    "engaging": "Who would you prefer to talk to for a long conversation?",
    "interesting": ("If you had to say one of these speakers is interesting and one is boring, "
                    "who would you say is more interesting?"),
    "humanlike": "Which speaker sounds more human?",
    "knowledgeable": ("If you had to say that one speaker is more knowledgeable and one is more ignorant, "
                      "who is more knowledgeable?"),
}


def resolve(preset: str, custom: str | None = None, custom_key: str = "custom") -> tuple[str, str]:
    """-> (question_key, question text). A custom question wins over the preset."""
    if custom:
        return custom_key, custom
    if preset not in PRESETS:
        raise UserError(f"unknown question preset {preset!r}; use one of {', '.join(PRESETS)} "
                        f"or set mephisto.blueprint.custom_question='...'")
    return preset, PRESETS[preset]
