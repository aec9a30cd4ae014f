"""Sample size for static SSA: labels, workers and contexts needed to detect a difference between
two models' sensibleness (or specificity).

What SSA marks is a difference between two models' rates over replies to the same contexts
(:mod:`parlai_acute.ssa.estimands`). In static labelling a worker labels replies to many contexts
and the contexts are a sample too, so the analysis' headline test treats both as sampled (the
two-way cluster-robust t over workers and contexts, :func:`parlai_acute.ssa.analysis.crossed_tests`).
A plan must then say how many of each: more workers cannot make up for too few contexts, because
the contexts' own share of the variance only shrinks with more contexts.

* **Without a pilot**: labels treated as independent, the normal approximation of two rates
  ``base_rate`` and ``base_rate + delta`` (statsmodels, Cohen's h, two samples of equal size):
  labels per model. Neither facet's variance is known, so it is a floor, not a plan.
* **With a pilot** (a labels table whose workers labelled several contexts): each label becomes
  the signed outcome the difference is made of -- per pair of models (a, b), ``+(vote - b's yes
  rate)`` for a label of b's reply, ``-(vote - a's yes rate)`` for one of a's, so a worker's
  general leniency and a context's general difficulty (shared by both models' replies) cancel as
  they do in the paired difference; what stays is a worker's taste for one model over the other
  and a context that suits one model better. Their variance components come from
  :func:`parlai_acute.stats.power.pilot_components` (moment estimators: the mean product of two
  labels sharing a worker, a context) and the plan from
  :func:`parlai_acute.stats.power.crossed_plan`, on the signed scale where the difference is
  twice the mean (so ``delta / 2`` there), with the t on min(workers, contexts) - 1 df of the
  analysis' test. It plans for the mean of the labels, where the analysis tests each reply's
  majority: measured by simulation (:mod:`parlai_acute.stats.planned_power`), studies of the
  planned size reach about 61 % power with the majorities of 5 labels per reply where their label
  means reach 77 %.
* **The plan for the majorities** (:func:`majority_table`, what to use): the analysis' own
  variance (:func:`parlai_acute.stats.inference.difference_split_tests` on the pilot: one
  context's variance of the majority difference, and the covariance of one worker's labels in
  two contexts, :func:`majority_components`) scaled to C contexts and W workers at the pilot's
  labels per reply (:func:`parlai_acute.stats.power.split_plan`), for a difference of the
  yes-majority rates the analysis reports: 75-79 % where 80 % was planned from a large pilot.
  :data:`MAJORITY_NOTE` says which table to use. Neither facet ever goes
  below :func:`parlai_acute.stats.inference.min_clusters`.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.ssa.estimands import QUESTIONS

__all__ = ["CONTEXT_STEPS", "SECONDS_SOURCE", "MAJORITY_NOTE", "sample_size_table", "pilot_facets", "pilot_components",
           "crossed_table", "majority_components", "majority_table", "label_seconds"]

#: Contexts the two-facet plan is printed for (beside the fewest that can do).
CONTEXT_STEPS = (10, 20, 50, 100, 200, 500)
#: Which of the two plans to use (printed and recorded with them): the planned-power simulation
#: (:mod:`parlai_acute.stats.planned_power`) measured the label plan at about 61 % power where 80 %
#: was planned at 5 labels per reply, and the majority plan at 75-79 % (docs/benchmarks.md).
MAJORITY_NOTE = ("the first table plans for the labels' yes rates; the analysis tests the replies' yes majorities, whose "
                 "test has less power on the same labels when several label each reply (measured: 61% where 80% "
                 "was planned at 5 labels per reply): use the second table, planned for the majorities at the "
                 "pilot's labels per reply (measured 75-79%; docs/benchmarks.md planned_power)")
#: where a pilot's labels store their time, in words (said beside the cost figure)
SECONDS_SOURCE = "decision_seconds (seconds the worker took for the label) of the pilot's labels"


def sample_size_table(deltas, base_rate: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """One row per difference: labels per model (and in all, two models) the normal approximation
    needs when every label is independent -- what the plan is when neither facet matters."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    if not 0 < base_rate < 1:
        raise UserError(f"base_rate={base_rate} must be strictly between 0 and 1 (the weaker model's yes rate)",
                        param="base_rate")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise UserError(f"alpha and power must be strictly between 0 and 1, got {alpha} and {power}",
                        param=("alpha", "power"))
    rows = []
    for delta in deltas:
        high = base_rate + delta
        if delta == 0 or not 0 < high < 1:
            raise UserError(f"delta={delta} must be non-zero with base_rate + delta = {high:g} inside (0, 1)",
                            param=("delta", "base_rate"))
        h = abs(proportion_effectsize(high, base_rate))
        n = float(NormalIndPower().solve_power(effect_size=h, alpha=alpha, power=power, ratio=1,
                                               alternative="two-sided"))
        per_model = math.ceil(n - 1e-9)
        rows.append({"delta": delta, "p_a": base_rate, "p_b": high, "alpha": alpha, "power": power,
                     "labels_per_model": per_model, "labels": 2 * per_model})
    return pd.DataFrame(rows)


def pilot_facets(pilot: pd.DataFrame, measure: str = "sensibleness") -> dict:
    """A pilot's labels as signed outcomes of every pair of models, with both facets: ``value``,
    ``worker`` and ``context`` (each per pair, so pairs never share a level), ``per_worker`` (mean
    labels of one worker in one pair), ``pairs``. Only static labels (a ``context_id``, no
    conversation) of contexts holding replies of both models of a pair count."""
    if measure not in QUESTIONS:
        raise UserError(f"measure must be one of {', '.join(QUESTIONS)}, got {measure!r}", param="measure")
    static = pilot[(pilot["context_id"].astype(str) != "") & (pilot["conversation"].astype(str) == "")]
    if static.empty:
        raise UserError("the pilot has no static labels (rows with a context_id and no conversation); give the "
                        "labels table of a static SSA pilot", param="pilot")
    models = sorted(static["model"].astype(str).unique())
    if len(models) < 2:
        raise UserError(f"the pilot has labels of one model only ({models[0]}); a plan for a difference needs "
                        f"replies of two or more models to the same contexts", param="pilot")
    if not (static.groupby("worker")["context_id"].nunique() > 1).any():
        raise UserError("in the pilot no worker labelled replies to more than one context, so a worker's share of "
                        "the variance cannot be told from the contexts'; run a pilot in which each worker labels "
                        "several contexts", param="pilot")
    vote = static[QUESTIONS[measure]].astype(float)
    model = static["model"].astype(str)
    context, worker = static["context_id"].astype(str), static["worker"].astype(str)
    values, workers, contexts, sizes = [], [], [], []
    for a, b in itertools.combinations(models, 2):
        mine = model.isin([a, b])
        both = model[mine].groupby(context[mine]).nunique()
        keep = mine & context.map(both).eq(2)
        if not keep.any():
            continue
        v, m = vote[keep], model[keep]
        centred = v - v.groupby(m).transform("mean")
        values.append(np.where(m == b, 1.0, -1.0) * centred.to_numpy())
        pair = f"{b} vs {a}|"
        workers.append((pair + worker[keep]).to_numpy())
        contexts.append((pair + context[keep]).to_numpy())
        sizes.append(worker[keep].value_counts().to_numpy())
    if not values:
        raise UserError("no context of the pilot has replies of two models; a static SSA pilot gives every model's "
                        "reply to the same contexts (`ssa generate`)", param="pilot")
    return {"value": np.concatenate(values), "worker": np.concatenate(workers),
            "context": np.concatenate(contexts), "per_worker": float(np.concatenate(sizes).mean()),
            "pairs": len(values), "models": models}


def pilot_components(pilot: pd.DataFrame, measure: str = "sensibleness") -> dict:
    """Worker, context and residual variance of a label's signed outcome (:func:`pilot_facets`),
    with ``per_worker`` and the levels it rests on (``workers``, ``contexts``: per pair)."""
    from parlai_acute.stats import power as pw

    facets = pilot_facets(pilot, measure)
    comp = pw.pilot_components(facets["value"], facets["worker"], [facets["context"]])
    comp = {"measure": measure, "total": comp["total"], "worker": comp["worker"], "context": comp["conversation"],
            "residual": comp["residual"], "workers": comp["workers"], "contexts": comp["conversations"],
            "labels": comp["judgments"], "per_worker": facets["per_worker"], "pairs": facets["pairs"]}
    return comp


def crossed_table(deltas, components: dict, per_worker: float | None = None, contexts=CONTEXT_STEPS,
                  alpha: float = 0.05, power: float = 0.8) -> list[dict]:
    """Per difference: the workers each number of contexts needs (each context holding both models'
    replies), the labels and labels per reply that gives (at least one label per reply: workers are
    raised to it), and ``contexts_min``, the fewest contexts any number of workers can do with."""
    from parlai_acute.stats import power as pw

    m = per_worker if per_worker is not None else components["per_worker"]
    if not m >= 1:
        raise UserError(f"per_worker (labels one worker gives in a pair of models) must be at least 1, got {m}",
                        param="per_worker")
    scale = {"worker": components["worker"], "conversation": components["context"],
             "residual": components["residual"]}
    plans = []
    for delta in deltas:
        if delta == 0:
            raise UserError("a difference of 0 cannot be detected; give a non-zero delta", param="delta")
        plan = pw.crossed_plan(delta / 2, scale, m, list(contexts), alpha, power, facet="contexts")
        rows = []
        for row in plan["rows"]:
            c = row["conversations"]
            if row["workers"] is None:
                rows.append({"contexts": c, "workers": None, "labels": None, "labels_per_reply": None,
                             "why": row["why"]})
                continue
            workers = max(row["workers"], math.ceil(2 * c / m - 1e-9))
            labels = math.ceil(workers * m - 1e-9)
            rows.append({"contexts": c, "workers": workers, "labels": labels, "labels_per_reply": labels / (2 * c),
                         "df": min(workers, c) - 1, "why": ""})
        plans.append({"delta": delta, "per_worker": m, "variance_target": 4 * plan["variance_target"],
                      "contexts_min": plan["conversations_min"], "rows": rows})
    return plans


def majority_components(pilot: pd.DataFrame, measure: str = "sensibleness") -> dict:
    """What the analysis' test of the yes-majority difference rests on, from a static pilot, per
    pair of models (averaged over pairs, weighted by contexts): the two parts of the variance of
    :func:`parlai_acute.stats.inference.difference_split_tests` (the test ``ssa analyze`` runs),
    scaled to one context and to one pair of a worker's labels in different contexts:
    ``context_var`` = V_C x C (one context's variance of the majority difference) and
    ``worker_cov`` = (V_W - V_WxC) x C^2 / (ordered pairs of one worker's labels in different
    contexts); ``labels_per_reply`` (mean), ``contexts``, ``workers``, ``pairs``. The input of
    :func:`parlai_acute.stats.power.split_plan`."""
    from parlai_acute.stats.inference import difference_split_tests, pivotal, scaled_votes

    facets = pilot_facets(pilot, measure)  # the checks and the pairs the label plan uses
    static = pilot[(pilot["context_id"].astype(str) != "") & (pilot["conversation"].astype(str) == "")]
    question = QUESTIONS[measure]
    model = static["model"].astype(str)
    parts = []
    for a, b in itertools.combinations(facets["models"], 2):
        mine = model.isin([a, b])
        both = model[mine].groupby(static["context_id"].astype(str)[mine]).nunique()
        rows = static[mine & static["context_id"].astype(str).map(both).eq(2)]
        if rows.empty:
            continue
        item, items = pd.factorize(rows["context_id"].astype(str) + "\x1f" + rows["model"].astype(str))
        vote = rows[question].astype(float).to_numpy()
        n = np.bincount(item).astype(float)
        yes = np.bincount(item, weights=vote)
        first = pd.Series(np.arange(len(item))).groupby(item).first().to_numpy()
        is_b = rows["model"].astype(str).to_numpy()[first] == b
        context, contexts = pd.factorize(rows["context_id"].astype(str).to_numpy()[first])
        worker = pd.factorize(rows["worker"].astype(str))[0]
        part = scaled_votes(is_b[item].astype(int), vote, pivotal(yes[item] - vote, n[item]))
        res = difference_split_tests(np.zeros(len(items), np.int64), is_b, (2 * yes > n).astype(float), context, item,
                                     worker, part, 1)
        c = len(contexts)
        per_worker = np.bincount(worker).astype(float)
        per_cell = np.bincount(pd.factorize(pd.Series(worker).astype(str) + "|" + context[item].astype(str))[0])
        pairs_apart = float((per_worker ** 2).sum() - (per_cell.astype(float) ** 2).sum())
        parts.append((c, float(res["v_context"][0]) * c,
                      float(res["v_workers"][0]) * c * c / pairs_apart if pairs_apart > 0 else 0.0,
                      float(n.mean()), int(per_worker.size)))
    weights = np.array([p[0] for p in parts], float)
    mean = (lambda i: float(np.average([p[i] for p in parts], weights=weights)))
    return {"measure": measure, "context_var": mean(1), "worker_cov": mean(2), "labels_per_reply": mean(3),
            "contexts": int(weights.sum()), "workers": int(sum(p[4] for p in parts)), "pairs": len(parts)}


def majority_table(deltas, components: dict, contexts=CONTEXT_STEPS, alpha: float = 0.05,
                   power: float = 0.8) -> list[dict]:
    """Per difference of two models' yes-majority rates (what ``ssa analyze`` reports and tests):
    the workers each number of contexts needs at the pilot's labels per reply
    (:func:`parlai_acute.stats.power.split_plan` on :func:`majority_components`)."""
    from parlai_acute.stats.power import split_plan

    k = max(1, round(components["labels_per_reply"]))
    return [split_plan(delta, components["context_var"], components["worker_cov"], k, list(contexts), alpha, power)
            for delta in deltas]


def label_seconds(pilot: pd.DataFrame) -> pd.DataFrame:
    """(worker, seconds) of each label with a stored time, for the cost plan."""
    seconds = pd.to_numeric(pilot["decision_seconds"], errors="coerce") if "decision_seconds" in pilot \
        else pd.Series(np.nan, index=pilot.index)
    keep = seconds.notna() & (seconds > 0)
    return pd.DataFrame({"worker": pilot["worker"][keep].astype(str), "seconds": seconds[keep].astype(float)})
