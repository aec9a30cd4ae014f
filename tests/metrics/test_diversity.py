"""distinct-n, Self-BLEU and multi-hypothesis recall/precision against hand or library values."""
from __future__ import annotations

import numpy as np
import pytest

from parlai_acute.metrics import diversity
from parlai_acute.metrics.reference import F1, SentenceBleu


def test_distinct_within_and_across():
    replies = ["i am fine i am", "i am good", ""]
    one = diversity.distinct(replies, 1)
    # within: {i, am, fine} / 5 and 3 / 3; across: {i, am, fine, good} / 8
    assert one["distinct1_within"] == pytest.approx((3 / 5 + 1) / 2)
    assert one["distinct1_across"] == pytest.approx(4 / 8)
    two = diversity.distinct(replies, 2)
    # bigrams: (i am)(am fine)(fine i)(i am) -> 3/4; (i am)(am good) -> 2/2; across {i am, am fine, fine i, am good} / 6
    assert two["distinct2_within"] == pytest.approx((3 / 4 + 1) / 2)
    assert two["distinct2_across"] == pytest.approx(4 / 6)


def test_self_bleu_equals_sacrebleu_against_the_other_replies():
    from sacrebleu.metrics import BLEU

    replies = ["i like my dog a lot", "i like my cat a lot", "the weather is nice today", "do you like dogs ?"]
    got = diversity.self_bleu(replies, SentenceBleu(), sample=10)
    direct = BLEU(effective_order=True, lowercase=True)
    expected = np.mean([direct.sentence_score(h, replies[:i] + replies[i + 1:]).score / 100
                        for i, h in enumerate(replies)])
    assert got["self_bleu4"] == pytest.approx(expected) and got["self_bleu_replies"] == 4
    same = diversity.self_bleu(["the same reply"] * 3, SentenceBleu(), sample=10)
    assert same["self_bleu4"] == pytest.approx(1.0)
    sampled = diversity.self_bleu([f"reply number {k}" for k in range(30)], SentenceBleu(), sample=10, seed=1)
    assert sampled["self_bleu_replies"] == 10


def test_multi_hypothesis_recall_and_precision():
    groups = [(["i like dogs", "hello there"], ["i like dogs", "good morning", "hello"])]
    got = diversity.multi_hypothesis(groups, F1(), "f1")
    f1 = F1().pair_scores
    matrix = np.array([[f1([h], [r])["f1"][0] for r in groups[0][1]] for h in groups[0][0]])
    assert got["f1_recall"] == pytest.approx(matrix.max(axis=0).mean())
    assert got["f1_precision"] == pytest.approx(matrix.max(axis=1).mean())
    assert 0 < got["f1_recall"] < got["f1_precision"] <= 1


def test_several_hypotheses_per_context_through_score():
    from parlai_acute.metrics.inputs import Item
    from parlai_acute.metrics.score import ScoreConfig, score

    items = [Item("a", ["hi"], ["i like dogs", "hello there"]), Item("b", ["yo"], ["good morning"])]
    replies = {"a": ["i like dogs", "hello"], "b": ["good evening"]}
    result = score(items, replies, ScoreConfig(metrics=("f1",), bootstrap=0))
    assert result.per_item.loc[0, "reply"] == "i like dogs"  # reference-based scores use the first hypothesis
    assert result.diversity["multi_hypothesis_contexts"] == 1 and result.diversity["hypotheses_per_context"] == 2
    expected = diversity.multi_hypothesis([(replies["a"], items[0].references)], F1(), "f1")
    assert result.diversity["f1_recall"] == pytest.approx(expected["f1_recall"])
    assert result.diversity["f1_precision"] == pytest.approx(expected["f1_precision"])
