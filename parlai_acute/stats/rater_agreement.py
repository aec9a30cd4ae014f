"""Agreement between a model judge and people, and among people, on the same items.

Input is a tidy labels table: one row per (item, rater) with a categorical ``label``
(ACUTE: the winning conversation; SOBA: the picked model; SATA/SM: picked or not).
Agreement is measured over *pairs of labels of the same item*:

* judge vs human: the judge's label paired with each human label of the item;
* human vs human: every pair of two different humans' labels of the item (both
  orientations, so the table is symmetric and Cohen's kappa on it is Scott's pi).

Percent agreement is the share of equal pairs; Cohen's kappa (scikit-learn) corrects it
for chance. Items carry several pairs and one rater answers many items, so pairs are not
independent: intervals are percentile bootstraps that resample whole items (seeded).

No interval that cannot be true: a bootstrap whose resamples all agree (every pair agreed,
or one rater gave one label to everything) is no interval at all, so none is given and
``percent_note`` / ``kappa_note`` say why in words. Where every item agreed (or none did)
the percent agreement keeps an exact bound over items instead: the share of fully agreeing
items is at most the mean agreement, so its Clopper-Pearson bound is a conservative one.
A rater with one label for everything makes kappa 0 by construction (chance agreement
equals observed agreement): it measures nothing, and is reported as undefined.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from parlai_acute.stats.intervals import clopper_pearson, percentile_interval

__all__ = ["PAIR_COLUMNS", "judge_human_pairs", "human_pairs", "percent", "constant_side", "kappa", "bootstrap",
           "resampled", "summary", "rank_correlation"]

PAIR_COLUMNS = ["item", "a", "b"]


def judge_human_pairs(human: pd.DataFrame, judge: pd.DataFrame) -> pd.DataFrame:
    """(item, judge label, human label) for every human label of an item the judge labelled."""
    merged = human[["item", "label"]].merge(judge[["item", "label"]], on="item", suffixes=("_h", "_j"))
    return pd.DataFrame({"item": merged["item"], "a": merged["label_j"], "b": merged["label_h"]}, columns=PAIR_COLUMNS)


def human_pairs(human: pd.DataFrame) -> pd.DataFrame:
    """Both orientations of every pair of labels given to one item by two different raters."""
    rows = []
    for item, group in human.groupby("item", sort=True):
        labels = list(zip(group["rater"], group["label"]))
        for (r1, l1), (r2, l2) in itertools.permutations(labels, 2):
            if r1 != r2:
                rows.append((item, l1, l2))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def percent(pairs: pd.DataFrame) -> float:
    return float((pairs["a"] == pairs["b"]).mean()) if len(pairs) else float("nan")


def constant_side(pairs: pd.DataFrame) -> str:
    """"judge"/"first rater" or "both" when a side of the pairs used one label only, else ""."""
    if len(pairs) == 0:
        return ""
    a, b = pairs["a"].astype(str).nunique() < 2, pairs["b"].astype(str).nunique() < 2
    return "both" if a and b else "a" if a else "b" if b else ""


def kappa(pairs: pd.DataFrame) -> float:
    """Cohen's kappa of the pairs (NaN when undefined: no pairs, or a side with one label
    only -- then kappa is 0 or 0/0 by construction, whatever the other side did)."""
    if len(pairs) == 0 or constant_side(pairs):
        return float("nan")
    a, b = pairs["a"].astype(str), pairs["b"].astype(str)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = cohen_kappa_score(a, b)
    return float(value)


def bootstrap(pairs: pd.DataFrame, statistic, resamples: int = 1000, seed: int = 0,
              confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``statistic(pairs)`` resampling whole items with replacement
    (NaN where none can be given: see :func:`parlai_acute.stats.resample.percentile_interval`)."""
    values = resampled(pairs, statistic, resamples, seed)
    if values.size == 0:
        return float("nan"), float("nan")
    low, high = percentile_interval(values[:, None], confidence)
    return float(low[0]), float(high[0])


def resampled(pairs: pd.DataFrame, statistic, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """``statistic`` of ``resamples`` resamples of whole items (NaN where undefined)."""
    if len(pairs) == 0 or resamples <= 0:
        return np.empty(0)
    items = pairs["item"].unique()
    groups = {item: idx for item, idx in pairs.groupby("item").indices.items()}
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        chosen = rng.choice(items, size=len(items), replace=True)
        rows = np.concatenate([groups[i] for i in chosen])
        values.append(statistic(pairs.iloc[rows]))
    return np.asarray(values, dtype=float)


def _labels(values: pd.Series) -> str:
    return ", ".join(repr(v) for v in sorted(values.astype(str).unique()))


def summary(pairs: pd.DataFrame, resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
            sides: tuple[str, str] = ("the judge", "the people")) -> dict:
    """Items, pairs, percent agreement and kappa, each with its bootstrap interval, and
    ``percent_note`` / ``kappa_note``: in words, why a value or interval is not given
    (``sides`` names the raters of columns a and b in those sentences)."""
    level = f"{100 * confidence:g}%"
    items = int(pairs["item"].nunique()) if len(pairs) else 0
    p_low, p_high = bootstrap(pairs, percent, resamples, seed, confidence)
    k_low, k_high = bootstrap(pairs, kappa, resamples, seed, confidence)
    p_note = k_note = ""
    value = percent(pairs)
    if len(pairs) and resamples > 0 and not np.isfinite(p_low):
        if value == 1.0:
            p_low, p_high = clopper_pearson(items, items, confidence)[0], 1.0
            p_note = (f"every pair agreed, so no resample of items differs; the interval is the exact "
                      f"({level} Clopper-Pearson) bound over the {items} items, all of which agreed")
        elif value == 0.0:
            p_low, p_high = 0.0, clopper_pearson(0, items, confidence)[1]
            p_note = (f"no pair agreed, so no resample of items differs; the interval is the exact "
                      f"({level} Clopper-Pearson) bound over the {items} items, none of which agreed")
        else:
            p_note = f"too few items ({items}) for a bootstrap interval over items"
    constant = constant_side(pairs)
    if not len(pairs):
        p_note = k_note = "no items to compare"
    elif constant:
        who = {"a": sides[0], "b": sides[1], "both": "both sides"}[constant]
        shown = _labels(pairs["a"] if constant == "a" else pairs["b"] if constant == "b" else pairs["a"])
        k_note = (f"{who} gave one label ({shown}) to every item, so chance agreement equals observed agreement "
                  f"and kappa is 0 (or 0/0) by construction: it measures nothing; read the percent agreement")
        k_low = k_high = float("nan")
    elif resamples > 0 and not np.isfinite(k_low):
        undefined = float(np.isnan(resampled(pairs, kappa, resamples, seed)).mean())
        k_note = (f"kappa is undefined in {100 * undefined:.0f}% of the resamples of the {items} items (a side with "
                  f"one label only): too few items for a bootstrap interval" if undefined > 0.1 else
                  f"every resample of the {items} items gives the same kappa, so no bootstrap interval can be given")
    return {"items": items, "pairs": int(len(pairs)),
            "percent_agreement": value, "percent_ci": [p_low, p_high], "percent_note": p_note,
            "kappa": kappa(pairs), "kappa_ci": [k_low, k_high], "kappa_note": k_note,
            "interval": f"{level} percentile bootstrap over items ({resamples} resamples, seed {seed})"}


def notes(block: dict) -> str:
    """A :func:`summary`'s notes in one sentence, each said once (with no items, the percent and
    the kappa have the same reason)."""
    found = [n for n in (block.get("percent_note"), block.get("kappa_note")) if n]
    return "; ".join(dict.fromkeys(found))


def rank_correlation(human_scores: dict, judge_scores: dict) -> dict:
    """Kendall's tau-b between two scorings of the same systems (scipy), with its p-value.

    With few systems tau takes few values and its p-value is coarse: report the number
    of systems beside it. ``note`` says in words why tau is undefined (fewer than two
    systems; one side scored every system the same, so it orders nothing) or coarse.
    """
    from scipy.stats import kendalltau

    common = sorted(set(human_scores) & set(judge_scores))
    out = {"systems": len(common), "kendall_tau": float("nan"), "pvalue": float("nan"), "note": ""}
    if len(common) < 2:
        out["note"] = f"{len(common)} system(s) scored by both: a ranking needs two or more"
        return out
    human, judge = [human_scores[m] for m in common], [judge_scores[m] for m in common]
    flat = [who for who, scores in (("the people", human), ("the judge", judge)) if len(set(scores)) < 2]
    if flat:
        out["note"] = (f"{' and '.join(flat)} gave every system the same score ({len(common)} systems), so "
                       f"{'they order' if len(flat) > 1 else 'it orders'} nothing: Kendall's tau is undefined")
        return out
    result = kendalltau(human, judge)
    out.update(kendall_tau=float(result.statistic), pvalue=float(result.pvalue))
    if len(common) < 4:
        out["note"] = (f"only {len(common)} systems: tau can take only a few values "
                       f"({'-1 or +1' if len(common) == 2 else '-1, -1/3, +1/3 or +1'}), and no p-value below "
                       f"{2 / math.factorial(len(common)):.2g} is possible")
    return out
