"""Perplexity and hits@1/N with a real (tiny, local) transformers model, checked against its own scores."""
from __future__ import annotations

import math

import pytest

from parlai_acute.errors import UserError
from parlai_acute.metrics.inputs import Item
from parlai_acute.metrics.ranking import RankConfig, candidate_sets, rank, scorer_of

ITEMS = [
    Item("a", ["hello how are you today"], ["i am fine thank you"]),
    Item("b", ["what do you like to do on weekends"], ["i like to read books"]),
    Item("c", ["do you have any pets at home"], ["yes i have a cat"]),
    Item("d", ["hello", "hello how are you"], ["i am fine"]),
    Item("e", ["what do you like"], ["i like my dog"]),
    Item("f", ["have you any books"], ["yes at home"]),
]


@pytest.fixture(scope="module")
def hf_agent(tiny_gpt2):
    from parlai.core.params import ParlaiParser

    from parlai_acute.agents.hf_transformers import HfTransformersAgent

    parser = ParlaiParser(False, False)
    HfTransformersAgent.add_cmdline_args(parser)
    return HfTransformersAgent(parser.parse_args(["--hf-model", tiny_gpt2]))


def test_candidates_are_seeded_and_from_other_contexts():
    config = RankConfig(candidates=4, seed=3)
    first, again = candidate_sets(ITEMS, config), candidate_sets(ITEMS, config)
    assert first == again
    assert candidate_sets(ITEMS, RankConfig(candidates=4, seed=4)) != first
    for item, cands in zip(ITEMS, first):
        assert len(cands["distractors"]) == 3 and item.reference not in cands["distractors"]
        assert set(cands["distractors"]) <= {it.reference for it in ITEMS}
        assert cands["parrot"] == item.context[-1]
    with pytest.raises(UserError, match="fewer than the 6 distractors"):
        candidate_sets(ITEMS, RankConfig(candidates=7))


def test_hits_and_perplexity_match_the_models_own_scores(hf_agent):
    config = RankConfig(candidates=4, seed=0, bootstrap=100)
    score_fn, described = scorer_of(hf_agent, with_end=True)
    table, summary = rank(ITEMS, score_fn, config)
    sets = candidate_sets(ITEMS, config)
    total_lp = total_tokens = 0
    for item, cands, row in zip(ITEMS, sets, table.itertuples(index=False)):
        texts = [cands["gold"]] + cands["distractors"] + [cands["parrot"]]
        scored = [hf_agent.score_reply(item.context, t, with_end=True) for t in texts]
        sums = [s for _, s in scored]
        assert row.hit == float(sums[0] > max(sums[1:4]))
        assert row.hit_with_parrot == float(sums[0] > max(sums[1:]))
        assert row.parrot_beats_gold == float(sums[-1] >= sums[0])
        assert row.gold_logprob == pytest.approx(sums[0], abs=1e-4)
        total_lp += sums[0]
        total_tokens += len(scored[0][0])
    assert summary["perplexity"] == pytest.approx(math.exp(-total_lp / total_tokens), rel=1e-4)
    assert summary["hits@1/4"] == pytest.approx(table["hit"].mean())
    assert summary["hits@1/4+parrot"] <= summary["hits@1/4"]
    assert summary["perplexity_low"] <= summary["perplexity"] <= summary["perplexity_high"]
    assert described["end_token"] is True and described["vocab"] > 10


def test_without_parrot_and_mean_ranking(hf_agent):
    score_fn, _ = scorer_of(hf_agent, with_end=False)
    table, summary = rank(ITEMS, score_fn, RankConfig(candidates=3, parrot=False, rank_by="mean", bootstrap=0))
    assert "hit_with_parrot" not in table and "hits@1/3" in summary and "hits@1/3+parrot" not in summary


def test_an_agent_without_log_probabilities_is_a_one_line_error():
    from parlai.core.params import ParlaiParser

    from parlai_acute.agents.constant_reply import ConstantReplyAgent

    parser = ParlaiParser(False, False)
    ConstantReplyAgent.add_cmdline_args(parser)
    with pytest.raises(UserError, match="cannot score a given reply"):
        scorer_of(ConstantReplyAgent(parser.parse_args([])))


def test_shares_get_exact_intervals_even_at_zero():
    import pandas as pd

    from parlai_acute.metrics.ranking import summarise

    table = pd.DataFrame({"gold_logprob": [-10.0, -12.0, -9.0], "gold_tokens": [5, 6, 4], "hit": [0.0, 0.0, 0.0],
                          "gold_rank": [3, 2, 4]})
    summary = summarise(table, RankConfig(candidates=5, bootstrap=200))
    assert summary["hits@1/5"] == 0 and summary["hits@1/5_low"] == 0
    assert summary["hits@1/5_high"] == pytest.approx(1 - 0.025 ** (1 / 3))  # Clopper-Pearson upper bound at 0/3
