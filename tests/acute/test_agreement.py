"""Percent agreement and Krippendorff's alpha on a hand-made table."""
import math

import pandas as pd
import pytest

from parlai_acute.stats.agreement import agreement, krippendorff_alpha, label_counts, percent_agreement


def j(pair, left, right, side, worker="w", question="engaging"):
    return {"pair_id": pair, "dialogue_left": left, "dialogue_right": right, "winner_side": side,
            "worker": worker, "question_key": question}


@pytest.fixture()
def table():
    return pd.DataFrame([
        # item p1: dialogues x, y. Winning dialogues: x, x (shown swapped), y
        j("p1", "x", "y", "left", "w1"), j("p1", "y", "x", "right", "w2"), j("p1", "x", "y", "right", "w3"),
        # item p2: both pick v
        j("p2", "u", "v", "right", "w1"), j("p2", "v", "u", "left", "w2"),
        # item p3: judged once -> not part of agreement
        j("p3", "s", "t", "left", "w1"),
        # same pair under another question is another item, judged once
        j("p1", "x", "y", "left", "w4", question="human"),
    ])


def test_labels_ignore_sides(table):
    counts = label_counts(table)
    assert counts.loc[("p1", "engaging")].tolist() == [2, 1]
    assert counts.loc[("p2", "engaging")].tolist() == [0, 2]
    assert len(counts) == 2


def test_percent_agreement_by_hand(table):
    # p1: 3 pairs of judgments, 1 agrees (w1, w2); p2: 1 pair, agrees -> 2 / 4
    assert percent_agreement(table) == pytest.approx(0.5)


def test_krippendorff_alpha_by_hand(table):
    # coincidences: p1 (2,1): o00=1, o01=o10=1; p2 (0,2): o11=2 -> n0=2, n1=3, n=5
    # alpha = 1 - (n-1) * (o01+o10) / (2 * n0 * n1) = 1 - 4*2/12 = 1/3
    assert krippendorff_alpha(table) == pytest.approx(1 / 3)


def test_summary_and_undefined_cases(table):
    summary = agreement(table)
    assert summary["items"] == 2 and summary["judgments"] == 5
    unanimous = table[table["pair_id"] == "p2"]
    assert percent_agreement(unanimous) == 1.0
    assert math.isnan(krippendorff_alpha(unanimous))  # one label only: alpha undefined
    single = table[table["pair_id"] == "p3"]
    assert math.isnan(percent_agreement(single)) and agreement(single)["items"] == 0
