"""Inter-annotator agreement on ACUTE-Eval items judged more than once (a tie is a third label).

An item is one pair of conversations under one question (``pair_id``, ``question_key``);
its label is which conversation won (side-independent, so left/right randomisation does
not count as disagreement). Percent agreement is the paper's measure: over all pairs of
judgments of the same item, the share that chose the same conversation. Krippendorff's
alpha (nominal) corrects it for chance agreement; its interval is a percentile bootstrap
over items (an item's judgments stay together). When no item was judged twice there is
nothing to agree on: the summary says so in ``note`` instead of leaving empty numbers.

Ratings on a scale (per-annotator scores of one reply, e.g. USR's 1-5 "Overall") take the
interval level of Krippendorff's alpha instead (:func:`interval_agreement`): a 4 against a 5
is a smaller disagreement than a 1 against a 5, as the nominal level would not say.
"""
from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd

from parlai_acute.stats.intervals import percentile_interval
from parlai_acute.stats.winrates import tied

__all__ = ["ITEM", "item_labels", "label_counts", "percent_agreement", "krippendorff_alpha",
           "nominal_alpha_weighted", "alpha_interval", "agreement", "agreement_of_counts", "interval_alpha_weighted",
           "interval_agreement"]

ITEM = ["pair_id", "question_key"]


def item_labels(df: pd.DataFrame) -> pd.DataFrame:
    """Judgments as (item, label): label 0/1 = the winning conversation's position in the
    sorted pair of dialogue ids, 2 = a tie (its own category: "both bad" counts as a tie)."""
    left, right = (_strings(df[c]) for c in ("dialogue_left", "dialogue_right"))
    left_won = (df["winner_side"] == "left").to_numpy()
    later = np.where(left_won, left > right, right > left).astype(int)  # the winner is the later id of the two
    return pd.DataFrame({"pair_id": df["pair_id"].to_numpy(), "question_key": df["question_key"].to_numpy(),
                         "label": np.where(tied(df), 2, later)})


def _strings(column: pd.Series) -> np.ndarray:
    """The column as an object array of str (converted only when it holds something else)."""
    values = column.to_numpy(dtype=object)
    return values if pd.api.types.infer_dtype(values, skipna=False) == "string" else column.astype(str).to_numpy()


def label_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Items judged at least twice: one row per item, columns 0 and 1 = judgments per label."""
    labels = item_labels(df)
    pair, pairs = pd.factorize(labels["pair_id"])
    question, questions = pd.factorize(labels["question_key"])
    if len(questions) <= 1 and pair.min(initial=0) >= 0 and question.min(initial=0) >= 0:  # one question: the pairs' codes are the items' (first seen first, as factorize)
        key, keys = pair.astype(np.int64), np.arange(len(pairs), dtype=np.int64)
    else:
        key, keys = pd.factorize(pair.astype(np.int64) * max(len(questions), 1) + question)
    width_labels = 3 if (labels["label"] == 2).any() else 2  # a third column only where ties were offered
    counts = np.bincount(key * width_labels + labels["label"].to_numpy(),
                         minlength=width_labels * len(keys)).reshape(-1, width_labels)
    repeated = counts.sum(axis=1) >= 2
    keys, counts = keys[repeated], counts[repeated]
    width = max(len(questions), 1)
    index = pd.MultiIndex(levels=[pd.Index(pairs, dtype=object), pd.Index(questions, dtype=object)],
                          codes=[keys // width, keys % width], names=ITEM, verify_integrity=False)
    return pd.DataFrame(counts, index=index, columns=pd.Index(list(range(width_labels)), name="label"))


def percent_agreement(df: pd.DataFrame, counts: pd.DataFrame | None = None) -> float:
    """Share of agreeing pairs among all pairs of judgments of the same item (NaN if none)."""
    counts = (label_counts(df) if counts is None else counts).to_numpy()
    if counts.size == 0:
        return float("nan")
    n = counts.sum(axis=1)
    agree = (counts * (counts - 1) / 2).sum()
    pairs = (n * (n - 1) / 2).sum()
    return float(agree / pairs)


def krippendorff_alpha(df: pd.DataFrame, counts: pd.DataFrame | None = None) -> float:
    """Krippendorff's alpha, nominal, over items judged at least twice (NaN if undefined)."""
    counts = (label_counts(df) if counts is None else counts).to_numpy()
    if counts.shape[0] < 1 or (counts.sum(axis=0) > 0).sum() < 2:
        return float("nan")  # no items, or one label only: expected disagreement is zero
    return float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))


def nominal_alpha_weighted(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Krippendorff's nominal alpha of the items in ``counts`` (items x labels) taken
    ``weights[b, item]`` times, for each row b of weights at once (a bootstrap); NaN
    where undefined. Equals ``krippendorff.alpha`` for weights of one (tested)."""
    counts = np.asarray(counts, dtype=float)
    per_item = counts.sum(axis=1)
    disagree = (per_item ** 2 - (counts ** 2).sum(axis=1)) / (per_item - 1)  # sum over c != k of n_c n_k / (m-1)
    label_totals = weights @ counts
    total = label_totals.sum(axis=1)
    observed = weights @ disagree / total
    expected = (total ** 2 - (label_totals ** 2).sum(axis=1)) / (total * (total - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, 1 - observed / expected, np.nan)


def alpha_interval(counts: pd.DataFrame, resamples: int = 1000, seed: int = 0,
                   confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of Krippendorff's alpha, resampling items; NaN when
    fewer than two items or alpha is undefined in too many resamples to trust."""
    values = counts.to_numpy() if isinstance(counts, pd.DataFrame) else np.asarray(counts)
    size = len(values)
    if size < 2 or resamples < 1:
        return float("nan"), float("nan")
    # Items with the same label counts are interchangeable for alpha: resampling items is drawing
    # how often each distinct count pattern comes up (a multinomial), whatever the number of items.
    patterns, frequency = _patterns(values)
    weights = np.random.default_rng(seed).multinomial(size, frequency / size, size=resamples).astype(float)
    low, high = percentile_interval(nominal_alpha_weighted(patterns, weights)[:, None], confidence)
    return float(low[0]), float(high[0])


def _patterns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, axis=0, return_counts=True)`` of small non-negative integer counts (items x
    labels): each row as one integer (the first label the most significant digit, so the order is
    the rows' lexicographic one), then one sort of a 1-D array instead of rows compared as records."""
    values = np.asarray(values)
    if values.size == 0 or values.dtype.kind not in "iu" or values.min() < 0:
        return np.unique(values, axis=0, return_counts=True)
    base = int(values.max()) + 1
    if base ** values.shape[1] >= 2 ** 62:
        return np.unique(values, axis=0, return_counts=True)
    key = np.zeros(len(values), dtype=np.int64)
    for c in range(values.shape[1]):
        key = key * base + values[:, c]
    keys, first, frequency = np.unique(key, return_index=True, return_counts=True)
    return values[first], frequency


def agreement(df: pd.DataFrame, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Summary: items judged twice or more, judgments on them, percent agreement, alpha
    with its bootstrap interval, and a ``note`` saying in words when a value cannot be given."""
    counts = label_counts(df)
    return {**agreement_of_counts(counts, resamples, seed, confidence, "item (pair of conversations, question)",
                                  "judged", "judgment"), "judgments": int(counts.to_numpy().sum())}


def agreement_of_counts(counts: pd.DataFrame, resamples: int, seed: int, confidence: float, item: str = "item",
                        verb: str = "labelled", label: str = "label") -> dict:
    """Agreement from label counts (rows: items answered twice or more; columns: labels): items,
    percent agreement, Krippendorff's alpha, its bootstrap interval (``alpha_ci_low/high``) and a
    ``note`` saying in words why a value cannot be given (``item``, ``verb``, ``label`` word it)."""
    alpha = krippendorff_alpha(None, counts)
    low, high = alpha_interval(counts, resamples, seed, confidence) if np.isfinite(alpha) else (np.nan, np.nan)
    note = ""
    if len(counts) == 0:
        note = f"no {item} was {verb} more than once, so agreement cannot be measured"
    elif not np.isfinite(alpha):
        note = f"every {label} of the repeated items was the same, so Krippendorff's alpha is undefined"
    elif not np.isfinite(low):
        note = "too few repeated items for an interval of Krippendorff's alpha"
    return {"items": int(len(counts)), "percent_agreement": percent_agreement(None, counts),
            "krippendorff_alpha": alpha, "alpha_ci_low": low, "alpha_ci_high": high, "note": note}


def interval_alpha_weighted(sums: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Krippendorff's interval alpha of items given by ``sums`` (items x 3: values m, their sum,
    their sum of squares; items with m >= 2) taken ``weights[b, item]`` times, for each row b at
    once (a bootstrap); NaN where undefined. With the squared difference as the metric, the sum
    over ordered pairs of an item's values is 2 (m S2 - S1^2), so every term is linear in the
    weights. Equals ``krippendorff.alpha(level_of_measurement="interval")`` for weights of one."""
    m, s1, s2 = (np.asarray(sums, dtype=float)[:, k] for k in range(3))
    within = (m * s2 - s1 ** 2) / (m - 1)          # per item: half its pairwise squared differences / (m - 1)
    n, t1, t2 = weights @ m, weights @ s1, weights @ s2
    observed = weights @ within
    expected = (n * t2 - t1 ** 2) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 1e-12 * np.maximum(n * t2, 1), 1 - observed / expected, np.nan)


def interval_agreement(items, values, resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
                       item: str = "reply", verb: str = "rated", label: str = "rating") -> dict:
    """Krippendorff's alpha (interval level) of numeric ratings, ``items[i]`` the rated thing of
    ``values[i]``, over items rated at least twice, with a percentile bootstrap over items and a
    ``note`` in words where a value cannot be given (as :func:`agreement_of_counts`)."""
    codes, _ = pd.factorize(pd.Series(items).astype(str))
    values = np.asarray(values, dtype=float)
    m = np.bincount(codes, minlength=codes.max() + 1 if len(codes) else 0).astype(float)
    s1 = np.bincount(codes, weights=values, minlength=len(m))
    s2 = np.bincount(codes, weights=values ** 2, minlength=len(m))
    sums = np.column_stack([m, s1, s2])[m >= 2]
    alpha, low, high, note = float("nan"), float("nan"), float("nan"), ""
    if len(sums) == 0:
        note = f"no {item} was {verb} more than once, so agreement cannot be measured"
    else:
        alpha = float(interval_alpha_weighted(sums, np.ones((1, len(sums))))[0])
        if not np.isfinite(alpha):
            note = f"every {label} of the repeated items was the same, so Krippendorff's alpha is undefined"
        elif len(sums) >= 2 and resamples >= 1:
            weights = np.random.default_rng(seed).multinomial(len(sums), np.full(len(sums), 1 / len(sums)),
                                                              size=resamples).astype(float)
            lo, hi = percentile_interval(interval_alpha_weighted(sums, weights)[:, None], confidence)
            low, high = float(lo[0]), float(hi[0])
        if np.isfinite(alpha) and not np.isfinite(low):
            note = "too few repeated items for an interval of Krippendorff's alpha"
    return {"items": int(len(sums)), "ratings": int(sums[:, 0].sum()) if len(sums) else 0, "level": "interval",
            "krippendorff_alpha": alpha, "alpha_ci_low": low, "alpha_ci_high": high, "note": note}
