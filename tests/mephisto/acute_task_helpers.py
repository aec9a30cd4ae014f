"""Helpers for the ACUTE-Eval Mephisto task tests: pairings files, free ports, a launcher subprocess.

The launcher runs exactly as a user runs it (``python -m parlai_acute.scripts.main acute launch``),
with the real local architect (Node router), the mock provider and a Mephisto database in a
tmp data directory (``PARLAI_ACUTE_MEPHISTO_DATA``), so ``~/.mephisto`` is never touched.
"""
from __future__ import annotations

import json
from pathlib import Path

from parlai_acute.mephisto_tasks.live.local_run import LocalRun, free_port, launch_cmd, pid_alive  # noqa: F401

Launcher = LocalRun.acute

XSS = "<script>window.__pwned=1</script><b>x</b>"


def dialogue(did: str, model: str, texts: list[str]) -> dict:
    turns = [{"id": model if k % 2 else "other_speaker", "text": t} for k, t in enumerate(texts)]
    return {"id": did, "speakers": ["other_speaker", model], "dialogue": turns}


def make_pairings(n_regular: int, xss_in: int | None = 0) -> list[dict]:
    """One onboarding pair (good_bot must win) and ``n_regular`` model_a vs model_b pairs.

    model_a's turns contain "A-line", model_b's "B-line", so a simulated worker can pick a
    model from the text alone (as a person does: the page never shows model names).
    """
    lines = [{"is_onboarding": True, "speakers_to_eval": ["good_bot", "bad_bot"], "correct_answer": "good_bot",
              "dialogue_dicts": [
                  dialogue("gold-good", "good_bot", ["Hi! How are you?", "Great, I just got back from a hike. Do you hike?",
                                                     "Sometimes.", "Which trail do you like best?"]),
                  dialogue("gold-bad", "bad_bot", ["Hi! How are you?", "i i i i", "What?", "i i i"])]}]
    for n in range(n_regular):
        a_last = XSS if n == xss_in else f"A-line closing {n}"
        lines.append({"is_onboarding": False, "speakers_to_eval": ["model_a", "model_b"],
                      "dialogue_ids": [f"a{n}", f"b{n}"],
                      "dialogue_dicts": [
                          dialogue(f"a{n}", "model_a", [f"Hello {n}", f"A-line hi {n}", "ok", a_last]),
                          dialogue(f"b{n}", "model_b", [f"Hello {n}", f"B-line hi {n}", "ok", f"B-line bye {n}"])]})
    return lines


def write_pairings(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


