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
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

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


def kappa(pairs: pd.DataFrame) -> float:
    """Cohen's kappa of the pairs (NaN when undefined: no pairs, or one label only)."""
    if len(pairs) == 0:
        return float("nan")
    a, b = pairs["a"].astype(str), pairs["b"].astype(str)
    if len(set(a) | set(b)) < 2:
        return float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        value = cohen_kappa_score(a, b)
    return float(value)


def bootstrap(pairs: pd.DataFrame, statistic, resamples: int = 1000, seed: int = 0,
              confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of ``statistic(pairs)`` resampling whole items with replacement."""
    if len(pairs) == 0 or resamples <= 0:
        return float("nan"), float("nan")
    items = pairs["item"].unique()
    groups = {item: idx for item, idx in pairs.groupby("item").indices.items()}
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        chosen = rng.choice(items, size=len(items), replace=True)
        rows = np.concatenate([groups[i] for i in chosen])
        values.append(statistic(pairs.iloc[rows]))
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def summary(pairs: pd.DataFrame, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Items, pairs, percent agreement and kappa, each with its bootstrap interval."""
    p_low, p_high = bootstrap(pairs, percent, resamples, seed, confidence)
    k_low, k_high = bootstrap(pairs, kappa, resamples, seed, confidence)
    return {"items": int(pairs["item"].nunique()), "pairs": int(len(pairs)),
            "percent_agreement": percent(pairs), "percent_ci": [p_low, p_high],
            "kappa": kappa(pairs), "kappa_ci": [k_low, k_high],
            "interval": f"{int(confidence * 100)}% percentile bootstrap over items ({resamples} resamples, seed {seed})"}


def rank_correlation(human_scores: dict, judge_scores: dict) -> dict:
    """Kendall's tau-b between two scorings of the same systems (scipy), with its p-value.

    With few systems tau takes few values and its p-value is coarse: report the number
    of systems beside it.
    """
    from scipy.stats import kendalltau

    common = sorted(set(human_scores) & set(judge_scores))
    if len(common) < 2:
        return {"systems": len(common), "kendall_tau": float("nan"), "pvalue": float("nan")}
    result = kendalltau([human_scores[m] for m in common], [judge_scores[m] for m in common])
    return {"systems": len(common), "kendall_tau": float(result.statistic), "pvalue": float(result.pvalue)}
