"""The metric variants of the literature (issue 24): coco-caption / nlg-eval BLEU, ROUGE-L, CIDEr-D
and METEOR 1.5, and rouge-score's tokeniser, each against hand-worked numbers on fixtures written
here and against the reference implementation called directly (pycocoevalcap's scorers, the
METEOR 1.5 jar in its file mode, rouge-score's own tokeniser)."""
from __future__ import annotations

import contextlib
import io
import json
import math
import random
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from parlai_acute.errors import UserError
from parlai_acute.metrics import coco
from parlai_acute.metrics.inputs import Item
from parlai_acute.metrics.reference import RougeL, SentenceBleu
from parlai_acute.metrics.score import ScoreConfig, score
from parlai_acute.scripts.main import main


def _random_fixture(seed=0, n=120):
    rng = random.Random(seed)
    vocab = "a b c d e f g the cat mat sat on".split()

    def sentence():
        return " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12)))

    return [sentence() for _ in range(n)], [[sentence() for _ in range(rng.randint(1, 4))] for _ in range(n)]


# --- BLEU ---------------------------------------------------------------------------------------

def test_coco_bleu_equals_hand_worked_counts_and_keeps_tiny_scores():
    # reply: the cat sat on the mat (6 tokens); references: the cat is on the mat (6), a cat sat (3)
    # clipped matches: 1-grams 6/6, 2-grams (the cat, cat sat, on the, the mat) 4/5, 3-grams (on the mat) 1/4,
    # 4-grams 0/3; closest reference length 6 = reply length, but coco's constants make the length ratio
    # (6 + 1e-15) / (6 + 1e-9) just under 1, so its penalty exp(1 - 1/ratio) is 1 - 1.7e-10, not 1.
    hyp, refs = "the cat sat on the mat", ["the cat is on the mat", "a cat sat"]
    stats = coco.bleu_stats(hyp.split(), [r.split() for r in refs])
    assert stats == [6, 6, 6, 4, 1, 0, 6, 5, 4, 3]
    got = coco.CocoBleu().item_scores([hyp], [refs])
    p = [(6 + 1e-15) / (6 + 1e-9), (4 + 1e-15) / (5 + 1e-9), (1 + 1e-15) / (4 + 1e-9), 1e-15 / (3 + 1e-9)]
    for n in range(1, 5):
        penalty = math.exp(1 - (6 + 1e-9) / (6 + 1e-15))
        assert got[f"coco_bleu{n}"][0] == pytest.approx(math.prod(p[:n]) ** (1 / n) * penalty, rel=1e-13)
    # no 4-gram matches: coco keeps a tiny positive score, sacrebleu without smoothing gives exactly 0
    assert 0 < got["coco_bleu4"][0] < 1e-3
    assert SentenceBleu(smooth="none", tokenize="none").pair_scores([hyp], [refs[0]])["bleu4"][0] == 0


def test_coco_bleu_brevity_penalty_uses_the_closest_reference_length():
    # 2 tokens against 6: exp(1 - 6/2); 4 tokens against lengths 2 and 7: closest is 2, so no penalty
    # (the average, 4.5, would penalise)
    short = coco.CocoBleu().item_scores(["the cat"], [["the cat sat on the mat"]])["coco_bleu1"][0]
    assert short == pytest.approx(math.exp(1 - 3), rel=1e-9)
    four = coco.CocoBleu().item_scores(["a b c d"], [["a b", "a b c d e f g"]])["coco_bleu1"][0]
    assert four == pytest.approx(1.0, rel=1e-9)
    # on a tie (3 and 5 around 4) the shorter length is taken: no penalty again
    assert coco.bleu_stats("a b c d".split(), ["x y z".split(), "v w x y z".split()])[1] == 3


def test_coco_bleu_corpus_pools_statistics():
    hyps, refs = ["the cat", "a b c d"], [["the cat sat on the mat"], ["a b", "a b c d e f g"]]
    metric = coco.CorpusCocoBleu()
    stats = metric.stats(hyps, refs)
    assert stats[:, 0].sum() == 6 and stats[:, 1].sum() == 6 + 2  # reply lengths, closest reference lengths
    got = metric.from_stats(stats.sum(axis=0))
    assert got["corpus_coco_bleu1"] == pytest.approx((6 + 1e-15) / (6 + 1e-9) * math.exp(1 - 8 / 6), rel=1e-9)


def test_coco_variants_equal_pycocoevalcap_called_directly():
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    hyps, refs = _random_fixture()
    gts, res = dict(enumerate(refs)), {i: [h] for i, h in enumerate(hyps)}
    with contextlib.redirect_stdout(io.StringIO()):  # coco's BLEU prints its totals
        corpus, per_item = Bleu(4).compute_score(gts, res)
    mine = coco.CocoBleu().item_scores(hyps, refs)
    pooled = coco.CorpusCocoBleu()
    pooled = pooled.from_stats(pooled.stats(hyps, refs).sum(axis=0))
    for n in range(1, 5):
        np.testing.assert_allclose(mine[f"coco_bleu{n}"], per_item[n - 1], rtol=1e-12, atol=0)
        assert pooled[f"corpus_coco_bleu{n}"] == pytest.approx(corpus[n - 1], rel=1e-12)
    np.testing.assert_allclose(coco.CocoRougeL().item_scores(hyps, refs)["coco_rougeL"],
                               Rouge().compute_score(gts, res)[1], rtol=1e-12)
    np.testing.assert_allclose(coco.Cider().item_scores(hyps, refs)["cider"], Cider().compute_score(gts, res)[1],
                               rtol=1e-9)


# --- ROUGE-L ------------------------------------------------------------------------------------

def test_coco_rouge_l_is_f_beta_1_2_of_a_hand_worked_lcs():
    # a b c d / a c e d f: LCS a c d = 3, P = 3/4, R = 3/5
    p, r = 3 / 4, 3 / 5
    want = (1 + 1.2 ** 2) * p * r / (r + 1.2 ** 2 * p)
    assert coco.lcs_length("a b c d".split(), "a c e d f".split()) == 3
    got = coco.CocoRougeL().item_scores(["a b c d"], [["a c e d f"]])["coco_rougeL"][0]
    assert got == pytest.approx(want, rel=1e-12) and got != pytest.approx(2 * p * r / (p + r))
    # several references: the best precision (1, second) and the best recall (1, first) of different
    # references, so 1 although no single reference scores 1
    assert coco.CocoRougeL().item_scores(["a b c d"], [["a b", "a b c d e f g h"]])["coco_rougeL"][0] == 1.0
    assert coco.CocoRougeL().item_scores([""], [["a b"]])["coco_rougeL"][0] == 0.0


def test_multi_reference_of_a_coco_variant_is_its_own_in_score():
    items = [Item("x", ["c"], ["a b", "a b c d e f g h"])]
    result = score(items, {"x": ["a b c d"]}, ScoreConfig(metrics=("rouge",), rouge_variant=("rouge-score", "coco"),
                                                          bootstrap=0))
    row = result.per_item.iloc[0]
    single = coco.CocoRougeL().item_scores(["a b c d"], [["a b"]])["coco_rougeL"][0]
    assert row["coco_rougeL_single"] == pytest.approx(single) and row["coco_rougeL_multi"] == 1.0
    assert row["rougeL_multi"] < 1.0  # rouge-score's multi-reference is the best single pair


# --- CIDEr-D ------------------------------------------------------------------------------------

def test_cider_by_hand_on_two_items():
    # two items with no shared n-gram: every reference n-gram has document frequency 1, weight
    # tf * log 2; a reply equal to its reference has cosine 1 at each order and no length penalty,
    # so 10 * mean over orders of 1 = 10; a reply made of the other item's words scores 0.
    refs = [["the cat sat on the mat"], ["dogs run in parks daily"]]
    got = coco.Cider().item_scores(["the cat sat on the mat", "the cat sat"], refs)["cider"]
    assert got[0] == pytest.approx(10.0) and got[1] == 0.0
    # one item alone: every document frequency is the corpus size, so every weight is log 1 = 0
    assert coco.Cider().item_scores(["the cat"], [["the cat"]])["cider"][0] == 0.0


def test_cider_length_penalty_counts_bigrams_as_coco_does():
    # reply "a b c" (2 bigrams) against "a b c d e" (4 bigrams) beside an unrelated item: only 1..3-grams
    # of the reply match; the Gaussian penalty uses the bigram counts, exp(-(2-4)^2 / 72)
    refs = [["a b c d e"], ["x y z"]]
    got = coco.Cider().item_scores(["a b c", "x y z"], refs)["cider"][0]
    w = math.log(2)
    cosines = [3 * w * w / (math.sqrt(3) * w * math.sqrt(5) * w), 2 / (math.sqrt(2) * 2),
               1 / (1 * math.sqrt(3)), 0.0]
    assert got == pytest.approx(10 * np.mean(cosines) * math.exp(-4 / 72), rel=1e-12)


# --- tokenisers ---------------------------------------------------------------------------------

def test_rouge_score_tokeniser_splits_nt_as_rouge_score_does():
    from rouge_score import rouge_scorer

    pairs = [("i don't know", "i do not know"), ("That's the café, isn't it?", "it is the cafe"),
             ("won't you come", "you will not come"), ("", "x")]
    own = rouge_scorer.RougeScorer(["rougeL"])  # rouge-score's default tokenizer
    ours = RougeL(tokenize="rouge-score").pair_scores([h for h, _ in pairs], [r for _, r in pairs])["rougeL"]
    np.testing.assert_allclose(ours, [own.score(r, h)["rougeL"].fmeasure for h, r in pairs], rtol=1e-12)
    # by hand: rouge-score tokens i don t know / i do not know: LCS 2, P = R = 1/2; ours keep "don't":
    # i don't know / i do not know: LCS 2, P = 2/3, R = 2/4
    assert ours[0] == pytest.approx(0.5)
    words = RougeL().pair_scores(["i don't know"], ["i do not know"])["rougeL"][0]
    assert words == pytest.approx(2 * (2 / 3) * (2 / 4) / (2 / 3 + 2 / 4))
    assert "tok:rouge-score" in RougeL(tokenize="rouge-score").signature().format()
    assert coco.rouge_tokenizer("rouge-score")("don't") == ["don", "t"] and coco.rouge_tokenizer("words")("don't") == ["don't"]


# --- settings and signatures --------------------------------------------------------------------

def test_variants_are_checked_and_named_in_every_signature():
    with pytest.raises(UserError, match="^bleu_variant 'nlgeval' is not one of sacrebleu, coco"):
        ScoreConfig(bleu_variant=("nlgeval",))
    with pytest.raises(UserError, match="^bleu_smoothing 'exp' applies to sacrebleu BLEU only"):
        ScoreConfig(bleu_variant=("coco",), bleu_smoothing="exp")
    with pytest.raises(UserError, match="^rouge_tokenize 'ptb' is not one of words, rouge-score, none"):
        ScoreConfig(metrics=("rouge",), rouge_tokenize="ptb")
    items = [Item("x", ["c"], ["the cat sat", "a cat"]), Item("y", ["c"], ["hello there"])]
    result = score(items, {"x": ["the cat"], "y": ["hello"]},
                   ScoreConfig(metrics=("f1", "bleu", "rouge", "chrf", "cider"), bleu_variant=("sacrebleu", "coco"),
                               rouge_variant=("rouge-score", "coco"), bootstrap=0))
    for row in result.summary.itertuples():
        assert "|variant:" in row.signature, row.metric
    by_metric = result.summary.set_index("metric")["signature"]
    assert by_metric["coco_bleu4"].startswith("coco_bleu|variant:coco|nrefs:1-2|tok:none|")
    assert by_metric["bleu4"].startswith("bleu|variant:sacrebleu|nrefs:1-2|tok:13a|")
    assert by_metric["corpus_coco_bleu4"].startswith("corpus_coco_bleu|variant:coco|")
    assert "beta:1.2" in by_metric["coco_rougeL"] and "df:corpus" in by_metric["cider"]
    assert set(result.signatures) >= {"bleu", "coco_bleu", "rougeL", "coco_rougeL", "cider", "corpus_coco_bleu"}


def test_cli_selects_variants_by_name(capsys, tmp_path):
    ratings = tmp_path / "ratings.csv"
    rng = random.Random(3)
    hyps, refs = _random_fixture(seed=3, n=12)
    pd.DataFrame({"response": hyps, "reference": [r[0] for r in refs], "rating": [rng.randint(1, 5) for _ in hyps],
                  "model": [f"m{k % 4}" for k in range(len(hyps))]}).to_csv(ratings, index=False)
    out = tmp_path / "corr"
    code = main(["metrics", "correlate", "--ratings", str(ratings), "--metrics", "bleu,rouge,cider",
                 "--bleu-variant", "coco", "--rouge-variant", "coco,rouge-score", "--rouge-tokenize", "rouge-score",
                 "--bootstrap", "20", "-o", str(out)])
    stdout = capsys.readouterr().out
    assert code == 0 and "coco_bleu4" in stdout and "coco_rougeL" in stdout and "cider" in stdout
    table = pd.read_csv(out / "correlations_response.csv")
    assert list(table["metric"]) == ["coco_bleu1", "coco_bleu2", "coco_bleu3", "coco_bleu4", "rougeL", "coco_rougeL",
                                     "cider"]
    run = json.loads((out / "run.json").read_text())
    assert run["signatures"]["coco_bleu"]["variant"] == "coco" and "bleu" not in run["signatures"]
    assert run["signatures"]["rougeL"]["tok"] == "rouge-score" and run["signatures"]["coco_rougeL"]["tok"] == "rouge-score"
    assert main(["metrics", "correlate", "--ratings", str(ratings), "--bleu-variant", "coco", "--bleu-smoothing",
                 "floor", "-o", str(tmp_path / "no")]) == 2
    assert "applies to sacrebleu BLEU only" in capsys.readouterr().err


# --- METEOR 1.5 ---------------------------------------------------------------------------------

METEOR_PAIRS = [("the cat sat on the mat", "a cat was sitting on the mat"),
                ("hello there", "hi there friend"),
                ("I would like to purchase a car", "i want to buy a car"),
                ("completely unrelated words", "the weather is nice today"),
                ("the cat sat on the mat", "the cat sat on the mat")]


@pytest.fixture(scope="module")
def meteor15():
    if shutil.which("java") is None:
        pytest.fail("METEOR 1.5 needs Java: run `make java` (Debian's default-jre-headless)")
    return coco.Meteor15()


def test_meteor15_agrees_with_the_jar_called_directly(meteor15, tmp_path):
    hyps, refs = [h for h, _ in METEOR_PAIRS], [r for _, r in METEOR_PAIRS]
    ours = meteor15.item_scores(hyps, [[r] for r in refs])["meteor15"]
    (tmp_path / "hyp.txt").write_text("\n".join(hyps) + "\n")
    (tmp_path / "ref.txt").write_text("\n".join(refs) + "\n")
    jar = coco.meteor_jar()
    done = subprocess.run(["java", "-Xmx2G", "-jar", jar, str(tmp_path / "hyp.txt"), str(tmp_path / "ref.txt"),
                           "-l", "en", "-norm"], capture_output=True, text=True, check=True)
    direct = [float(line.split()[-1]) for line in done.stdout.splitlines() if line.startswith("Segment ")]
    assert "Modules:        exact stem synonym paraphrase" in done.stdout
    np.testing.assert_allclose(ours, direct, rtol=1e-12)
    # sanity: identical > paraphrase ("purchase" / "buy") > unrelated, all in [0, 1]
    assert 0 <= ours.min() and ours.max() <= 1 and ours[4] > ours[2] > ours[3]


def test_meteor15_multi_reference_is_the_best_reference_and_empty_scores_zero(meteor15):
    hyp, refs = "I would like to purchase a car", ["the weather is nice today", "i want to buy a car"]
    singles = meteor15.item_scores([hyp, hyp], [[refs[0]], [refs[1]]])["meteor15"]
    multi = meteor15.item_scores([hyp, "", "x ||| y\nz"], [refs, refs, ["x y z"]])["meteor15"]
    assert multi[0] == pytest.approx(singles.max(), rel=1e-12) and singles[0] < singles[1]
    assert multi[1] == 0.0 and multi[2] > 0  # a field separator and a line break in a reply do not break the protocol
    assert meteor15.signature().format().startswith("meteor15|variant:1.5|lang:en|norm:yes|")
