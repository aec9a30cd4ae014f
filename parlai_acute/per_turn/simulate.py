"""Synthetic per-turn choices with known truth, for tests, the README and the benchmark.

Each model has a ``quality`` on the logit scale. At a model turn of dialogue ``d`` the
candidate of model ``m`` shown at position ``p`` has the score::

    eta = quality[m] + u[d, m] + position_bias * (p == 0),    u[d, m] ~ Normal(0, dialogue_sd)

``u`` is the dependence the analysis must respect: some conversations suit one model, so
its candidates win several turns of the same dialogue. SOBA picks one candidate with
probability proportional to ``exp(eta)``; SATA and SM pick each candidate independently
with probability ``sigmoid(eta)``. The continuation follows the protocol's rule. The rows
go through :func:`~parlai_acute.per_turn.turns.turns_table`, so they are valid input.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.per_turn.turns import COLUMNS, PROTOCOLS, turns_table

_WORDS = np.array("i like music books travel cooking tell me more about your day what do you think weekend "
                  "really that sounds fun my favourite is hiking and you".split())


def default_model_sets(models: list[str], setting: str) -> list[tuple[str, ...]]:
    """The paper's designs: PM pits the first model (baseline) against each other one; MM shows
    all models at once; SM shows one model per dialogue."""
    if setting == "pm":
        if len(models) < 2:
            raise UserError("a pairwise (pm) simulation needs at least two models")
        return [tuple(sorted((models[0], other))) for other in models[1:]]
    if setting == "mm":
        if len(models) < 3:
            raise UserError("a multi-model (mm) simulation needs at least three models")
        return [tuple(sorted(models))]
    if setting == "sm":
        return [(m,) for m in models]
    raise UserError(f"setting must be pm, mm or sm, got {setting!r}")


def simulate_turns(quality: dict[str, float], setting: str, protocol: str, dialogues: int = 40,
                   turns_per_dialogue: int = 10, workers: int = 10, dialogue_sd: float = 0.0,
                   position_bias: float = 0.0, fail_rate: float = 0.0, seed: int = 0,
                   model_sets: list[tuple[str, ...]] | None = None, run_id: str = "simulated",
                   validate: bool = True) -> pd.DataFrame:
    """A turns table of ``dialogues`` x ``turns_per_dialogue`` model turns (see module docstring)."""
    if protocol not in PROTOCOLS or (setting == "sm") != (protocol == "sm"):
        raise UserError(f"protocol {protocol!r} does not go with setting {setting!r}")
    if dialogues < 1 or turns_per_dialogue < 1 or workers < 1:
        raise UserError("dialogues, turns_per_dialogue and workers must be at least 1")
    rng = np.random.default_rng(seed)
    names = list(quality)
    sets = model_sets or default_model_sets(names, setting)
    size = len(sets[0])
    if any(len(s) != size for s in sets):
        raise UserError("every model set of one simulation must have the same number of models")
    q = {m: float(quality[m]) for m in names}
    set_of_dialogue = np.arange(dialogues) % len(sets)
    members = np.array(sets, dtype=object)[set_of_dialogue]  # (D, size)
    quality_dk = np.vectorize(q.get, otypes=[float])(members)
    u = rng.normal(0.0, dialogue_sd, size=(dialogues, size)) if dialogue_sd > 0 else np.zeros((dialogues, size))
    worker_of = rng.integers(0, workers, dialogues)

    n_turns = dialogues * turns_per_dialogue
    d_idx = np.repeat(np.arange(dialogues), turns_per_dialogue)
    t_idx = np.tile(np.arange(turns_per_dialogue), dialogues)
    failed = rng.random((n_turns, size)) < fail_rate
    # positions: a random permutation of the shown candidates of each turn
    keys = np.where(failed, np.inf, rng.random((n_turns, size)))
    order = np.argsort(keys, axis=1)
    position = np.empty((n_turns, size))
    np.put_along_axis(position, order, np.arange(size, dtype=float)[None, :].repeat(n_turns, 0), axis=1)
    position[failed] = np.nan
    eta = quality_dk[d_idx] + u[d_idx] + position_bias * (position == 0)
    shown = ~failed
    if protocol == "soba":
        score = np.where(shown, eta + rng.gumbel(size=eta.shape), -np.inf)
        best = np.argmax(score, axis=1)
        picked = np.zeros((n_turns, size), dtype=bool)
        picked[np.arange(n_turns), best] = True
        picked &= shown
    else:
        picked = shown & (rng.random(eta.shape) < 1 / (1 + np.exp(-eta)))
    n_picked = picked.sum(axis=1)
    n_shown = shown.sum(axis=1)
    # the continuation: one of the picked, else (SATA-Random) one of all shown; SM: the one shown
    pool = np.where((n_picked > 0)[:, None], picked, shown) if protocol != "sm" else shown
    if protocol == "sata_user":
        pool = picked
    draw = np.where(pool, rng.random(pool.shape), -1.0)
    chosen = np.argmax(draw, axis=1)
    continued = np.zeros_like(picked)
    has = pool.any(axis=1)
    continued[np.flatnonzero(has), chosen[has]] = True
    fallback = np.full(n_turns, "picked", dtype=object)
    if protocol in ("sata_random", "sata_user"):
        fallback[n_picked > 1] = "random_picked"
        fallback[n_picked == 0] = "random_all" if protocol == "sata_random" else "user"
    fallback[n_shown == 0] = "none"

    lengths = rng.integers(1, 13, n_turns)
    picks_ = _WORDS[rng.integers(0, len(_WORDS), (n_turns, 12))]
    message = np.array([" ".join(row[:w]) for row, w in zip(picks_.tolist(), lengths)], dtype=object)
    decision = np.round(rng.lognormal(np.log(8.0), 0.6, n_turns), 3)
    dialogue_ids = np.char.add("sim-d", np.arange(dialogues).astype(str)).astype(object)
    worker_ids = np.char.add("sim-w", worker_of.astype(str)).astype(object)
    model_set = np.array(["|".join(s) for s in sets], dtype=object)[set_of_dialogue]
    rep = lambda a: np.repeat(a, size)  # noqa: E731  per-turn value on each candidate row
    flat_models = members[d_idx].ravel()
    table = pd.DataFrame({
        "run_id": run_id, "unit_id": rep(np.char.add("u", d_idx.astype(str)).astype(object)),
        "dialogue": rep(dialogue_ids[d_idx]), "worker": rep(worker_ids[d_idx]), "turn": rep(t_idx),
        "setting": setting, "protocol": protocol, "model_set": rep(model_set[d_idx]), "model": flat_models,
        "position": position.ravel(), "picked": picked.ravel(), "continued": continued.ravel(),
        "fallback": rep(fallback), "incomplete": failed.ravel(),
        "error": np.where(failed.ravel(), "simulated model failure", ""),
        "text": np.char.add(np.char.add(flat_models.astype(str), " reply "), rep(t_idx).astype(str)),
        "worker_message": rep(message),
        "user_reply": rep(np.where(fallback == "user", "simulated worker reply", "")),
        "justification": "", "decision_seconds": rep(decision),
        "latency_seconds": np.round(rng.gamma(4.0, 0.1, n_turns * size), 3),
        "timestamp": rep(1.7e9 + d_idx * 600.0 + t_idx * 30.0), "dialogue_status": "complete",
    })
    table["position"] = table["position"].astype("Int64")
    table = table[list(COLUMNS)]
    return turns_table(table) if validate else table


def model_pairs(models: list[str]) -> list[tuple[str, str]]:
    """Every unordered pair of ``models`` in order."""
    return list(itertools.combinations(models, 2))


def simulate_pick_arrays(k: int, protocol: str, dialogues: int, turns_per_dialogue: int, replicates: int,
                         dialogue_sd: float = 0.0, common_sd: float = 0.0, quality=None, ragged: bool = False,
                         seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Many replicate studies at once, as arrays, for calibration tests and benchmarks
    (no table: thousands of studies in a fraction of a second).

    Returns ``picks`` (replicates, dialogues, turns, k) bool and ``present`` (dialogues,
    turns) bool (False past a dialogue's end when ``ragged``: lengths uniform in [T/2, 3T/2]).
    Scores are ``quality[m] + u[r, d, m] + v[r, d]``: ``u ~ Normal(0, dialogue_sd)`` is the
    dialogue's taste for each model (what makes turns of one dialogue agree), ``v ~
    Normal(0, common_sd)`` how generous the dialogue's worker is with SATA picks. SOBA
    picks one candidate (softmax), SATA each with probability sigmoid(score)."""
    rng = np.random.default_rng(seed)
    q = np.zeros(k) if quality is None else np.asarray(quality, dtype=float)
    u = rng.normal(0.0, dialogue_sd, (replicates, dialogues, 1, k)) if dialogue_sd > 0 else 0.0
    v = rng.normal(0.0, common_sd, (replicates, dialogues, 1, 1)) if common_sd > 0 else 0.0
    eta = q + u + v + np.zeros((replicates, dialogues, turns_per_dialogue, k))
    if protocol == "soba":
        best = np.argmax(eta + rng.gumbel(size=eta.shape), axis=-1)
        picks = best[..., None] == np.arange(k)
    elif protocol in ("sata_random", "sata_user", "sm"):
        picks = rng.random(eta.shape) < 1 / (1 + np.exp(-eta))
    else:
        raise UserError(f"protocol must be soba, sata_random, sata_user or sm, got {protocol!r}")
    present = np.ones((dialogues, turns_per_dialogue), dtype=bool)
    if ragged:
        top = max(1, turns_per_dialogue // 2)
        lengths = rng.integers(top, max(top + 1, (3 * turns_per_dialogue) // 2 + 1), dialogues)
        present = np.arange(turns_per_dialogue)[None, :] < np.minimum(lengths, turns_per_dialogue)[:, None]
        present[:, :top] = True
    return picks & present[None, :, :, None], present
