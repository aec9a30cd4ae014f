"""Synthetic end-of-chat ratings (no person made them) where annotators differ in harshness.

Each annotator has a bias drawn from N(0, ``bias_sd``^2) and rates a few models; with
``harsh_on_best`` the harshest annotators are the ones who rate the best model, which is
exactly when raw means mislead and calibration is needed.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def simulate_ratings(quality: dict[str, float], annotators: int, per_annotator: int, bias_sd: float = 1.0,
                     noise_sd: float = 1.0, models_per_annotator: int = 2, harsh_on_best: bool = False,
                     persona_rate: dict[str, float] | None = None, seed: int = 0, rounded: bool = False,
                     low: float = 1, high: float = 4) -> pd.DataFrame:
    """One engagingness rating per dialogue; ``per_annotator`` dialogues per annotator."""
    rng = np.random.default_rng(seed)
    names = list(quality)
    q = np.array([quality[n] for n in names])
    bias = rng.normal(0.0, bias_sd, annotators)
    order = np.argsort(q)
    chosen = np.empty((annotators, models_per_annotator), dtype=int)
    if harsh_on_best:
        # the harshest half rate the best model (and one other); the kindest half never do
        harsh = np.argsort(bias)
        best, rest = order[-1], order[:-1]
        for rank, a in enumerate(harsh):
            if rank < annotators // 2:
                chosen[a] = [best] + list(rng.choice(rest, models_per_annotator - 1, replace=False))
            else:
                chosen[a] = rng.choice(rest, models_per_annotator, replace=False)
    else:
        for a in range(annotators):
            chosen[a] = rng.choice(len(names), models_per_annotator, replace=False)
    ann = np.repeat(np.arange(annotators), per_annotator)
    model = chosen[ann, rng.integers(0, models_per_annotator, len(ann))]
    score = q[model] + bias[ann] + rng.normal(0.0, noise_sd, len(ann))
    if rounded:
        score = np.clip(np.round(score), low, high)
    rates = persona_rate or {}
    correct = [bool(rng.random() < rates[names[m]]) if names[m] in rates else None for m in model]
    return pd.DataFrame({"dialogue": [f"d{i}" for i in range(len(ann))], "worker": [f"w{a}" for a in ann],
                         "model": np.array(names, dtype=object)[model], "question": "engagingness",
                         "score": score, "persona_choice_correct": pd.array(correct, dtype="boolean")})
