"""Synthetic ACUTE-Eval judgments from known Bradley-Terry strengths.

Used to check the analysis against a known truth (A/A false-positive rate, recovery of a
ranking) and by the benchmark. Each judgment picks a model pair uniformly, randomises
which side each model is shown on, and lets an annotator with an optional preference for
the left side choose: P(left wins) = sigmoid(theta_left - theta_right + left_bias).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from parlai_acute.acute.judgments import COLUMNS

__all__ = ["simulate_judgments", "arena_battles"]


def simulate_judgments(strengths: dict[str, float], n: int, seed: int = 0, workers: int = 50,
                       dialogues_per_model: int = 20, left_bias: float = 0.0, question_key: str = "engaging",
                       reason: str = "more engaging and specific", worker_sd: float = 0.0, tie: float = 0.0,
                       both_bad: float = 0.0) -> pd.DataFrame:
    """``n`` judgments as a tidy table with the columns of :data:`~parlai_acute.acute.judgments.COLUMNS`.

    ``worker_sd``: each worker's own taste, the sd (log-odds) of a worker's shift of any one
    matchup (each model gets a N(0, worker_sd^2 / 2) bonus per worker), so one worker's
    judgments are correlated as real ones are; judgments go to workers in turn.

    ``tie``: Davidson's tie parameter nu (0: the forced choice): P(tie) = nu sqrt(pi_l pi_r) /
    (pi_l + pi_r + nu sqrt(pi_l pi_r)) with pi = exp(strength), the wins share the rest as
    Bradley-Terry says; ``both_bad``: the share of ties judged "both bad".
    """
    rng = np.random.default_rng(seed)
    names = np.array(list(strengths))
    theta = np.array([strengths[m] for m in names], dtype=float)
    k = len(names)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k  # a different model
    swap = rng.random(n) < 0.5  # left/right randomisation
    left, right = np.where(swap, b, a), np.where(swap, a, b)
    worker = np.arange(n) % workers
    taste = rng.normal(0.0, worker_sd / np.sqrt(2), size=(workers, k)) if worker_sd > 0 else np.zeros((workers, k))
    shift = taste[worker, left] - taste[worker, right]
    p_left = 1 / (1 + np.exp(-(theta[left] - theta[right] + left_bias + shift)))
    left_wins = rng.random(n) < p_left
    tied = np.zeros(n, dtype=bool)
    bad = np.zeros(n, dtype=bool)
    if tie > 0:  # the forced choice draws nothing more: its tables stay as they were
        d = theta[left] - theta[right] + left_bias + shift
        p_tie = tie / (2 * np.cosh(d / 2) + tie)  # nu sqrt(pi_l pi_r) / (pi_l + pi_r + nu sqrt(pi_l pi_r))
        tied = rng.random(n) < p_tie
        bad = tied & (rng.random(n) < both_bad)
    dl = rng.integers(0, dialogues_per_model, n)
    dr = rng.integers(0, dialogues_per_model, n)
    dialogue_left = np.char.add(np.char.add(names[left].astype(str), "-"), dl.astype(str))
    dialogue_right = np.char.add(np.char.add(names[right].astype(str), "-"), dr.astype(str))
    pair = np.where(dialogue_left < dialogue_right, np.char.add(np.char.add(dialogue_left, "|"), dialogue_right),
                    np.char.add(np.char.add(dialogue_right, "|"), dialogue_left))
    df = pd.DataFrame({
        "run_id": "sim", "unit_id": np.arange(n).astype(str), "assignment_id": np.arange(n).astype(str),
        "worker": np.char.add("w", worker.astype(str)), "pair_id": pair,
        "model_left": names[left], "model_right": names[right],
        "dialogue_left": dialogue_left, "dialogue_right": dialogue_right,
        "winner": np.where(tied, "", np.where(left_wins, names[left], names[right])),
        "loser": np.where(tied, "", np.where(left_wins, names[right], names[left])),
        "winner_side": np.where(tied, "", np.where(left_wins, "left", "right")),
        "outcome": np.where(bad, "both_bad", np.where(tied, "tie", "win")), "reason": reason, "question": "",
        "question_key": question_key, "is_onboarding": False, "onboarding_correct": None,
        "timestamp": np.arange(n, dtype=float), "duration": 30.0,
    })
    return df[list(COLUMNS)]


def arena_battles(strengths: dict[str, float], n: int, seed: int = 0, voters: int = 40, tie: float = 1.0,
                  both_bad: float = 0.3) -> list[dict]:
    """``n`` battles in Chatbot Arena's released layout (``clean_battle_*.json``'s fields:
    question_id, model_a, model_b, winner in model_a / model_b / tie / tie (bothbad), judge, turn,
    anony, language, tstamp), drawn as :func:`simulate_judgments` draws judgments (Davidson's
    ``tie``): the fixture the importer's tests and docs read (Arena's data are never shipped)."""
    table = simulate_judgments(strengths, n, seed=seed, workers=voters, tie=tie, both_bad=both_bad)
    rng = np.random.default_rng(seed + 1)
    languages = rng.choice(["English", "English", "English", "German", "Chinese"], size=n)
    turns = rng.choice([1, 1, 1, 2, 3], size=n)
    winner = np.where(table["outcome"] == "both_bad", "tie (bothbad)", np.where(
        table["outcome"] == "tie", "tie", np.where(table["winner"] == table["model_left"], "model_a", "model_b")))
    return [{"question_id": f"{seed:04d}{i:06x}", "model_a": str(r.model_left), "model_b": str(r.model_right),
             "winner": str(w), "judge": f"arena_user_{r.worker}", "turn": int(t), "anony": True,
             "language": str(lang), "tstamp": 1_700_000_000.0 + 37.5 * i}
            for i, (r, w, t, lang) in enumerate(zip(table.itertuples(index=False), winner, turns, languages))]
