"""Seeded studies with two sampled facets, many at once, and how the marks behave on them.

The calibration tests (tests/stats/test_crossed_calibration.py) and the ``crossed_calibration``
benchmark measure the same thing, so both call these functions: a study is a flat array of
+1 / -1 judgments (B won / A won) with the codes of its facets, and ``column`` says which of
the R simulated studies a judgment belongs to, so one call of the vectorised tests of
:mod:`parlai_acute.stats.inference` runs all R.

Designs (issue 23), logit P(B wins) = effect + worker taste + conversation (dialogue) effect:

* ``acute-pool``: a pool of ``size`` conversation pairs reused by ``size`` workers x 10
  judgments; each conversation's quality ~ N(0, 1) (the pair's effect is B's minus A's),
  worker taste ~ N(0, 0.5). The mark: :func:`~parlai_acute.stats.inference.multiway_tests`
  over worker, A's conversation and B's conversation (what the ACUTE analysis runs).
* ``acute-recombined``: the same, but each judgment draws A's and B's conversation
  independently from pools of ``size`` each (conversations recombined across pairs).
* ``per-turn-nested``: per-turn PM-SOBA, ``size`` workers x 4 dialogues x 8 turns, worker
  sd 1.0, dialogue sd 0.6; the mark: the sign-flip test over workers (the unit the per-turn
  analysis picks when workers repeat), beside the sign-flip test over dialogues it used before.
* ``ssa-static``: static SSA, two models reply to ``size`` contexts, each reply labelled by 5
  distinct workers of a pool of ``size`` (about 10 labels per worker); logit P(yes) = 0.4 +
  effect (B) + context difficulty (sd 1.0) + context x model (sd 0.5) + worker leniency (sd 0.5)
  + worker x model taste (sd 1.0); the measure is the share of replies with a yes majority. The
  mark: :func:`~parlai_acute.stats.inference.difference_split_tests` over contexts and workers
  (what the SSA analysis runs; CR2 on the context part, a t on the contexts that carry it),
  beside the same with CR3 and min(contexts, workers) - 1 df (conservative at 8 levels) and the
  sign-flip test over contexts it used before.
* ``ppi-static-ssa``: the same static SSA labels, and a model judge that answers B's labelled
  replies and 5 x ``size`` more (each to a fresh context) from the reply's latent quality plus
  noise (sd 0.7). The estimand: B's sensibleness (yes-majority share); the mark: the PPI++
  interval (:func:`~parlai_acute.stats.ppi.ppi_mean_crossed`: contexts and workers both sampled,
  CR3 on the context part, lambda cross-fitted over two folds of contexts) excludes B's share at effect 0 -- at effect 0 that is the null mark rate, at an effect the
  power -- beside the PPI++ interval that treats the replies as independent (what ``ppi`` did).

Every result has the null mark rate (effect 0), the coverage of the true value and the power
at the effect, beside a reference that knows the true design: a Wald test with the estimator's
true standard deviation (its Monte Carlo sd over the R studies).
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from parlai_acute.stats.inference import (difference_split_tests, multiway_tests, pivotal, scaled_votes,
                                          sign_flip_pvalues)

__all__ = ["DESIGNS", "EFFECTS", "simulate", "true_value", "calibrate", "peeking", "peeking_ssa", "peeking_ssa_rate"]

DESIGNS = ("acute-pool", "acute-recombined", "per-turn-nested", "ssa-static", "ppi-static-ssa")
#: Effects on the logit scale: weak and strong.
EFFECTS = {"weak": 0.3, "strong": 0.8}
PER_WORKER = 10  # ACUTE judgments per worker
DIALOGUES_PER_WORKER, TURNS = 4, 8  # per-turn
SD = {"acute": (0.5, 1.0), "per-turn": (1.0, 0.6)}  # (worker sd, conversation / dialogue sd)
#: static SSA: labels per reply, base logit, sds of context, context x model, worker, worker x model
SSA = {"labels": 5, "base": 0.4, "context": 1.0, "context_model": 0.5, "worker": 0.5, "worker_model": 1.0}


def simulate(design: str, size: int, effect: float, replicates: int, seed: int, *, workers: int | None = None,
             per_worker: int | None = None, inner: int | None = None) -> dict:
    """R = ``replicates`` studies of ``design`` with ``size`` levels of each facet. Returns
    column (judgment -> study), d (+1 / -1), worker, conv_a, conv_b (ACUTE) or dialogue
    (per-turn) codes, each within its study. A planned design has its own sizes (the planned-power
    simulation, :mod:`parlai_acute.stats.planned_power`): ``workers`` (default ``size``; ``size`` is
    then the conversations per model, dialogues per worker x workers, or contexts), ``per_worker``
    (ACUTE judgments per worker; per-turn dialogues per worker) and ``inner`` (per-turn turns per
    dialogue; SSA labels per reply)."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, got {design!r}")
    rng = np.random.default_rng(seed)
    r = replicates
    w = size if workers is None else workers
    if design in ("ssa-static", "ppi-static-ssa"):
        return _simulate_ssa(rng, size, effect, r, w, inner or SSA["labels"])
    if design.startswith("acute"):
        sd_w, sd_c = SD["acute"]
        m = per_worker or PER_WORKER
        n = w * m
        column = np.repeat(np.arange(r), n)
        worker = np.tile(np.repeat(np.arange(w), m), r)
        conv_a = rng.integers(0, size, r * n)
        conv_b = rng.integers(0, size, r * n) if design == "acute-recombined" else conv_a
        quality_a, quality_b = rng.normal(0, sd_c, (r, size)), rng.normal(0, sd_c, (r, size))
        taste = rng.normal(0, sd_w, (r, w))
        eta = effect + taste[column, worker] + quality_b[column, conv_b] - quality_a[column, conv_a]
        d = np.where(rng.random(r * n) < 1 / (1 + np.exp(-eta)), 1.0, -1.0)
        return {"column": column, "d": d, "worker": worker, "conv_a": conv_a, "conv_b": conv_b}
    sd_w, sd_d = SD["per-turn"]
    q, turns = per_worker or DIALOGUES_PER_WORKER, inner or TURNS
    dialogues = w * q
    n = dialogues * turns
    column = np.repeat(np.arange(r), n)
    dialogue = np.tile(np.repeat(np.arange(dialogues), turns), r)
    worker = dialogue // q
    eta = (effect + rng.normal(0, sd_w, (r, w))[column, worker]
           + rng.normal(0, sd_d, (r, dialogues))[column, dialogue])
    d = np.where(rng.random(r * n) < 1 / (1 + np.exp(-eta)), 1.0, -1.0)
    return {"column": column, "d": d, "worker": worker, "dialogue": dialogue}


def _simulate_ssa(rng, size: int, effect: float, r: int, workers: int, k: int) -> dict:
    """Static SSA studies: items (r x 2 models x ``size`` contexts), each with ``k`` labels by
    distinct workers of ``workers``. Items: column, is_b, context, value (yes majority); labels:
    item, worker, vote, pivotal."""
    if not 1 <= k <= workers:
        raise ValueError(f"labels per reply must be between 1 and the workers ({workers}), got {k}")
    items = r * 2 * size
    column = np.repeat(np.arange(r), 2 * size)
    is_b = np.tile(np.repeat([False, True], size), r)
    context = np.tile(np.arange(size), 2 * r)
    eta = (SSA["base"] + effect * is_b + rng.normal(0, SSA["context"], (r, size))[column, context]
           + rng.normal(0, SSA["context_model"], items))
    worker = np.argsort(rng.random((items, workers)), axis=1)[:, :k]  # k distinct workers per item
    label_item = np.repeat(np.arange(items), k)
    worker = worker.ravel()
    lenient = rng.normal(0, SSA["worker"], (r, workers))
    taste = rng.normal(0, SSA["worker_model"], (r, workers, 2))
    lc = column[label_item]
    eta_l = eta[label_item] + lenient[lc, worker] + taste[lc, worker, is_b[label_item].astype(int)]
    vote = (rng.random(len(label_item)) < 1 / (1 + np.exp(-eta_l))).astype(float)
    yes = np.bincount(label_item, weights=vote, minlength=items)
    value = (2 * yes > k).astype(float)
    return {"column": column, "is_b": is_b, "context": context, "value": value, "label_item": label_item,
            "worker": worker, "vote": vote, "pivotal": pivotal(yes[label_item] - vote, k), "eta": eta}


def true_value(design: str, effect: float, draws: int = 2_000_000, seed: int = 99, labels: int | None = None) -> float:
    """The mean difference (+1 / -1) over the population of workers and conversations: what a
    verdict about the models estimates (Monte Carlo integral of the design's logistic model).
    SSA: the difference of the yes-majority rates of ``labels`` labels per reply (default 5;
    1: the labels' own yes rates); ``ppi-static-ssa``: B's yes-majority share."""
    rng = np.random.default_rng(seed)
    if design == "ppi-static-ssa":
        k = labels or SSA["labels"]
        n = draws // k
        eta = (SSA["base"] + effect + rng.normal(0, SSA["context"], n)
               + rng.normal(0, SSA["context_model"], n))[:, None]
        eta = eta + rng.normal(0, SSA["worker"], (n, k)) + rng.normal(0, SSA["worker_model"], (n, k))
        return float(np.mean(2 * (rng.random((n, k)) < 1 / (1 + np.exp(-eta))).sum(axis=1) > k))
    if design == "ssa-static":  # a fresh context and k fresh workers per reply: P(yes majority | B) - (| A)
        k = labels or SSA["labels"]
        n = draws // k
        shares = []
        for b in (0.0, effect):
            eta = (SSA["base"] + b + rng.normal(0, SSA["context"], n) + rng.normal(0, SSA["context_model"], n))[:, None]
            eta = eta + rng.normal(0, SSA["worker"], (n, k)) + rng.normal(0, SSA["worker_model"], (n, k))
            shares.append(np.mean((2 * (rng.random((n, k)) < 1 / (1 + np.exp(-eta))).sum(axis=1)) > k))
        return float(shares[1] - shares[0])
    if design.startswith("acute"):
        sd_w, sd_c = SD["acute"]
        spread = np.sqrt(sd_w ** 2 + 2 * sd_c ** 2)
    else:
        sd_w, sd_d = SD["per-turn"]
        spread = np.sqrt(sd_w ** 2 + sd_d ** 2)
    eta = effect + rng.normal(0, spread, draws)
    return float(np.mean(2 / (1 + np.exp(-eta)) - 1))


def _whole_residual(s: dict, r: int, alpha: float) -> dict:
    """The split the SSA analysis does not use (kept to measure why): every label carries its whole
    item's residual, so a worker's cell also holds the other labellers' tastes."""
    from parlai_acute.stats.inference import split_facet_tests

    column, is_b, value = s["column"], s["is_b"], s["value"]
    group = 2 * column + is_b
    n = np.bincount(group).astype(float)
    mean = np.bincount(group, weights=value) / n
    score = np.where(is_b, 1.0, -1.0) / n[group] * (value - mean[group])
    return split_facet_tests(column, mean[1::2] - mean[0::2], score, s["context"], s["label_item"], s["worker"],
                             score[s["label_item"]], r, 1 - alpha)


#: the PPI design's judge: judge-only replies per labelled one, and its noise on the reply's latent quality
PPI_JUDGE = {"only_per_labelled": 5, "noise": 0.7}


def _ppi_ssa(s: dict, size: int, r: int, seed: int, alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                np.ndarray, np.ndarray]:
    """B's share by PPI++ in each of the R studies of ``ppi-static-ssa``: (estimate, crossed lower,
    upper, independent-items lower, upper). The judge-only replies get fresh contexts, drawn here."""
    from parlai_acute.stats.ppi import ppi_mean, ppi_mean_crossed

    rng = np.random.default_rng(seed + 7)
    mine = np.flatnonzero(s["is_b"])  # B's labelled replies, study by study (size each)
    f = (s["eta"][mine] + rng.normal(0, PPI_JUDGE["noise"], len(mine)) > 0).astype(float).reshape(r, size)
    big = PPI_JUDGE["only_per_labelled"] * size
    eta_u = (SSA["base"] + s.get("effect", 0.0)
             + rng.normal(0, SSA["context"], (r, big)) + rng.normal(0, SSA["context_model"], (r, big)))
    fu = (eta_u + rng.normal(0, PPI_JUDGE["noise"], (r, big)) > 0).astype(float)
    y = s["value"][mine].reshape(r, size)
    context = s["context"][mine].reshape(r, size)
    position = np.full(len(s["value"]), -1)
    position[mine] = np.tile(np.arange(size), r)
    label_b = s["is_b"][s["label_item"]]
    item, worker, vote, pivot = (s[key][label_b] for key in ("label_item", "worker", "vote", "pivotal"))
    study = s["column"][item]
    out = np.full((5, r), np.nan)
    for i in range(r):
        at = study == i
        slope = np.full(at.sum(), pivot[at].mean())
        res = ppi_mean_crossed(y[i], f[i], fu[i], context[i], position[item[at]], worker[at], vote[at], slope,
                               alpha)
        old = ppi_mean(y[i], f[i], fu[i], alpha)
        out[:, i] = res["estimate"], res["lower"], res["upper"], old["lower"], old["upper"]
    return tuple(out)


def _totals(column, codes, d, r, levels):
    key = column * levels + codes
    sums = np.bincount(key, weights=d, minlength=r * levels).reshape(r, levels).T
    counts = np.bincount(key, minlength=r * levels).reshape(r, levels).T.astype(float)
    return sums, counts


def calibrate(design: str, size: int, effect: float, replicates: int, seed: int, alpha: float = 0.05,
              n_resamples: int = 2000) -> dict:
    """Null mark rate, coverage and power of the mark on ``design`` (and of the test it replaces
    and of the reference that knows the design). Returns {candidate: {"null", "coverage",
    "power"}} with rates in [0, 1]; the first candidate is the mark."""
    out = {}
    for kind, eff in (("null", 0.0), ("power", effect)):
        s = simulate(design, size, eff, replicates, seed + (0 if kind == "null" else 1))
        truth = 0.0 if eff == 0 else true_value(design, eff)
        r = replicates
        results = {}
        if design == "ppi-static-ssa":
            s["effect"] = eff
            null_value = true_value(design, 0.0)
            truth = true_value(design, eff)
            estimate, low, high, old_low, old_high = _ppi_ssa(s, size, r, seed + (0 if kind == "null" else 1), alpha)
            # p < alpha exactly when the interval excludes the null share; no interval: no mark
            results["mark: PPI++ two-way cluster-robust t (CR3, influence split, cross-fitted lambda), workers x contexts"] = (
                np.where(np.isnan(low) | ((low <= null_value) & (null_value <= high)), 1.0, 0.0),
                (low <= truth) & (truth <= high))
            results["PPI++ with the replies independent (workers fixed)"] = (
                np.where((old_low <= null_value) & (null_value <= old_high), 1.0, 0.0),
                (old_low <= truth) & (truth <= old_high))
            estimate = estimate - null_value  # the reference tests the same null
            truth = truth - null_value
        elif design == "ssa-static":
            column, is_b = s["column"], s["is_b"]
            part = scaled_votes(2 * column[s["label_item"]] + is_b[s["label_item"]], s["vote"], s["pivotal"])
            mark = difference_split_tests(column, is_b, s["value"], s["context"], s["label_item"], s["worker"], part,
                                          r, 1 - alpha)
            estimate = mark["estimate"]
            name = "mark: two-way cluster-robust t (CR2, influence split, df: contexts carrying it), workers x contexts"
            results[name] = (mark["p"], (mark["low"] <= truth) & (truth <= mark["high"]))
            cr3 = difference_split_tests(column, is_b, s["value"], s["context"], s["label_item"], s["worker"], part,
                                         r, 1 - alpha, small_sample="cr3")
            results["two-way CR3, influence split, t on min(G) - 1"] = (
                cr3["p"], (cr3["low"] <= truth) & (truth <= cr3["high"]))
            whole = _whole_residual(s, r, alpha)
            results["two-way CR3, whole item residual in each of its workers' cells"] = (
                whole["p"], (whole["low"] <= truth) & (truth <= whole["high"]))
            # one facet: each context's B - A majority, sign-flipped over contexts (workers fixed)
            per_context = (s["value"] * np.where(is_b, 1.0, -1.0)).reshape(r, 2, size).sum(axis=1).T
            p = sign_flip_pvalues(per_context, n_resamples=n_resamples, seed=1)
            covered = sign_flip_pvalues(per_context - truth, n_resamples=n_resamples, seed=1) >= alpha
            results["sign-flip over contexts (workers fixed)"] = (p, covered)
        else:
            column, d = s["column"], s["d"]
            estimate = np.bincount(column, weights=d, minlength=r) / np.bincount(column, minlength=r)
        if design.startswith("acute"):
            mark = multiway_tests(column, d, [s["worker"], s["conv_a"], s["conv_b"]], r, 1 - alpha)
            results["mark: two-way cluster-robust t (CR3), workers x conversations"] = (
                mark["p"], (mark["low"] <= truth) & (truth <= mark["high"]))
            cr1 = multiway_tests(column, d, [s["worker"], s["conv_a"], s["conv_b"]], r, 1 - alpha, small_sample="cr1")
            results["two-way cluster-robust t (CR1)"] = (cr1["p"], (cr1["low"] <= truth) & (truth <= cr1["high"]))
            one = (s["worker"], size)
            results_name = "sign-flip over workers (conversations fixed)"
        elif design == "per-turn-nested":
            one = (s["dialogue"], size * DIALOGUES_PER_WORKER)
            results_name = "sign-flip over dialogues (workers ignored)"
            sums, counts = _totals(column, s["worker"], d, r, size)
            p = sign_flip_pvalues(sums, n_resamples=n_resamples, seed=1)
            covered = sign_flip_pvalues(sums - truth * counts, n_resamples=n_resamples, seed=1) >= alpha
            results["mark: sign-flip over workers (dialogues nested)"] = (p, covered)
        if design not in ("ssa-static", "ppi-static-ssa"):
            sums, counts = _totals(column, one[0], d, r, one[1])
            p = sign_flip_pvalues(sums, n_resamples=n_resamples, seed=1)
            covered = sign_flip_pvalues(sums - truth * counts, n_resamples=n_resamples, seed=1) >= alpha
            results[results_name] = (p, covered)
        sd = float(np.sqrt(np.mean((estimate - truth) ** 2)))
        z = stats.norm.ppf(1 - alpha / 2)
        results["reference: Wald with the true sd"] = (2 * stats.norm.sf(np.abs(estimate) / sd),
                                                       np.abs(estimate - truth) <= z * sd)
        for name, (p, covered) in results.items():
            row = out.setdefault(name, {})
            rate = float(np.mean(np.nan_to_num(p, nan=1.0) < alpha))
            if kind == "null":
                row["null"], row["coverage"] = rate, float(np.mean(covered))
            else:
                row["power"], row["coverage_at_effect"] = rate, float(np.mean(covered))
    return out


def peeking(size: int, workers: int, effect: float, replicates: int, seed: int, every: int = 2,
            alpha: float = 0.05, design: str = "acute-pool") -> dict:
    """How often each sequential rule declares a difference at some look, on ACUTE studies with a
    pool of ``size`` conversation pairs reused by ``workers`` workers x 10 judgments (``design``),
    looked at after every ``every`` workers (in the order they finished). At ``effect`` 0 the
    share is the false-stop rate; else the power. Rules (keys of the result):

    * ``one-facet``: the betting sequence over per-worker means (status' sequence where each
      conversation serves one judgment): the conversations held fixed;
    * ``two-facet``: :func:`~parlai_acute.stats.sequential.crossed_sequence` alone (asymptotic,
      multiway CR3 variance, both facets random);
    * ``stop rule``: what status and the live stop rule do: stop when both have excluded no
      difference on the same side;
    * ``bonferroni looks``: the analysis' fixed two-way t at alpha / (number of looks) at each look,
      and the one-facet sequence (a group-sequential rule: needs the number of looks in advance);
    * ``fixed once``: the fixed two-way t once, at the last look (no peeking): the power of the
      analysis of the full study, the reference for the sequential rules' power.

    Returns {rule: {"rate", "median_workers"}} (workers at the stop, over the runs that stopped) and
    ``components``: the median number of connected components of the worker-conversation graph at
    the first look with enough levels (the independent units a betting sequence could run over)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from parlai_acute.stats.inference import min_clusters
    from parlai_acute.stats.sequential import (bets_for, crossed_decide, crossed_sequence, crossing_index,
                                               log_capital)

    s = simulate(design, size, effect, replicates, seed, workers=workers)
    column, value, worker = s["column"], (s["d"] + 1) / 2, s["worker"]
    looks = np.arange(every, workers + 1, every)
    need = min_clusters(alpha)
    means = (np.bincount(column * workers + worker, weights=value, minlength=replicates * workers)
             / PER_WORKER).reshape(replicates, workers)
    crossed_at = crossing_index(log_capital(means, 0.5, alpha, bets_for([PER_WORKER])), alpha)
    one = np.where(crossed_at >= 0, (crossed_at // every + 1) * every, -1)  # the look that sees the crossing
    one = np.where(one > workers, -1, one)
    one_side = np.sign(np.cumsum(means - 0.5, axis=1)[np.arange(replicates), np.maximum(crossed_at, 0)])
    seq = crossed_sequence(value, worker, [s["conv_a"], s["conv_b"]], looks, alpha, need, study=column,
                           studies=replicates)
    decided = crossed_decide(seq, 0.5)
    first = decided["first"]
    two = np.where(first >= 0, looks[np.maximum(first, 0)], -1)
    two_side = np.where(decided["decided"] == "above", 1, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = 2 * stats.t.sf(np.abs(seq["estimate"] - 0.5) / seq["se"], np.maximum(seq["df"], 1))
    hit = seq["informative"] & (p < alpha / len(looks))
    fixed = np.where(hit.any(axis=1), looks[np.argmax(hit, axis=1)], -1)
    once = np.where(seq["informative"][:, -1] & (p[:, -1] < alpha), looks[-1], -1)
    both = (one > 0) & (two > 0) & (one_side == two_side)
    out = {}
    for name, at in (("one-facet", one), ("two-facet", two), ("stop rule", np.where(both, np.maximum(one, two), -1)),
                     ("bonferroni looks", np.where((one > 0) & (fixed > 0), np.maximum(one, fixed), -1)),
                     ("fixed once", once)):
        stopped = at > 0
        out[name] = {"rate": float(stopped.mean()),
                     "median_workers": float(np.median(at[stopped])) if stopped.any() else None}
    first_look = worker < max(need, every)
    counts = []
    for r in range(min(replicates, 50)):
        sel = first_look & (column == r)
        w, c = worker[sel], s["conv_a"][sel]
        graph = coo_matrix((np.ones(len(w)), (w, workers + c)), shape=(workers + size,) * 2)
        labels = connected_components(graph, directed=False)[1]
        counts.append(len(np.unique(labels[np.unique(np.concatenate([w, workers + c]))])))
    out["components"] = float(np.median(counts))
    return out


def peeking_ssa(size: int, workers: int, effect: float, replicates: int, seed: int, every: int = 10,
                alpha: float = 0.05) -> dict:
    """:func:`peeking` for static SSA (``ssa-static``: two models reply to ``size`` contexts, each
    reply labelled by 5 distinct workers of a pool of ``workers``, workers x contexts crossed), one
    comparison (B's yes-majority share minus A's) looked at after every ``every`` contexts, in the
    order they completed. Rules:

    * ``one-facet``: what status used before: each model's betting sequence over its per-context
      values at alpha / 2 (:func:`~parlai_acute.stats.sequential.confidence_sequence`, status' own),
      decided when the two are disjoint: the workers held fixed;
    * ``two-facet``: :func:`~parlai_acute.stats.sequential.split_sequence` alone (the analysis'
      split variance, both facets random);
    * ``stop rule``: what status and the live stop rule do: both decided, on the same side;
    * ``fixed once``: the analysis' fixed two-way test (CR2, split) once on all ``size`` contexts.

    Returns {rule: {"rate", "median_contexts"}} (contexts at the stop, over the runs that stopped)."""
    from parlai_acute.stats.inference import min_clusters, scaled_votes
    from parlai_acute.stats.sequential import crossed_decide, split_sequence

    s = simulate("ssa-static", size, effect, replicates, seed, workers=workers)
    looks = np.arange(every, size + 1, every)
    need = min_clusters(alpha)
    per = s["value"].reshape(replicates, 2, size)  # (runs, A/B, contexts in completion order)
    (low_a, up_a), (low_b, up_b) = (binary_mixture_sequence(per[:, i], alpha / 2) for i in (0, 1))
    above, below = low_b[:, looks - 1] > up_a[:, looks - 1], up_b[:, looks - 1] < low_a[:, looks - 1]
    apart = above | below
    first_apart = np.argmax(apart, axis=1)
    one = np.where(apart.any(axis=1), looks[first_apart], -1)
    one_side = np.where(above[np.arange(replicates), first_apart], 1, -1)
    seq = split_sequence(s["context"], s["is_b"], s["value"], s["context"], s["label_item"], s["worker"], s["vote"],
                         s["pivotal"], looks, alpha, need, study=s["column"], studies=replicates)
    decided = crossed_decide(seq, 0.0)
    first = decided["first"]
    two = np.where(first >= 0, looks[np.maximum(first, 0)], -1)
    two_side = np.where(decided["decided"] == "above", 1, -1)
    part = scaled_votes(2 * s["column"][s["label_item"]] + s["is_b"][s["label_item"]], s["vote"], s["pivotal"])
    fixed = difference_split_tests(s["column"], s["is_b"], s["value"], s["context"], s["label_item"], s["worker"],
                                   part, replicates, 1 - alpha)
    once = np.where(np.nan_to_num(fixed["p"], nan=1.0) < alpha, size, -1)
    both = (one > 0) & (two > 0) & (one_side == two_side)
    out = {}
    for name, at in (("one-facet", one), ("two-facet", two), ("stop rule", np.where(both, np.maximum(one, two), -1)),
                     ("fixed once", once)):
        stopped = at > 0
        out[name] = {"rate": float(stopped.mean()),
                     "median_contexts": float(np.median(at[stopped])) if stopped.any() else None}
    return out


def peeking_ssa_rate(size: int, workers: int, replicates: int, seed: int, every: int = 10,
                     alpha: float = 0.05) -> dict:
    """How often one model's rate sequence misses the population rate at some look (``ssa-static``,
    model A, looked at after every ``every`` contexts): ``two-facet``, status' interval where
    workers cross contexts (:func:`~parlai_acute.stats.sequential.split_sequence` of the one
    model's mean), and ``one-facet``, its betting sequence over contexts (workers fixed). The
    population rate (fresh contexts and workers) is :func:`true_value`'s Monte Carlo integral."""
    from parlai_acute.stats.inference import min_clusters
    from parlai_acute.stats.sequential import split_sequence

    truth = _share(0.0)
    s = simulate("ssa-static", size, 0.0, replicates, seed, workers=workers)
    a = ~s["is_b"]
    position = np.full(len(a), -1)
    position[a] = np.arange(a.sum())
    mine = position[s["label_item"]] >= 0
    looks = np.arange(every, size + 1, every)
    seq = split_sequence(s["context"][a], np.ones(a.sum(), bool), s["value"][a], s["context"][a],
                         position[s["label_item"][mine]], s["worker"][mine], s["vote"][mine], s["pivotal"][mine],
                         looks, alpha, min_clusters(alpha), study=s["column"][a], studies=replicates, single=True)
    low, high = np.maximum.accumulate(seq["lower"], axis=1), np.minimum.accumulate(seq["upper"], axis=1)
    one_low, one_high = binary_mixture_sequence(s["value"][a].reshape(replicates, size), alpha)
    one_low, one_high = one_low[:, looks - 1], one_high[:, looks - 1]
    return {"two-facet": float(((low > truth) | (high < truth)).any(axis=1).mean()),
            "one-facet": float(((one_low > truth) | (one_high < truth)).any(axis=1).mean()), "truth": truth}


def _share(effect: float, draws: int = 400_000, seed: int = 99) -> float:
    """A model's yes-majority share over fresh contexts and workers (``ssa-static``'s logistic model)."""
    rng = np.random.default_rng(seed)
    k = SSA["labels"]
    eta = (SSA["base"] + effect + rng.normal(0, SSA["context"], draws) + rng.normal(0, SSA["context_model"], draws))
    eta = eta[:, None] + rng.normal(0, SSA["worker"], (draws, k)) + rng.normal(0, SSA["worker_model"], (draws, k))
    return float(np.mean(2 * (rng.random((draws, k)) < 1 / (1 + np.exp(-eta))).sum(axis=1) > k))


def binary_mixture_sequence(x: np.ndarray, alpha: float, grid: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ends, after every observation, of the mixture betting confidence sequence
    of :func:`~parlai_acute.stats.sequential.confidence_sequence` (``bets="mixture"``, every
    observation a look, running intersection) for many runs of 0/1 outcomes at once (``x``: runs
    x T, T <= 400): on 0/1 outcomes each constant bet's wealth is (q/m)^k ((1-q)/(1-m))^(n-k), so
    the log wealth is a function of (k, n) that is convex in m, every look's set is an interval,
    and the running intersection is the running max of the lower ends and min of the upper ones.
    The same numbers as that function (tests/stats/test_sequential_crossed.py), thousands of runs
    in a second, which the peeking simulation needs."""
    from scipy import special

    from parlai_acute.stats.sequential import GRID, PRIOR, POINTS

    grid = grid or GRID
    x = np.asarray(x, dtype=float)
    runs, t = x.shape
    ms = (np.arange(grid) + 0.5) / grid
    q = stats.beta.ppf((np.arange(POINTS) + 0.5) / POINTS, *PRIOR)
    n = np.arange(1, t + 1)
    k = np.arange(t + 1)
    # log mean_q q^k (1 - q)^(n - k), for every (n, k) with k <= n
    mix = special.logsumexp(k[None, :, None] * np.log(q) + (n[:, None, None] - k[None, :, None]) * np.log1p(-q),
                            axis=-1) - np.log(POINTS)
    log_w = (mix[..., None] - k[None, :, None] * np.log(ms) - (n[:, None, None] - k[None, :, None]) * np.log1p(-ms))
    inside = log_w < np.log(1 / alpha)  # (n, k, grid)
    any_in = inside.any(axis=-1)
    low_cell = np.where(any_in, np.argmax(inside, axis=-1), grid)
    high_cell = np.where(any_in, grid - 1 - np.argmax(inside[..., ::-1], axis=-1), -1)
    counts = np.cumsum(x, axis=1).astype(int)
    low_i = np.maximum.accumulate(low_cell[n - 1, counts], axis=1)
    high_i = np.minimum.accumulate(high_cell[n - 1, counts], axis=1)
    half = 0.5 / grid
    est = counts / n
    ok = low_i <= high_i
    lower = np.where(ok, np.maximum(ms[np.minimum(low_i, grid - 1)] - half, 0.0), np.maximum(est - half, 0.0))
    upper = np.where(ok, np.minimum(ms[np.maximum(high_i, 0)] + half, 1.0), np.minimum(est + half, 1.0))
    return lower, upper
