"""Prediction-powered inference: a model judge carries the load, people keep the result honest.

The judge answers every item; people answer a random subset. PPI (Angelopoulos, Bates,
Fannjiang, Jordan & Zrnic, Science 2023) estimates a rate as the judge's rate on all items
corrected by the people-minus-judge difference on the items people answered; PPI++
(Angelopoulos, Duchi & Zrnic 2024) weighs the judge by lambda, chosen from the data to
minimise the variance (power tuning):

    theta = mean_people(Y - lambda f) + lambda mean_judge_only(f)
    var   = Var(Y - lambda f) / n + lambda^2 Var(f) / N
    lambda* = Cov(Y, f) / ((1 + n / N) Var(f)),   clipped to [0, 1]

With lambda = 0 it is the people-only estimate, so a useless judge (lambda* near 0) costs
almost nothing, and a biased judge's bias is removed by the correction term whatever it is:
the interval stays valid; only its width depends on how well the judge tracks people. The
"effective number of human judgments" is n x Var(people only) / Var(PPI): how many
people's answers the PPI interval is worth.

The unit is the item: several people's answers to one item are averaged first, so their
correlation is respected. Where the people's items share workers (or conversations), those are
sampled too, and the people's term is cluster-robust over them: over the one unit of each item
(:func:`ppi_mean_clustered`), or over items and workers at once, two-way with CR3 and a t on
min(levels) - 1 df, the project's crossed rule (:func:`ppi_mean_crossed`, where on SSA
majorities lambda is cross-fitted over two folds of contexts, tuned on the other fold; the ranking's
:func:`ppi_bradley_terry` with ``answers``). Measured on seeded A/A studies (tests/stats/
test_ppi_crossed.py, 20 workers x 60 pairs, 3 judgments each, worker sd 0.8, pair sd 1.0): the
crossed interval misses the true rate 5.3 % of the time, the independent-items one 14.1 %.
Items must be a random subset of the judge's items for the
guarantee. The tables over a protocol's estimands (:func:`parlai_acute.judges.ppi.ppi_table`)
weigh the judge only when its answers correlate positively with the people's at level alpha
(:func:`judge_tracks_people`), so a judge that picks a position or answers at random is
reported as adding nothing.
Intervals are normal (Wald) with the plug-in variance, as in the papers; coverage is
checked by simulation (tests/stats/test_ppi.py, benchmarks/bench_ppi.py).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import special, stats

from parlai_acute.errors import UserError

__all__ = ["ppi_mean_clustered", "ppi_mean_crossed", "tuned_lambda", "ppi_mean", "plan", "MIN_PILOT", "judge_tracks_people", "ppi_bradley_terry",
           "bradley_terry_rank_sets"]


def _z(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise UserError(f"alpha={alpha} must be strictly between 0 and 1; 0.05 is usual")
    return float(stats.norm.ppf(1 - alpha / 2))


def tuned_lambda(y: np.ndarray, f: np.ndarray, f_unlabeled: np.ndarray) -> np.ndarray:
    """PPI++ power-tuned weight of the judge, along the last axis (vectorised over runs)."""
    n, big_n = y.shape[-1], f_unlabeled.shape[-1]
    fc = f - f.mean(axis=-1, keepdims=True)
    cov = (fc * (y - y.mean(axis=-1, keepdims=True))).sum(axis=-1) / max(n - 1, 1)
    allf = np.concatenate([f, f_unlabeled], axis=-1)
    var_f = allf.var(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var_f > 0, cov / ((1 + n / big_n) * var_f), 0.0)
    return np.clip(lam, 0.0, 1.0)


def ppi_mean(y, f, f_unlabeled, alpha: float = 0.05, lam: float | None = None) -> dict:
    """PPI++ estimate and interval for the mean of the people's answers ``y`` (items people
    answered, in [0, 1] or any bounded scale), with the judge's answers ``f`` on those items
    and ``f_unlabeled`` on the items only the judge answered. Vectorised over leading axes
    (simulated runs). Returns estimate, lower, upper, se, lambda, and the people-only
    estimate, lower, upper, se, and effective_n beside it."""
    z = _z(alpha)
    y, f, fu = (np.asarray(a, dtype=float) for a in (y, f, f_unlabeled))
    if y.shape != f.shape:
        raise UserError("people's and the judge's answers must be on the same items (same length)")
    n, big_n = y.shape[-1], fu.shape[-1]
    if n < 2:
        raise UserError(f"PPI needs at least 2 items answered by people, got {n}; collect more")
    if big_n < 2:
        raise UserError(f"the judge answered {big_n} item(s) beyond the people's; PPI needs at least 2 (the "
                        f"variance of its answers there enters the interval)")
    lam_ = tuned_lambda(y, f, fu) if lam is None else np.full(y.shape[:-1], float(lam))
    lam_e = lam_[..., None]
    estimate = (y - lam_e * f).mean(axis=-1) + lam_ * fu.mean(axis=-1)
    var = (y - lam_e * f).var(axis=-1, ddof=1) / n + lam_ ** 2 * fu.var(axis=-1, ddof=1) / big_n
    people_var = y.var(axis=-1, ddof=1) / n
    se, people_se = np.sqrt(var), np.sqrt(people_var)
    people = y.mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = np.where(var > 0, n * people_var / var, np.nan)
    out = {"estimate": estimate, "lower": estimate - z * se, "upper": estimate + z * se, "se": se, "lambda": lam_,
           "people_estimate": people, "people_lower": people - z * people_se, "people_upper": people + z * people_se,
           "people_se": people_se, "effective_n": effective, "n_people": n, "n_judge_only": big_n, "alpha": alpha}
    if y.ndim == 1:
        out = {k: (float(v) if isinstance(v, np.ndarray) else v) for k, v in out.items()}
    return out


def ppi_mean_clustered(y, f, f_unlabeled, clusters, alpha: float = 0.05, lam: float | None = None) -> dict:
    """:func:`ppi_mean` where the people's items are nested in sampled units that repeat across
    items (``clusters``: each labelled item's unit, e.g. its worker): the people's term of the
    variance is cluster-robust -- the squared unit totals of y - lambda f, times G / (G - 1) --
    and the interval a t on G - 1 df, because one worker's taste runs through all their items;
    with fewer than :func:`~parlai_acute.stats.inference.min_clusters` (``alpha``) units, no
    interval (NaN) and ``why`` says so.
    The judge-only term keeps its item variance (the judge is one fixed model; its items are the
    sampled unit there). Same keys as :func:`ppi_mean`, plus ``clusters`` and ``why``."""
    from scipy import stats as sps

    from parlai_acute.stats.inference import min_clusters

    out = ppi_mean(y, f, f_unlabeled, alpha, lam)
    y, f, fu = (np.asarray(a, dtype=float) for a in (y, f, f_unlabeled))
    codes, uniques = pd.factorize(pd.Series(np.asarray(clusters).astype(str)))
    g, n = len(uniques), len(y)
    lam_ = out["lambda"]

    def clustered(values):
        totals = np.bincount(codes, weights=values - values.mean(), minlength=g)
        return float((totals ** 2).sum()) / n ** 2 * g / max(g - 1, 1)

    var = clustered(y - lam_ * f) + lam_ ** 2 * fu.var(ddof=1) / len(fu)
    people_var = clustered(y)
    need = min_clusters(alpha)
    if g < need:  # a t on G - 1 df from fewer units cannot give a verdict about the units in general
        nan = float("nan")
        return out | {"lower": nan, "upper": nan, "se": nan, "people_lower": nan, "people_upper": nan,
                      "people_se": nan, "effective_n": nan, "clusters": g,
                      "why": f"only {g} units: an interval about the models in general needs at least {need}"}
    t = float(sps.t.ppf(1 - alpha / 2, max(g - 1, 1)))
    se, people_se = math.sqrt(var), math.sqrt(people_var)
    out |= {"lower": out["estimate"] - t * se, "upper": out["estimate"] + t * se, "se": se,
            "people_lower": out["people_estimate"] - t * people_se, "people_upper": out["people_estimate"] + t * people_se,
            "people_se": people_se, "effective_n": n * people_var / var if var > 0 else float("nan"), "clusters": g,
            "why": ""}
    return out


def ppi_mean_crossed(y, f, f_unlabeled, item_context, label_item, label_worker, label_vote, label_slope=None,
                     alpha: float = 0.05, lam: float | None = None, conversations: tuple | None = None) -> dict:
    """:func:`ppi_mean` where each people's item carries the answers of several workers and the
    workers repeat across items (ACUTE pairs judged by several workers; static SSA replies x
    workers): both the items (or their contexts) and the workers were sampled, so the people's
    term of the variance -- of the rectifier y - lambda f and of the people-only mean -- treats
    both as random, with the two-way cluster-robust variance of the project's crossed inference
    and a t on min(contexts, workers) - 1 df:

    * item values that are **means of their labels** (``label_slope`` None): each label carries
      its own share of its item's rectifier, (vote - lambda f_item - theta) / labels of the item,
      so a worker's labels sum to what that worker moved, and the multiway variance over
      (context, worker) with the CR3 correction is that of the ACUTE analysis
      (:func:`parlai_acute.stats.inference.multiway_tests`). Measured beside the split below on
      seeded A/A studies: 5.5 % at 8 workers where the split fired 7.5 %;
    * item values that are **majorities** (``label_slope``: each label's share of pivotal labels,
      :func:`parlai_acute.stats.inference.pivotal`): a majority is not a sum of its labels, so
      the SSA analysis' influence split (:func:`parlai_acute.stats.inference.split_facet_tests`):
      the items' residuals per context with CR3, plus the cross-products of one worker's label
      parts (slope x centred vote) in different contexts. With ``lam`` None, lambda is
      **cross-fitted** (:func:`_cross_fit`): the contexts split into two folds, each fold's
      rectifier weighed by the lambda tuned on the other fold. On a few dozen binary majorities
      the lambda tuned on the same items is optimistic: it is the lambda that makes *these*
      items' Var(y - lambda f) smallest, so the plug-in variance understates the estimator's. On
      the ``crossed_calibration`` benchmark's ``ppi-static-ssa`` rows (2,000 seeded studies each,
      docs/inference.md) the interval with the tuned lambda missed B's true share in 7.45-9.15 %
      of the studies at 8 and 20 levels (CR2 on contexts; CR3 7.15-7.85 %; a t on one df fewer
      for lambda 6.7-8.4 %), the cross-fitted one in 5.4-6.35 % at 8, 20 and 60 levels (null
      mark rate 3.75-6.35 %). CR3 rather than the SSA analysis' CR2 here: with the cross-fit, CR2
      missed 6.65 % at 20 levels, CR3 6.35 %. Lambda fixed at 1 (plain PPI) held too (4.6-5.5 %),
      at 0 not (8.5 % at 20 levels); the cross-fit keeps a tuned weight (a judge that tracks the
      people poorly is weighed down) and the level.

    With fewer than :func:`~parlai_acute.stats.inference.min_clusters` (``alpha``) levels of either
    facet there is no interval (``lower``/``upper`` NaN) and ``why`` says so in words.

    The judge-only term keeps lambda^2 Var(f) / N over items, not clustered: the judge is one
    fixed function, the same on every item, so no worker's taste enters it and its only sampled
    facet is the item. Where judge-only items share contexts (several replies to one SSA
    context) that context is a facet of this term too, which it does not count: the guarantee then
    needs the judge-only items spread over many contexts. Shared ACUTE conversations are counted
    (``conversations``, below).

    ``conversations`` (item means only; ACUTE pairs whose conversations serve several items): four
    arrays, each label's A and B conversation and each judge-only item's. Then the conversations are
    sampled facets too, as in the ACUTE analysis' ``multiway_tests`` over (worker, A's
    conversation, B's conversation); and the judge-only items, which share those conversations,
    join the same variance as entries of their own item and worker (their term, lambda (f - mean)
    / N, then carries its conversations and its covariance with the people's term). The t is on
    min(contexts, workers, A's and B's conversations) - 1 df.

    Where lambda is cross-fitted, ``lambda`` is the labelled items' mean lambda (the judge's weight
    in the estimate).

    ``y``/``f``: per labelled item, the people's value and the judge's; ``item_context``: each
    labelled item's context (the item itself where items have none); per label: ``label_item``
    (index into ``y``), ``label_worker``, ``label_vote``. Same keys as :func:`ppi_mean`, plus
    ``contexts``, ``workers``, ``conversations`` (the fewer of A's and B's, or None), ``df`` and
    ``why``."""
    from scipy import stats as sps

    from parlai_acute.stats.inference import min_clusters, multiway_tests, split_facet_tests

    out = ppi_mean(y, f, f_unlabeled, alpha, lam)
    y, f, fu = (np.asarray(a, dtype=float) for a in (y, f, f_unlabeled))
    n, lam_ = len(y), out["lambda"]
    label_item = np.asarray(label_item, dtype=np.int64)
    vote = np.asarray(label_vote, dtype=float)
    context = pd.factorize(pd.Series(np.asarray(item_context).astype(str)))[0]
    judge_var = None
    fit = _cross_fit(y, f, fu, context) if label_slope is not None and lam is None else None
    if fit is not None:  # majorities: lambda cross-fitted over two folds of contexts
        lam_, estimate, judge_var = fit
        out |= {"estimate": estimate, "lambda": float(np.mean(lam_))}
    worker = pd.factorize(pd.Series(np.asarray(label_worker).astype(str)))[0]
    # two statistics at once (column 0: the rectifier, PPI's people term; column 1: the people-only mean)
    values = np.column_stack([y - lam_ * f, y])
    theta = values.mean(axis=0)
    if label_slope is None:
        labels = len(label_item)
        per_item = np.bincount(label_item, minlength=n)[label_item]
        own = np.column_stack([vote - lam_ * f[label_item], vote])  # each label's own rectifier
        # label values whose plain mean is theta and whose item totals are the item's residual
        share = (own - theta) / (n * per_item[:, None])  # each label's piece of the estimate's residual
        if conversations is None:
            pieces = theta + labels * share
            res = multiway_tests(np.repeat([0, 1], labels), pieces.T.ravel(),
                                 [np.tile(context[label_item], 2), np.tile(worker, 2)], 2, 1 - alpha)
            levels = res["levels"][:, 0]
        else:  # the judge-only items join the PPI column's variance: they share the conversations
            codes = pd.factorize(pd.Series(np.concatenate([np.asarray(c).astype(str) for c in conversations])))[0]
            big = len(fu)
            conv_a = np.concatenate([codes[:labels], codes[2 * labels:2 * labels + big]])
            conv_b = np.concatenate([codes[labels:2 * labels], codes[2 * labels + big:]])
            entries = labels + big
            judge = lam_ * (fu - fu.mean()) / big
            ppi_part = multiway_tests(np.zeros(entries, np.int64),
                                      theta[0] + entries * np.concatenate([share[:, 0], judge]),
                                      [np.concatenate([context[label_item], context.max() + 1 + np.arange(big)]),
                                       np.concatenate([worker, worker.max() + 1 + np.arange(big)]), conv_a, conv_b],
                                      1, 1 - alpha)
            people_part = multiway_tests(np.zeros(labels, np.int64), theta[1] + labels * share[:, 1],
                                         [context[label_item], worker, conv_a[:labels], conv_b[:labels]], 1, 1 - alpha)
            res = {"se": np.array([ppi_part["se"][0], people_part["se"][0]])}
            levels = people_part["levels"][:, 0]
            conv_levels = int(min(np.unique(conv_a).size, np.unique(conv_b).size))
    else:
        slope = np.asarray(label_slope, dtype=float)
        centre = float((slope * vote).sum() / slope.sum()) if slope.sum() > 0 else 0.0
        label_score = np.repeat((slope * (vote - centre) / n)[:, None], 2, axis=1)
        res = split_facet_tests(np.zeros(n, np.int64), theta[None], (values - theta) / n, context, label_item,
                                worker, label_score, 1, 1 - alpha, small_sample="cr3")
        res["se"] = res["se"][0]
        levels = res["levels"][:, 0]
    g_c, g_w = int(levels[0]), int(levels[1])
    g_v = conv_levels if conversations is not None and label_slope is None else None
    se_term, people_se = (float(v) for v in res["se"])
    fewest = min(g_c, g_w) if g_v is None else min(g_c, g_w, g_v)
    df = fewest - 1
    need = min_clusters(alpha)
    if judge_var is None:
        judge_var = 0.0 if g_v is not None else lam_ ** 2 * fu.var(ddof=1) / len(fu)  # else inside the multiway
    var = se_term ** 2 + judge_var if math.isfinite(se_term) else float("nan")
    floor = _one_sided_floor(y, g_c)
    if floor > 0:  # every labelled value alike: no spread to measure, so not a sliver either
        var = max(var if math.isfinite(var) else judge_var, floor)
        people_se = math.sqrt(max(people_se ** 2 if math.isfinite(people_se) else 0.0, floor))
    out |= {"contexts": g_c, "workers": g_w, "conversations": g_v, "df": df, "why": ""}
    if fewest < need or not var > 0 or not math.isfinite(people_se):
        facet, g = min([("workers", g_w), ("contexts", g_c)] + ([("conversations of a model", g_v)] if g_v else []),
                       key=lambda pair: pair[1])
        nan = float("nan")
        out |= {"lower": nan, "upper": nan, "se": nan, "people_lower": nan, "people_upper": nan, "people_se": nan,
                "effective_n": nan, "why": (
                    f"only {g} {facet}: an interval about the models in general needs at least {need}"
                    if fewest < need else "the answers do not vary across workers and contexts")}
        return out
    t = float(sps.t.ppf(1 - alpha / 2, df))
    se = math.sqrt(var)
    out |= {"lower": out["estimate"] - t * se, "upper": out["estimate"] + t * se, "se": se,
            "people_lower": out["people_estimate"] - t * people_se, "people_upper": out["people_estimate"] + t * people_se,
            "people_se": people_se, "effective_n": n * people_se ** 2 / var}
    return out


def _one_sided_floor(y: np.ndarray, contexts: int) -> float:
    """The least variance a crossed PPI estimate may claim when every labelled item's value is the
    same 0 or 1 (all majorities yes, say): then the people's term has no spread to measure, and
    the judge's alone made the interval a sliver at the boundary that excluded the true share (on
    the ``ppi-static-ssa`` rows at 8 contexts and a strong effect, 18 % of the studies had every
    majority yes, and the interval missed B's true share in 17 % of all studies). The floor is the
    binomial variance at the Agresti-Coull rate (k + 2) / (n + 4) over the contexts, what a
    small sample of 0/1 outcomes can honestly claim; 0 (no floor) where the values vary."""
    values = np.unique(y)
    if len(values) != 1 or values[0] not in (0.0, 1.0) or contexts < 1:
        return 0.0
    n = len(y)
    rate = (float(y.sum()) + 2) / (n + 4)
    return rate * (1 - rate) / contexts


def _cross_fit(y, f, fu, context) -> tuple[np.ndarray, float, float] | None:
    """PPI++ with lambda cross-fitted (:func:`ppi_mean_crossed`, majorities): the labelled items
    split into two folds by context (every item of a context in one fold), the judge-only items
    into two alternate halves; each fold's lambda is :func:`tuned_lambda` on the *other* fold, so
    no item's rectifier y - lambda f is weighed by a lambda tuned on itself. Returns the lambda of
    each labelled item, the estimate mean(y - lambda f) + sum_k (n_k / n) lambda_k mean_k(f
    judge-only) -- each fold's judge-only mean weighed by its share of the labelled items, so the
    estimate is unbiased whatever the halves' sizes -- and the judge-only term's variance, sum_k
    (n_k / n)^2 lambda_k^2 Var_k(f) / N_k. None where a fold would have fewer than 2 items of
    either kind (the caller keeps the lambda tuned on all items)."""
    fold = context % 2
    fold_u = np.arange(len(fu)) % 2
    if min(np.sum(fold == 0), np.sum(fold == 1), np.sum(fold_u == 0), np.sum(fold_u == 1)) < 2:
        return None
    lams = np.zeros(2)
    for k in (0, 1):
        other, other_u = fold != k, fold_u != k
        lams[k] = float(tuned_lambda(y[other], f[other], fu[other_u]))
    lam_items = lams[fold]
    estimate = float(np.mean(y - lam_items * f))
    judge_var = 0.0
    for k in (0, 1):
        share, mine = np.mean(fold == k), fu[fold_u == k]
        estimate += share * lams[k] * mine.mean()
        judge_var += share ** 2 * lams[k] ** 2 * mine.var(ddof=1) / len(mine)
    return lam_items, estimate, judge_var


def plan(y, f, delta: float, alpha: float = 0.05, power: float = 0.8, judge_per_human: float = 10.0) -> dict:
    """Human judgments a study needs with and without the judge, from a pilot where both
    answered the same items (``y`` people, ``f`` judge): the n at which a normal test of a
    ``delta`` difference from the null has the given power, with the people-only variance
    Var(Y), and with the PPI++ variance when the judge answers ``judge_per_human`` times as
    many items as people do."""
    z = _z(alpha) + float(stats.norm.ppf(power))
    y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
    if y.size < MIN_PILOT or y.shape != f.shape:
        raise UserError(f"a pilot needs at least {MIN_PILOT} items answered by both people and the judge, "
                        f"got {min(y.size, f.size)}")
    if delta <= 0:
        raise UserError(f"delta must be a positive difference such as 0.1, got {delta}", param="delta")
    var_y, var_f = y.var(ddof=1), f.var(ddof=1)
    cov = float(np.cov(y, f)[0, 1])
    ratio = 1 / judge_per_human
    lam = float(np.clip(cov / ((1 + ratio) * var_f), 0, 1)) if var_f > 0 else 0.0
    var_ppi = var_y - 2 * lam * cov + lam ** 2 * var_f + lam ** 2 * var_f * ratio
    without = math.ceil(z ** 2 * var_y / delta ** 2)
    with_judge = math.ceil(z ** 2 * max(var_ppi, 1e-12) / delta ** 2)
    return {"people_only": without, "with_judge": min(with_judge, without), "judge_items": math.ceil(
        min(with_judge, without) * judge_per_human), "lambda": lam, "correlation": float(np.corrcoef(y, f)[0, 1])
        if var_f > 0 and var_y > 0 else 0.0, "delta": delta, "alpha": alpha, "power": power,
        "pilot_items": int(y.size)}


#: items both people and the judge answered before the judge may carry weight (and for a plan)
MIN_PILOT = 10


def judge_tracks_people(y, f, alpha: float = 0.05) -> dict:
    """Does the judge demonstrably track people on the items both answered? One-sided test of
    a positive Pearson correlation at ``alpha``. Power tuning alone would give a useless judge a
    random positive weight on a few items (and claim it was worth extra people); the tables
    give the judge weight only when this test passes."""
    y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
    if y.size < MIN_PILOT:
        return {"tracks": False, "r": None, "p": None,
                "why": f"too few items both answered ({y.size}; {MIN_PILOT} needed) to tell whether it tracks people"}
    if y.std() == 0 or f.std() == 0:
        return {"tracks": False, "r": None, "p": None,
                "why": "its answers (or the people's) do not vary on the items both answered"}
    r, p = stats.pearsonr(y, f, alternative="greater")
    tracks = bool(p <= alpha)
    return {"tracks": tracks, "r": float(r), "p": float(p),
            "why": "" if tracks else f"its answers do not track the people's (r = {r:+.2f}, p = {p:.2g})"}


# ----------------------------------------------------------------------------- Bradley-Terry

def _bt_rows(first, second, k):
    x = np.zeros((len(first), k))
    x[np.arange(len(first)), first] += 1
    x[np.arange(len(first)), second] -= 1
    return x


def _bt_grad_hess(x, y, theta):
    """Per-row gradients of the logistic loss -[y x'theta - log(1 + e^{x'theta})] and the mean Hessian."""
    p = special.expit(x @ theta)
    grads = -x * (y - p)[:, None]
    hess = (x * (p * (1 - p))[:, None]).T @ x / max(len(y), 1)
    return grads, hess


def _crossed_meat(pieces: np.ndarray, item, worker, items: int, conversations=None) -> tuple:
    """The multiway (CR3) meat of a vector mean from per-answer ``pieces`` (answers x k, summing over
    each item's answers to that item's centred gradient), every entry (a, b) from the scalar
    multiway variance of the ACUTE analysis (:func:`parlai_acute.stats.inference.multiway_components`)
    by polarisation, (V(a + b) - V(a - b)) / 4, exact because CR3's cell totals are linear in the
    values. Without ``conversations``: V_I + V_W - V_IxW (I: the item, W: the worker). With them (a
    pair of codes per answer: its two conversations), each answer sits in both its conversations'
    cells, as in the Bradley-Terry analysis' sandwich (:func:`parlai_acute.stats.bradley_terry.
    crossed_sandwich_intervals`): V_W + V_C - V_WxC - V_I + V_WxI, which counts every two answers
    sharing a worker or a conversation once (an item's two conversations are its pair). Returns
    (meat, the largest one-facet meat: what :func:`~parlai_acute.stats.inference.multiway_tests`
    falls back to when the sum is not positive, levels: items, workers[, conversations])."""
    from parlai_acute.stats.inference import multiway_components

    answers, k = pieces.shape
    a, b = np.triu_indices(k)

    def quadratic(rows, facets, copies=1):
        """multiway parts of (rows x k) per answer copy, as (k x k) matrices, and the levels."""
        values = np.concatenate([rows[:, a] + rows[:, b], rows[:, a] - rows[:, b]], axis=1) * len(rows) / items
        width = values.shape[1]
        parts = multiway_components(np.repeat(np.arange(width), len(rows)), values.T.ravel(),
                                    [np.tile(np.asarray(code, dtype=np.int64), width) for code in facets], width)

        def square(v):
            half = (v[:len(a)] - v[len(a):]) / 4
            out = np.zeros((k, k))
            out[a, b], out[b, a] = half, half
            return out

        return [square(v) for _, v in parts["parts"]], parts["levels"][:, 0]

    (v_i, v_w, v_iw), levels = quadratic(pieces, [item, worker])
    if conversations is None:
        return v_i + v_w - v_iw, max((v_i, v_w), key=np.trace), [int(g) for g in levels]
    first, second = (np.asarray(c, dtype=np.int64) for c in conversations)
    (v_c, _, v_cw), conv_levels = quadratic(np.vstack([pieces, pieces]), [np.concatenate([first, second]),
                                                                          np.concatenate([worker, worker])])
    return (v_w + v_c - v_cw - v_i + v_iw, max((v_i, v_w, v_c), key=np.trace),
            [int(g) for g in levels] + [int(conv_levels[0])])


def ppi_bradley_terry(first, second, y, f, first_u, second_u, f_u, models: int, alpha: float = 0.05,
                      lam: float | None = None, max_iter: int = 100, answers: dict | None = None) -> dict:
    """Bradley-Terry strengths by PPI++ for M-estimators (Angelopoulos, Duchi & Zrnic 2024): the
    people's logistic loss on the items they judged, minus lambda times the judge's loss on the
    same items, plus lambda times the judge's loss on the items only the judge judged; sandwich
    covariance; lambda tuned to minimise the trace of the covariance (the approach of
    Chatzi et al. 2024's prediction-powered ranking; :func:`bradley_terry_rank_sets` turns the
    result into their rank-sets).

    Items: model indices ``first``/``second`` and the share ``y`` (people) / ``f`` (judge) of
    judgments the first model won; ``*_u`` for judge-only items. Returns strengths (sum zero)
    with Wald intervals, people-only beside them, lambda and the covariance matrices.

    ``answers`` (dict of per-answer arrays: ``item`` index into ``y``, ``value`` the answer's share
    won, ``worker``, and optionally ``conversations``: the ids of each answer's first and second
    model's conversation, where conversations serve several items): the people's judgments behind
    ``y``, whose workers repeat across items. Then the people's gradient term is cluster-robust over
    items, workers (and conversations) at once (:func:`_crossed_meat`: each answer carries its own
    share of its item's gradient; the multiway CR3 meat), the intervals a t on min(levels) - 1 df
    (``levels``: items, workers[, the fewest conversations of a model]), and with fewer than
    :func:`~parlai_acute.stats.inference.min_clusters` levels no interval (NaN) and ``why`` says so.
    Without it the rows are independent items. The judge-only term is not clustered over workers:
    the judge is one fixed function, so no worker's taste enters it. Its items are sampled, and so
    are their conversations: with ``judge_conversations`` (the judge-only items' two conversation
    codes) its gradients join the same multiway meat as entries of their own item and worker, so
    the conversations they share (with each other and with the people's items) and the covariance
    of the two terms are counted. Measured on seeded A/A studies of 3 models, 8 conversations per
    model reused by people's and judge's items (tests/stats/test_ppi_crossed.py): leaving the judge
    term as an item variance fired 13-19 %, joining it 6-7 %.
    """
    z = _z(alpha)
    k = int(models)
    first, second, first_u, second_u = (np.asarray(a, dtype=np.int64) for a in (first, second, first_u, second_u))
    x, xu = _bt_rows(first, second, k), _bt_rows(first_u, second_u, k)
    y, f, fu = (np.asarray(a, dtype=float) for a in (y, f, f_u))
    n, big_n = len(y), len(fu)
    if n < 2 or big_n < 2:
        raise UserError("PPI ranking needs at least 2 items judged by people and 2 by the judge alone")
    fix = np.ones((k, k)) / k  # only differences are identified: pin the mean at zero

    def solve(weight_lam):
        theta = np.zeros(k)
        for _ in range(max_iter):
            gy, hy = _bt_grad_hess(x, y, theta)
            gf, _ = _bt_grad_hess(x, f, theta)
            gu, hu = _bt_grad_hess(xu, fu, theta)
            grad = gy.mean(0) - weight_lam * gf.mean(0) + weight_lam * gu.mean(0)
            hess = (1 - weight_lam) * hy + weight_lam * hu + fix
            step = np.linalg.solve(hess, grad)
            theta = theta - step * min(1.0, 2.0 / max(np.abs(step).max(), 1e-300))
            if np.abs(step).max() < 1e-10:
                break
        return theta - theta.mean()

    def covariance(theta, weight_lam):
        gy, hy = _bt_grad_hess(x, y, theta)
        gf, _ = _bt_grad_hess(x, f, theta)
        gu, hu = _bt_grad_hess(xu, fu, theta)
        hess = (1 - weight_lam) * hy + weight_lam * hu + fix
        inv = np.linalg.inv(hess)
        middle = (np.cov((gy - weight_lam * gf).T) / n + weight_lam ** 2 * np.cov(gu.T) / big_n if answers is None
                  else crossed_middle(theta, weight_lam, gy - weight_lam * gf, gu))
        centre = np.eye(k) - 1.0 / k
        return centre @ inv @ middle @ inv.T @ centre, inv, gy, gf, gu

    levels = None
    if answers is not None:
        a_item = np.asarray(answers["item"], dtype=np.int64)
        a_value = np.asarray(answers["value"], dtype=float)
        a_worker = pd.factorize(pd.Series(np.asarray(answers["worker"]).astype(str)))[0]
        a_conv, shared = None, answers.get("judge_conversations") is not None
        if answers.get("conversations") is not None:
            pair = [np.asarray(c).astype(str) for c in answers["conversations"]]
            if shared:  # the judge's items: their own item and worker, the conversations they share
                pair = [np.concatenate([c, np.asarray(j).astype(str)])
                        for c, j in zip(pair, answers["judge_conversations"])]
            codes = pd.factorize(pd.Series(np.concatenate(pair)))[0]
            a_conv = (codes[:len(pair[0])], codes[len(pair[0]):])
        a_count = np.bincount(a_item, minlength=n).astype(float)[a_item]
        entries_item = np.concatenate([a_item, n + np.arange(big_n)]) if shared else a_item
        entries_worker = np.concatenate([a_worker, a_worker.max() + 1 + np.arange(big_n)]) if shared else a_worker

        def crossed_middle(theta, weight_lam, rows, gu):
            """Each answer's own share of its item's people's gradient, centred; the multiway meat of the
            people's term, plus the judge-only term: as its item variance, or -- where the judge's
            items share conversations with each other or the people's -- in the same meat as entries
            of their own item and worker, so its conversation clustering and its covariance with the
            people's term are counted."""
            p = special.expit(x @ theta)
            own = -x[a_item] * ((a_value - weight_lam * f[a_item] - (1 - weight_lam) * p[a_item]) / a_count)[:, None]
            pieces = own - rows.mean(axis=0) / a_count[:, None]
            if shared:
                pieces = np.vstack([pieces, weight_lam * (gu - gu.mean(axis=0)) * n / big_n])
            total, one_facet = _crossed_meat(pieces, entries_item, entries_worker, n, a_conv)[:2]
            meat = total if (np.linalg.eigvalsh(total) > -1e-9 * max(np.trace(total), 1e-300)).all() else one_facet
            return meat if shared else meat + weight_lam ** 2 * np.cov(gu.T) / big_n

        levels = np.asarray(_crossed_meat(np.zeros((len(entries_item), 1)), entries_item, entries_worker, n,
                                          a_conv)[2])
        if shared:  # the judge's entries are not levels of the people's facets
            levels[:2] = [n, int(a_worker.max()) + 1]
        if a_conv is not None:  # a model's strength rests on its own conversations: the fewest of a model's
            side_first = np.concatenate([first[a_item]] + ([first_u] if shared else []))
            side_second = np.concatenate([second[a_item]] + ([second_u] if shared else []))
            owned = pd.DataFrame({"model": np.concatenate([side_first, side_second]),
                                  "conversation": np.concatenate(a_conv)})
            levels[2] = int(owned.groupby("model")["conversation"].nunique().min())
    people = solve(0.0)
    cov_people, inv, gy, gf, gu = covariance(people, 0.0)
    if lam is None:
        cross = np.cov(np.vstack([gy.T, gf.T]))[:k, k:]
        allf = np.cov(np.vstack([gf, gu]).T)
        num = np.trace(inv @ (cross + cross.T) @ inv.T)
        den = 2 * (1 + n / big_n) * np.trace(inv @ allf @ inv.T)
        lam = float(np.clip(num / den, 0, 1)) if den > 0 else 0.0
    theta = solve(lam)
    cov = covariance(theta, lam)[0]
    se, se_people = np.sqrt(np.maximum(np.diag(cov), 0)), np.sqrt(np.maximum(np.diag(cov_people), 0))
    why, df = "", None
    if levels is not None:
        from parlai_acute.stats.inference import min_clusters

        df, need = int(levels.min()) - 1, min_clusters(alpha)
        z = float(stats.t.ppf(1 - alpha / 2, max(df, 1)))
        if df + 1 < need:
            facet = ["items", "workers", "conversations"][int(np.argmin(levels))]
            why = f"only {int(levels.min())} {facet}: an interval about the models in general needs at least {need}"
            se = se_people = np.full(k, np.nan)
    return {"strength": theta, "lower": theta - z * se, "upper": theta + z * se, "se": se, "cov": cov,
            "people_strength": people, "people_lower": people - z * se_people, "people_upper": people + z * se_people,
            "people_se": se_people, "people_cov": cov_people, "lambda": lam, "n_people": n, "n_judge_only": big_n,
            "alpha": alpha, "levels": None if levels is None else [int(v) for v in levels], "df": df, "why": why}


def bradley_terry_rank_sets(res: dict, alpha: float = 0.05) -> dict:
    """Rank-sets with simultaneous coverage 1 - alpha (Chatzi et al. 2024) from a
    :func:`ppi_bradley_terry` result, prediction-powered and people-only: simultaneous
    intervals for every strength difference (:func:`parlai_acute.stats.ranksets.simultaneous_ahead`),
    then each model's ranks from the models certainly ahead of it and behind it. Where the strengths'
    intervals are read on a t (a sampled facet with few levels: ``res["df"]``) the simultaneous ones
    are too; where they are withheld (``res["why"]``: too few levels for a claim about the models)
    no model is certainly ahead of another, so every rank-set is all ranks."""
    from parlai_acute.stats.ranksets import rank_sets, simultaneous_ahead

    def ahead(strength, cov):
        if res.get("why"):
            return np.zeros((len(strength), len(strength)), dtype=bool)
        return simultaneous_ahead(strength, cov, alpha, res.get("df"))

    lower, upper = rank_sets(ahead(res["strength"], res["cov"]))
    people_lower, people_upper = rank_sets(ahead(res["people_strength"], res["people_cov"]))
    return {"rank_lower": lower, "rank_upper": upper, "people_rank_lower": people_lower,
            "people_rank_upper": people_upper}
