"""Synthetic SSA labels for examples, tests and benchmarks (no person made them).

Each model has a true chance that a reply makes sense and that a sensible reply is
specific; every item draws its own true verdicts, and each worker reports them with
probability ``1 - noise`` (otherwise flips a coin), so workers disagree as people do.
Models answer the same contexts (``context_id``), as in a static SSA run.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from parlai_acute.ssa.labels import labels_table


def simulate_labels(models: dict[str, tuple[float, float]], contexts: int, labels_per_item: int = 5,
                    workers: int = 50, noise: float = 0.2, seed: int = 0, validate: bool = True) -> pd.DataFrame:
    """``models``: name -> (P(sensible), P(specific | sensible)). One item per model and
    context, ``labels_per_item`` distinct workers per item (drawn from ``workers``)."""
    rng = np.random.default_rng(seed)
    names = sorted(models)
    m, c, k = len(names), contexts, labels_per_item
    p_sens = np.array([models[n][0] for n in names])[:, None]
    p_spec = np.array([models[n][1] for n in names])[:, None]
    true_sens = rng.random((m, c)) < p_sens
    true_spec = true_sens & (rng.random((m, c)) < p_spec)
    worker = np.argsort(rng.random((m, c, workers)), axis=2)[:, :, :k]  # k distinct workers per item

    def report(truth):
        coin = rng.random((m, c, k)) < 0.5
        return np.where(rng.random((m, c, k)) < noise, coin, truth[:, :, None])

    sens = report(true_sens)
    spec = report(true_spec) & sens
    model_idx, ctx_idx, _ = np.indices((m, c, k))
    frame = pd.DataFrame({
        "item": [f"{names[a]}:{b}" for a, b in zip(model_idx.ravel(), ctx_idx.ravel())],
        "model": np.array(names, dtype=object)[model_idx.ravel()],
        "worker": [f"w{w}" for w in worker.ravel()],
        "sensible": sens.ravel(), "specific": spec.ravel(), "source": "static",
        "context_id": [f"ctx{b}" for b in ctx_idx.ravel()]})
    return labels_table(frame) if validate else frame


def simulate_conversation_verdicts(rates: tuple[float, float], conversations: int, items_per_conversation: int,
                                   replicates: int, conversation_sd: float = 0.0, seed: int = 0) -> np.ndarray:
    """Interactive SSA as arrays, for calibration tests: the majority verdicts (e.g.
    sensible) of ``items_per_conversation`` replies in each of ``conversations`` chats per
    model, for two models with true rates ``rates``; each conversation's logit is shifted
    by ``Normal(0, conversation_sd)`` (a chat that goes well goes well throughout).
    Returns (replicates, 2 * conversations, items) bool; the first ``conversations`` rows
    are the first model's."""
    rng = np.random.default_rng(seed)
    logit = np.log(np.asarray(rates, float) / (1 - np.asarray(rates, float)))
    base = np.repeat(logit, conversations)[None, :, None]
    shift = rng.normal(0.0, conversation_sd, (replicates, 2 * conversations, 1)) if conversation_sd > 0 else 0.0
    eta = base + shift + np.zeros((replicates, 2 * conversations, items_per_conversation))
    return rng.random(eta.shape) < 1 / (1 + np.exp(-eta))
