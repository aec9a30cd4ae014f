"""Every reference-based metric against its library called directly, and the edge cases."""
from __future__ import annotations

import math

import numpy as np
import pytest
from metric_samples import PAIRS

from parlai_acute.errors import UserError
from parlai_acute.metrics import normalise
from parlai_acute.metrics.inputs import Item
from parlai_acute.metrics.reference import (SMOOTHING, CorpusBleu, CorpusChrf, F1, Meteor, RougeL, SentenceBleu,
                                            SentenceChrf)
from parlai_acute.metrics.score import ScoreConfig, score

FLAT = [(h, r) for h, refs in PAIRS for r in refs]
HYPS, REFS = [h for h, _ in FLAT], [r for _, r in FLAT]


def test_f1_equals_parlai_f1metric_single_and_multi():
    from parlai.core.metrics import F1Metric

    ours = F1().pair_scores(HYPS, REFS)["f1"]
    for (h, r), value in zip(FLAT, ours):
        assert value == pytest.approx(F1Metric.compute(h, [r]).value(), abs=1e-12)
    result = score([Item(str(k), ["ctx"], refs) for k, (_, refs) in enumerate(PAIRS)],
                   {str(k): [h] for k, (h, _) in enumerate(PAIRS)}, ScoreConfig(metrics=("f1",), bootstrap=0))
    for (h, refs), single, multi in zip(PAIRS, result.per_item["f1_single"], result.per_item["f1_multi"]):
        assert single == pytest.approx(F1Metric.compute(h, refs[:1]).value())
        assert multi == pytest.approx(F1Metric.compute(h, refs).value())  # ParlAI takes the max over answers


def test_normalisation_is_parlais():
    from parlai.core.metrics import normalize_answer

    for text in HYPS + REFS + ["Don't   stop_me -- THE end (an apple) a's"]:
        assert normalise.parlai_normalise(text) == normalize_answer(text)


@pytest.mark.parametrize("smoothing", SMOOTHING)
def test_sentence_bleu_equals_sacrebleu(smoothing):
    from sacrebleu.metrics import BLEU

    ours = SentenceBleu(smooth=smoothing).pair_scores(HYPS, REFS)
    for n in (1, 2, 3, 4):
        direct = BLEU(max_ngram_order=n, smooth_method=smoothing, effective_order=True, lowercase=True)
        expected = [direct.sentence_score(h, [r]).score / 100 for h, r in FLAT]
        assert ours[f"bleu{n}"] == pytest.approx(expected, abs=1e-9)


def test_sentence_bleu_smoothing_changes_scores_and_is_recorded():
    a = SentenceBleu(smooth="exp").pair_scores(HYPS, REFS)["bleu4"]
    b = SentenceBleu(smooth="none").pair_scores(HYPS, REFS)["bleu4"]
    assert not np.allclose(a, b)
    assert "smooth:floor" in SentenceBleu(smooth="floor").signature().format()
    assert "smooth_value:0.1" in SentenceBleu(smooth="floor").signature().format()
    with pytest.raises(UserError, match="^bleu_smoothing"):
        SentenceBleu(smooth="epsilon")


def test_corpus_bleu_and_chrf_equal_sacrebleu_with_varying_reference_counts():
    from sacrebleu.metrics import BLEU, CHRF

    hyps = [h for h, _ in PAIRS]
    refs = [r for _, r in PAIRS]
    width = max(len(r) for r in refs)
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    bleu = CorpusBleu()
    got = bleu.from_stats(bleu.stats(hyps, refs).sum(axis=0))
    for n in (1, 2, 3, 4):
        assert got[f"corpus_bleu{n}"] == pytest.approx(
            BLEU(max_ngram_order=n, lowercase=True).corpus_score(hyps, streams).score / 100, abs=1e-9)
    chrf = CorpusChrf()
    assert chrf.from_stats(chrf.stats(hyps, refs).sum(axis=0))["corpus_chrf"] == pytest.approx(
        CHRF(lowercase=True).corpus_score(hyps, streams).score / 100, abs=1e-9)
    pair = SentenceChrf().pair_scores(HYPS, REFS)["chrf"]
    assert pair == pytest.approx([CHRF(lowercase=True).sentence_score(h, [r]).score / 100 for h, r in FLAT])


def test_rouge_l_equals_rouge_score():
    from rouge_score import rouge_scorer

    ours = RougeL().pair_scores(HYPS, REFS)["rougeL"]
    direct = rouge_scorer.RougeScorer(["rougeL"], tokenizer=RougeL().scorer._tokenizer)
    assert ours == pytest.approx([direct.score(r, h)["rougeL"].fmeasure for h, r in FLAT])
    # on plain lowercase ASCII words our tokens are rouge-score's own
    plain = rouge_scorer.RougeScorer(["rougeL"])
    h, r = "the cat sat on the mat", "there is a cat on the mat"
    assert RougeL().pair_scores([h], [r])["rougeL"][0] == pytest.approx(plain.score(r, h)["rougeL"].fmeasure)
    # and unlike rouge-score's default, non-ASCII words count
    assert RougeL().pair_scores(["你好 朋友"], ["你好"])["rougeL"][0] > 0
    assert plain.score("你好", "你好 朋友")["rougeL"].fmeasure == 0


def test_meteor_equals_nltk_with_debian_wordnet():
    from nltk.translate.meteor_score import meteor_score

    from parlai_acute.metrics.wordnet import load_wordnet

    wordnet = load_wordnet()
    assert wordnet.get_version() == "3.0" and "dog.n.01" in {s.name() for s in wordnet.synsets("dog")}
    ours = Meteor().pair_scores(HYPS, REFS)["meteor"]
    for (h, r), value in zip(FLAT, ours):
        hyp, ref = normalise.words(h), normalise.words(r)
        expected = meteor_score([ref], hyp, wordnet=wordnet) if hyp and ref else 0.0
        assert value == pytest.approx(expected)
    # a synonym found only through WordNet raises the score over exact matching
    synonym = Meteor().pair_scores(["i own a hound"], ["i have a dog"])["meteor"][0]
    unrelated = Meteor().pair_scores(["i own a table"], ["i have a dog"])["meteor"][0]
    assert synonym > unrelated


def test_multi_reference_meteor_is_nltks_max_over_references():
    from nltk.translate.meteor_score import meteor_score

    from parlai_acute.metrics.wordnet import load_wordnet

    h, refs = PAIRS[4]
    result = score([Item("x", ["c"], refs)], {"x": [h]}, ScoreConfig(metrics=("meteor",), bootstrap=0))
    expected = meteor_score([normalise.words(r) for r in refs], normalise.words(h), wordnet=load_wordnet())
    assert result.per_item["meteor_multi"][0] == pytest.approx(expected)


def test_embedding_metrics_from_the_shipped_matrix():
    from safetensors import safe_open
    from tokenizers import Tokenizer

    from parlai_acute.metrics.embeddings import EmbeddingMetrics, model_dir

    metric = EmbeddingMetrics()
    h, r = "I love my dog", "my dog is lovely"
    got = metric.pair_scores([h], [r])
    # independent computation straight from the package files
    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_padding()
    with safe_open(str(model_dir() / "model.safetensors"), "np") as fh:
        matrix = fh.get_tensor("embeddings.word_embeddings.weight")
    hv = matrix[tok.encode(normalise.parlai_normalise(h), add_special_tokens=False).ids]
    rv = matrix[tok.encode(normalise.parlai_normalise(r), add_special_tokens=False).ids]
    cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
    assert got["emb_average"][0] == pytest.approx(cos(hv.mean(0), rv.mean(0)), abs=1e-5)
    ext = lambda v: np.where(v.max(0) >= -v.min(0), v.max(0), v.min(0))  # noqa: E731
    assert got["emb_extrema"][0] == pytest.approx(cos(ext(hv), ext(rv)), abs=1e-5)
    sims = np.array([[cos(a, b) for b in rv] for a in hv])
    assert got["emb_greedy"][0] == pytest.approx((sims.max(1).mean() + sims.max(0).mean()) / 2, abs=1e-5)
    same = metric.pair_scores([h], [h])
    assert all(same[c][0] == pytest.approx(1.0, abs=1e-5) for c in metric.columns)
    assert got["emb_average"][0] > metric.pair_scores([h], ["the stock market fell sharply"])["emb_average"][0]


def test_edge_cases_give_defined_values():
    """Empty reply, punctuation-only reply, non-ASCII text and 1-4 references per context."""
    items = [Item(str(k), ["a context"], refs) for k, (_, refs) in enumerate(PAIRS)]
    replies = {str(k): [h] for k, (h, _) in enumerate(PAIRS)}
    result = score(items, replies, ScoreConfig(bootstrap=50))
    table = result.per_item
    value_columns = [c for c in table.columns if c.endswith(("_single", "_multi"))]
    assert np.isfinite(table[value_columns].to_numpy(dtype=float)).all()
    empty = table.iloc[1]
    assert all(empty[c] == 0 for c in value_columns)  # an empty reply scores 0 everywhere
    punct = table.iloc[2]
    assert punct["f1_multi"] == 0 and punct["emb_greedy_multi"] == 0 and punct["meteor_multi"] == 0
    assert table.iloc[3]["f1_multi"] > 0 and table.iloc[3]["emb_average_multi"] > 0  # non-ASCII words match
    for column in [c[:-6] for c in value_columns if c.endswith("_multi")]:
        assert (table[f"{column}_multi"] >= table[f"{column}_single"] - 1e-12).all()
    assert result.config["empty_replies"] == 1
    assert list(table["n_references"]) == [3, 1, 2, 3, 4, 1]
    assert "nrefs:1-4" in result.signatures["bleu"]["signature"]
    summary = result.summary.set_index("metric")
    assert summary.loc["corpus_bleu4", "multi"] > summary.loc["corpus_bleu4", "single"]
    for kind in ("single", "multi"):
        assert (summary[f"{kind}_low"] <= summary[kind] + 1e-9).all()
        assert (summary[f"{kind}_high"] >= summary[kind] - 1e-9).all()


def test_one_context_has_no_interval_rather_than_a_zero_width_one():
    result = score([Item("x", ["c"], ["hello there"])], {"x": ["hello"]}, ScoreConfig(metrics=("f1",), bootstrap=100))
    row = result.summary.iloc[0]
    assert math.isnan(row["single_low"]) and math.isnan(row["single_high"])


def test_contexts_that_all_score_the_same_have_no_interval():
    items = [Item(str(k), ["c"], ["hello there"]) for k in range(5)]
    result = score(items, {str(k): ["goodbye"] for k in range(5)}, ScoreConfig(metrics=("f1",), bootstrap=100))
    row = result.summary.iloc[0]
    assert row["single"] == 0 and math.isnan(row["single_low"]) and math.isnan(row["single_high"])


def test_corpus_scores_of_a_run_equal_sacrebleu_single_and_multi():
    """score() takes corpus statistics from the pair statistics where it can; the numbers stay sacrebleu's."""
    from sacrebleu.metrics import BLEU, CHRF

    items = [Item(str(k), ["c"], refs) for k, (_, refs) in enumerate(PAIRS)]
    hyps = [h for h, _ in PAIRS]
    result = score(items, {str(k): [h] for k, h in enumerate(hyps)}, ScoreConfig(metrics=("bleu", "chrf"), bootstrap=0))
    summary = result.summary.set_index("metric")
    width = max(len(r) for _, r in PAIRS)
    streams = {"single": [[r[0] for _, r in PAIRS]],
               "multi": [[r[k] if k < len(r) else None for _, r in PAIRS] for k in range(width)]}
    for kind, refs in streams.items():
        for n in (1, 2, 3, 4):
            expected = BLEU(max_ngram_order=n, lowercase=True).corpus_score(hyps, refs).score / 100
            assert summary.loc[f"corpus_bleu{n}", kind] == pytest.approx(expected, abs=1e-9)
        expected = CHRF(lowercase=True).corpus_score(hyps, refs).score / 100
        assert summary.loc["corpus_chrf", kind] == pytest.approx(expected, abs=1e-9)
