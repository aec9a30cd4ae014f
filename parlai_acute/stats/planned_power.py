"""Does a planned design reach its planned power? A seeded check of the two-facet plans.

``acute power --pilot``, ``per-turn power --pilot`` and ``ssa power --pilot`` turn a pilot's
variance components into workers x conversations (dialogues, contexts) by a normal-theory formula
(:func:`parlai_acute.stats.power.crossed_plan`, :func:`~parlai_acute.stats.power.nested_plan`).
The marks come from other tests: the two-way cluster-robust t (CR3) over workers and
conversations, the sign-flip test over workers, the influence-split two-way t over workers and
contexts, with a t reference on few degrees of freedom. Only a simulation can say whether the
plan and the test agree, so each function here

1. draws one pilot from a known design (:mod:`parlai_acute.stats.crossed_designs`: worker taste,
   conversation / dialogue / context effects on the logit scale),
2. estimates its variance components with the estimator the command uses and plans with the
   planner the command uses, for the true difference (the design's population value),
3. draws ``replicates`` studies of the planned size from the true design, at the effect and with
   the models equal, and analyses each with the test the protocol's analysis runs (the same
   vectorised functions as the ``crossed_calibration`` benchmark),

and returns the planned sizes, the planned power and the achieved power and null mark rate.
``scale`` < 1 runs a deliberately under-sized study (``scale`` x the planned workers, and x the
conversations or contexts): it must fall clearly short, or the check could not fail. Used by
tests/stats/test_planned_power.py and the ``planned_power`` benchmark (docs/benchmarks.md).

Measured (4 pilots x 1,000 studies per row): ACUTE 77-79 % and per-turn 79 % where 80 % was
planned from a large pilot; static SSA 61 % with the plan for the labels' yes rates (the analysis
tests the replies' majorities) and 75-79 % with the plan for the majorities
(:data:`parlai_acute.ssa.power.MAJORITY_NOTE`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from parlai_acute.stats import crossed_designs as cd
from parlai_acute.stats import power as pw
from parlai_acute.stats.inference import difference_split_tests, multiway_tests, scaled_votes, sign_flip_pvalues

__all__ = ["PROTOCOLS", "acute", "per_turn", "ssa", "ssa_majority", "check"]

PROTOCOLS = ("acute", "per-turn", "ssa", "ssa-majority")


def _rates(p_effect: np.ndarray, p_null: np.ndarray, alpha: float) -> dict:
    return {"achieved_power": float(np.mean(np.nan_to_num(p_effect, nan=1.0) < alpha)),
            "null_rate": float(np.mean(np.nan_to_num(p_null, nan=1.0) < alpha))}


def acute(effect: float = 0.3, conversations: int = 20, pilot_workers: int = 30, pilot_conversations: int = 30,
          per_worker: int = 10, replicates: int = 500, seed: int = 0, alpha: float = 0.05, power: float = 0.8,
          scale: float = 1.0) -> dict:
    """ACUTE-Eval, conversations recombined (each judgment draws A's and B's conversation from
    pools of ``conversations`` per model): the pilot's components (:func:`pw.pilot_components`,
    what ``acute power --pilot`` runs on its judgments), the workers :func:`pw.crossed_plan` needs
    at ``conversations`` per model, and the analysis' mark (:func:`multiway_tests` over worker,
    A's and B's conversation) on studies of that size."""
    design = "acute-recombined"
    pilot = cd.simulate(design, pilot_conversations, effect, 1, seed, workers=pilot_workers, per_worker=per_worker)
    comp = pw.pilot_components(pilot["d"] - pilot["d"].mean(), pilot["worker"], [pilot["conv_a"], pilot["conv_b"]])
    truth = cd.true_value(design, effect)  # mean of +1 / -1: twice the win-rate difference
    plan = pw.crossed_plan(truth, comp, per_worker, [conversations], alpha, power)
    row = plan["rows"][0]
    out = {"protocol": "acute", "design": design, "effect_logit": effect, "win_rate_difference": truth / 2,
           "components": comp, "conversations": conversations, "per_worker": per_worker,
           "planned_workers": row["workers"], "planned_power": power, "why": row["why"]}
    if row["workers"] is None:
        return out
    workers, levels = max(2, math.ceil(scale * row["workers"])), max(2, math.ceil(scale * conversations))
    p = []
    for eff, s in ((effect, seed + 1), (0.0, seed + 2)):
        sim = cd.simulate(design, levels, eff, replicates, s, workers=workers, per_worker=per_worker)
        p.append(multiway_tests(sim["column"], sim["d"], [sim["worker"], sim["conv_a"], sim["conv_b"]], replicates,
                                1 - alpha)["p"])
    return {**out, "workers": workers, "simulated_conversations": levels, "df": min(workers, levels) - 1,
            **_rates(*p, alpha)}


def per_turn(effect: float = 0.3, dialogues_per_worker: int = 4, turns: int = 8, pilot_workers: int = 20,
             replicates: int = 500, seed: int = 0, alpha: float = 0.05, power: float = 0.8,
             scale: float = 1.0) -> dict:
    """Per-turn PM-SOBA, dialogues nested in workers: the pilot's worker / dialogue / turn
    components (:func:`pw.nested_components`, what ``per-turn power --pilot`` runs), the workers
    :func:`pw.nested_plan` needs at ``dialogues_per_worker``, and the analysis' mark (the sign-flip
    test over workers, seeded patterns as the analysis draws them) on studies of that size."""
    design = "per-turn-nested"
    pilot = cd.simulate(design, pilot_workers, effect, 1, seed, per_worker=dialogues_per_worker, inner=turns)
    comp = pw.nested_components(pilot["d"] - pilot["d"].mean(), pilot["worker"], pilot["dialogue"])
    truth = cd.true_value(design, effect)
    plan = pw.nested_plan(truth, comp, [dialogues_per_worker], turns, alpha, power)
    planned = plan["rows"][0]["workers"]
    workers = max(2, math.ceil(scale * planned))
    p = []
    for eff, s in ((effect, seed + 1), (0.0, seed + 2)):
        sim = cd.simulate(design, workers, eff, replicates, s, per_worker=dialogues_per_worker, inner=turns)
        sums = np.bincount(sim["column"] * workers + sim["worker"], weights=sim["d"],
                           minlength=replicates * workers).reshape(replicates, workers).T
        p.append(sign_flip_pvalues(sums, seed=1))
    return {"protocol": "per-turn", "design": design, "effect_logit": effect, "win_rate_difference": truth / 2,
            "components": comp, "dialogues_per_worker": dialogues_per_worker, "turns": turns,
            "planned_workers": planned, "planned_power": power, "why": "", "workers": workers,
            "df": workers - 1, **_rates(*p, alpha)}


def _ssa_pilot_table(sim: dict, contexts: int) -> pd.DataFrame:
    """A simulated static SSA pilot as the labels table ``ssa power --pilot`` reads (the columns
    :func:`parlai_acute.ssa.power.pilot_facets` uses)."""
    item = sim["label_item"]
    return pd.DataFrame({"context_id": "c" + pd.Series(sim["context"][item]).astype(str),
                         "conversation": "", "model": np.where(sim["is_b"][item], "b", "a"),
                         "worker": "w" + pd.Series(sim["worker"]).astype(str),
                         "sensible": sim["vote"], "specific": sim["vote"]})


def ssa_majority(effect: float = 0.5, contexts: int = 50, pilot_contexts: int = 40, pilot_workers: int = 40,
                 pilot_labels: int = 5, replicates: int = 500, seed: int = 0, alpha: float = 0.05, power: float = 0.8,
                 scale: float = 1.0) -> dict:
    """Static SSA, the plan for the yes-majority difference the analysis tests
    (:func:`parlai_acute.ssa.power.majority_table`: the split's variance parts from the pilot, its
    labels per reply held), on studies of that size analysed by :func:`difference_split_tests`."""
    from parlai_acute.ssa import power as ssa_power

    design = "ssa-static"
    pilot = cd.simulate(design, pilot_contexts, effect, 1, seed, workers=pilot_workers, inner=pilot_labels)
    comp = ssa_power.majority_components(_ssa_pilot_table(pilot, pilot_contexts))
    truth = cd.true_value(design, effect, labels=pilot_labels)
    plan = ssa_power.majority_table([truth], comp, [contexts], alpha, power)[0]
    row = plan["rows"][0]
    out = {"protocol": "ssa-majority", "design": design, "effect_logit": effect, "rate_difference": truth,
           "components": comp, "contexts": contexts, "planned_workers": row["workers"], "planned_power": power,
           "why": row["why"]}
    if row["workers"] is None:
        return out
    workers, levels = max(pilot_labels, math.ceil(scale * row["workers"])), max(2, math.ceil(scale * contexts))
    return {**out, **_ssa_studies(design, levels, workers, pilot_labels, effect, replicates, seed, alpha)}


def _ssa_studies(design: str, levels: int, workers: int, labels: int, effect: float, replicates: int, seed: int,
                 alpha: float) -> dict:
    """Static SSA studies of the planned size (``levels`` contexts, ``workers``, ``labels`` per reply),
    at the effect and at none, each analysed by the SSA analysis' own mark (the replies' yes
    majorities, :func:`difference_split_tests`): the size and the achieved power and null rate."""
    p = []
    for eff, s in ((effect, seed + 1), (0.0, seed + 2)):
        sim = cd.simulate(design, levels, eff, replicates, s, workers=workers, inner=labels)
        column, is_b, item = sim["column"], sim["is_b"], sim["label_item"]
        part = scaled_votes(2 * column[item] + is_b[item], sim["vote"], sim["pivotal"])
        p.append(difference_split_tests(column, is_b, sim["value"], sim["context"], item, sim["worker"], part,
                                        replicates, 1 - alpha)["p"])
    return {"workers": workers, "simulated_contexts": levels, "labels_per_reply": labels,
            "df": min(workers, levels) - 1, **_rates(*p, alpha)}


def ssa(effect: float = 0.5, contexts: int = 50, pilot_contexts: int = 40, pilot_workers: int = 40,
        pilot_labels: int = 3, replicates: int = 500, seed: int = 0, alpha: float = 0.05, power: float = 0.8,
        scale: float = 1.0) -> dict:
    """Static SSA, workers x contexts crossed: the pilot read as ``ssa power --pilot`` reads a
    labels table (:func:`parlai_acute.ssa.power.pilot_components`), the workers and labels per
    reply :func:`parlai_acute.ssa.power.crossed_table` plans at ``contexts`` for the true
    difference of the labels' yes rates, and the analysis' mark
    (:func:`difference_split_tests` of the replies' yes majorities) on studies of that size (labels
    per reply rounded to a whole number)."""
    from parlai_acute.ssa import power as ssa_power

    design = "ssa-static"
    pilot = cd.simulate(design, pilot_contexts, effect, 1, seed, workers=pilot_workers, inner=pilot_labels)
    comp = ssa_power.pilot_components(_ssa_pilot_table(pilot, pilot_contexts))
    truth = cd.true_value(design, effect, labels=1)  # difference of the labels' yes rates
    plan = ssa_power.crossed_table([truth], comp, None, [contexts], alpha, power)[0]
    row = plan["rows"][0]
    out = {"protocol": "ssa", "design": design, "effect_logit": effect, "rate_difference": truth,
           "components": comp, "contexts": contexts, "per_worker": plan["per_worker"],
           "planned_workers": row["workers"], "planned_power": power, "why": row["why"]}
    if row["workers"] is None:
        return out
    workers, levels = max(2, math.ceil(scale * row["workers"])), max(2, math.ceil(scale * contexts))
    labels = int(min(workers, max(1, round(row["labels_per_reply"]))))
    return {**out, **_ssa_studies(design, levels, workers, labels, effect, replicates, seed, alpha)}


def check(protocol: str, **kwargs) -> dict:
    """One protocol's planned-power check (``protocol`` in :data:`PROTOCOLS`)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    return {"acute": acute, "per-turn": per_turn, "ssa": ssa, "ssa-majority": ssa_majority}[protocol](**kwargs)
