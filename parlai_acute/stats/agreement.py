"""Inter-annotator agreement on ACUTE-Eval items judged more than once.

An item is one pair of conversations under one question (``pair_id``, ``question_key``);
its label is which conversation won (side-independent, so left/right randomisation does
not count as disagreement). Percent agreement is the paper's measure: over all pairs of
judgments of the same item, the share that chose the same conversation. Krippendorff's
alpha (nominal) corrects it for chance agreement.
"""
from __future__ import annotations

import krippendorff
import numpy as np
import pandas as pd

ITEM = ["pair_id", "question_key"]


def item_labels(df: pd.DataFrame) -> pd.DataFrame:
    """Judgments as (item, label): label 0/1 = the winning conversation's position in the
    sorted pair of dialogue ids."""
    winning = np.where(df["winner_side"] == "left", df["dialogue_left"], df["dialogue_right"])
    first = np.minimum(df["dialogue_left"].astype(str), df["dialogue_right"].astype(str))
    return pd.DataFrame({"pair_id": df["pair_id"].to_numpy(), "question_key": df["question_key"].to_numpy(),
                         "label": (winning != first).astype(int)})


def label_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Items judged at least twice: one row per item, columns 0 and 1 = judgments per label."""
    labels = item_labels(df)
    counts = labels.groupby(ITEM + ["label"]).size().unstack("label", fill_value=0)
    counts = counts.reindex(columns=[0, 1], fill_value=0)
    return counts[counts.sum(axis=1) >= 2]


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


def agreement(df: pd.DataFrame) -> dict:
    """Summary: items judged twice or more, judgments on them, percent agreement, alpha."""
    counts = label_counts(df)
    return {"items": int(len(counts)), "judgments": int(counts.to_numpy().sum()),
            "percent_agreement": percent_agreement(df, counts), "krippendorff_alpha": krippendorff_alpha(df, counts)}
