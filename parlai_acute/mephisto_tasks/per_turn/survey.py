"""End-of-chat questions of the per-turn task: ConvAI2's ratings and persona detection (Dinan et al. 2019).

After the chat the worker rates the partner on 1-4 Likert questions (engagingness as in the
ConvAI2 report, and any of the others named in ``survey_questions``; their wording and anchors
are in :mod:`.texts`), each with an optional reason, then sees two personas -- the model's and
a random other one that is neither the worker's nor the model's -- in random order and picks
the one the partner was using.
"""
from __future__ import annotations

import hashlib
import random

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.per_turn import texts

SCALE = (1, 2, 3, 4)


def questions(keys: str) -> list[dict]:
    """The survey's questions from a comma-separated list of keys (engagingness always first)."""
    chosen = ["engagingness"] + [k.strip() for k in (keys or "").split(",") if k.strip() and k.strip() != "engagingness"]
    unknown = [k for k in chosen if k not in texts.SURVEY]
    if unknown:
        raise UserError(f"survey question {unknown[0]!r} is unknown; choose from {', '.join(texts.SURVEY)}")
    return texts.survey_questions(chosen)


def persona_choice(model_persona: list[str], worker_persona: list[str], seed: int, dialogue_id: str,
                   pool: list[list[str]] | None = None) -> dict:
    """The two personas shown (the model's and a random other one, in random order), and which is right."""
    from parlai_acute.tasks import sources

    rng = random.Random(int(hashlib.sha1(f"{seed}:{dialogue_id}:persona".encode()).hexdigest(), 16))
    others = [p for p in (pool or sources.personas()) if p != model_persona and p != worker_persona]
    decoy = rng.choice(others)
    options = [model_persona, decoy]
    rng.shuffle(options)
    return {"options": [" ".join(p) for p in options], "correct": options.index(model_persona)}


def validate(answer: dict, asked: list[dict], personas: dict | None) -> dict:
    """The stored survey: scores 1-4 for every question, optional reasons, the persona picked."""
    scores, reasons = answer.get("scores"), answer.get("reasons") or {}
    if not isinstance(scores, dict):
        raise ValueError("Please answer every question.")
    out = {"scores": {}, "reasons": {}}
    for q in asked:
        value = scores.get(q["key"])
        if not isinstance(value, int) or isinstance(value, bool) or value not in SCALE:
            raise ValueError(f"Please answer: {q['text']}")
        out["scores"][q["key"]] = value
        out["reasons"][q["key"]] = " ".join(str(reasons.get(q["key"]) or "").split())[:500]
    if personas is not None:
        pick = answer.get("persona")
        if not isinstance(pick, int) or isinstance(pick, bool) or pick not in (0, 1):
            raise ValueError(texts.PERSONA_MISSING)
        out.update(persona_options=personas["options"], persona_pick=pick, persona_correct=pick == personas["correct"])
    return out
