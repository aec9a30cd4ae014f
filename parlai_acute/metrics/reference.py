"""Reference-based metrics over (reply, reference) pairs and whole corpora.

Each wraps a maintained implementation: BLEU and chrF are sacrebleu's (its n-gram
statistics, smoothing and brevity penalty), ROUGE-L is rouge-score's, METEOR is nltk's
(with Debian's WordNet, :mod:`.wordnet`), F1 follows ParlAI's ``F1Metric``. The tests
check every one against the library called directly.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from parlai_acute.errors import UserError
from parlai_acute.metrics import normalise
from parlai_acute.metrics.base import CorpusMetric, PairMetric
from parlai_acute.metrics.signature import Signature, library_version

SMOOTHING = ("exp", "floor", "add-k", "none")
BLEU_ORDERS = (1, 2, 3, 4)


class F1(PairMetric):
    """Unigram F1 after ParlAI's normalisation (ParlAI's ``F1Metric``)."""

    columns = ("f1",)

    def signature(self) -> Signature:
        return Signature("f1", {"tok": "parlai", "impl": "parlai_acute (= parlai.core.metrics.F1Metric)",
                                "parlai": library_version("parlai")})

    def pair_scores(self, replies, references):
        cache: dict = {}

        def tokens(text):
            if text not in cache:
                cache[text] = normalise.parlai_tokens(text)
            return cache[text]

        return {"f1": np.array([normalise.overlap_f1(tokens(h), tokens(r)) for h, r in zip(replies, references)])}


def _bleu(order: int, smooth: str, smooth_value, tokenize: str, lowercase: bool, effective: bool):
    from sacrebleu.metrics import BLEU

    if smooth not in SMOOTHING:
        raise UserError(f"--bleu-smoothing {smooth!r} is not one of {', '.join(SMOOTHING)}")
    try:
        return BLEU(max_ngram_order=order, smooth_method=smooth, smooth_value=smooth_value, tokenize=tokenize,
                    lowercase=lowercase, effective_order=effective, force=True)
    except (KeyError, RuntimeError) as exc:
        raise UserError(f"--bleu-tokenize {tokenize!r} is not available in sacrebleu ({exc}); use 13a, intl, char or none") from None


class _BleuSettings:
    def __init__(self, smooth: str = "exp", smooth_value: float | None = None, tokenize: str = "13a",
                 lowercase: bool = True):
        self.smooth, self.smooth_value, self.tokenize, self.lowercase = smooth, smooth_value, tokenize, lowercase
        self.bleu = _bleu(4, smooth, smooth_value, tokenize, lowercase, self.effective)

    effective = True

    def _signature(self, name: str) -> Signature:
        fields = {"tok": self.tokenize, "case": "lc" if self.lowercase else "mixed", "smooth": self.smooth}
        if self.smooth in ("floor", "add-k"):
            fields["smooth_value"] = self.bleu.smooth_value if self.smooth_value is not None else \
                type(self.bleu).SMOOTH_DEFAULTS[self.smooth]
        fields["eff"] = "yes" if self.effective else "no"
        fields["orders"] = "1-4"
        fields["sacrebleu"] = library_version("sacrebleu")
        return Signature(name, fields)

    def _scores(self, stats) -> dict[str, float]:
        """BLEU-1..4 from one row of order-4 statistics [sys_len, ref_len, correct x4, total x4]."""
        out = {}
        for n in BLEU_ORDERS:
            score = self.bleu.compute_bleu(
                correct=[int(c) for c in stats[2:2 + n]], total=[int(t) for t in stats[6:6 + n]],
                sys_len=int(stats[0]), ref_len=int(stats[1]), smooth_method=self.smooth,
                smooth_value=self.smooth_value, effective_order=self.effective, max_ngram_order=n)
            out[f"{self.prefix}bleu{n}"] = score.score / 100.0
        return out


class SentenceBleu(_BleuSettings, PairMetric):
    """Sentence BLEU-1..4 of each pair (sacrebleu, effective order); with several
    references :mod:`.score` takes the maximum (Gupta et al. 2019)."""

    columns = tuple(f"bleu{n}" for n in BLEU_ORDERS)
    prefix = ""

    def signature(self) -> Signature:
        return self._signature("bleu")

    def pair_scores(self, replies, references):
        if not len(replies):
            return {c: np.zeros(0) for c in self.columns}
        stats = self.bleu._extract_corpus_statistics(list(replies), [list(references)])
        rows = [self._scores(s) for s in stats]
        return {c: np.array([r[c] for r in rows]) for c in self.columns}


class CorpusBleu(_BleuSettings, CorpusMetric):
    """Corpus BLEU-1..4 (sacrebleu ``corpus_score``): n-gram counts pooled over all items,
    each item against all its references together."""

    columns = tuple(f"corpus_bleu{n}" for n in BLEU_ORDERS)
    prefix = "corpus_"
    effective = False

    def signature(self) -> Signature:
        return self._signature("corpus_bleu")

    def stats(self, replies, references):
        return np.array(self.bleu._extract_corpus_statistics(list(replies), _streams(references)), dtype=float)

    def from_stats(self, summed):
        return self._scores(summed)


def _streams(references: Sequence[Sequence[str]]) -> list[list]:
    """sacrebleu's reference streams; ``None`` where an item has fewer references."""
    width = max(len(r) for r in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


class _ChrfSettings:
    def __init__(self, lowercase: bool = True):
        from sacrebleu.metrics import CHRF

        self.lowercase = lowercase
        self.chrf = CHRF(lowercase=lowercase)

    def _signature(self, name: str) -> Signature:
        return Signature(name, {"nc": self.chrf.char_order, "nw": self.chrf.word_order, "beta": self.chrf.beta,
                                "case": "lc" if self.lowercase else "mixed", "sacrebleu": library_version("sacrebleu")})


class SentenceChrf(_ChrfSettings, PairMetric):
    columns = ("chrf",)

    def signature(self):
        return self._signature("chrf")

    def pair_scores(self, replies, references):
        if not len(replies):
            return {"chrf": np.zeros(0)}
        stats = self.chrf._extract_corpus_statistics(list(replies), [list(references)])
        return {"chrf": np.array([self.chrf._compute_f_score(s) / 100.0 for s in stats])}


class CorpusChrf(_ChrfSettings, CorpusMetric):
    """Corpus chrF (sacrebleu): per item the best reference's statistics, pooled."""

    columns = ("corpus_chrf",)

    def signature(self):
        return self._signature("corpus_chrf")

    def stats(self, replies, references):
        return np.array(self.chrf._extract_corpus_statistics(list(replies), _streams(references)), dtype=float)

    def from_stats(self, summed):
        return {"corpus_chrf": self.chrf._compute_f_score([int(x) for x in summed]) / 100.0}


class _WordsTokenizer:
    def tokenize(self, text):
        return normalise.words(text)


class RougeL(PairMetric):
    """ROUGE-L F-measure (rouge-score) on lowercase Unicode word tokens.

    rouge-score's own tokeniser drops every non-ASCII character; ours keeps them.
    """

    columns = ("rougeL",)

    def __init__(self):
        from rouge_score import rouge_scorer

        self.scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_WordsTokenizer())

    def signature(self):
        return Signature("rougeL", {"tok": "words", "stem": "no", "measure": "f",
                                    "rouge-score": library_version("rouge-score")})

    def pair_scores(self, replies, references):
        return {"rougeL": np.array([self.scorer.score(r, h)["rougeL"].fmeasure for h, r in zip(replies, references)])}


class _CachedPorterStemmer:
    """nltk's Porter stemmer (METEOR's default), remembering each word's stem: METEOR
    stems every word of every pair, and most of its time went there."""

    def __init__(self):
        from nltk.stem.porter import PorterStemmer

        self._stem = functools.lru_cache(maxsize=200_000)(PorterStemmer().stem)

    def stem(self, word: str) -> str:
        return self._stem(word)


class Meteor(PairMetric):
    """METEOR (nltk ``meteor_score``: exact, Porter-stem and WordNet-synonym matches)."""

    columns = ("meteor",)

    def __init__(self):
        from parlai_acute.metrics.wordnet import load_wordnet

        self.wordnet = load_wordnet()
        self.stemmer = _CachedPorterStemmer()

    def signature(self):
        from parlai_acute.metrics.wordnet import wordnet_dir, wordnet_version

        return Signature("meteor", {"tok": "words", "alpha": 0.9, "beta": 3, "gamma": 0.5,
                                    "wordnet": f"{wordnet_version(self.wordnet)}:{wordnet_dir()}",
                                    "nltk": library_version("nltk")})

    def pair_scores(self, replies, references):
        from nltk.translate.meteor_score import single_meteor_score

        cache: dict = {}

        def tokens(text):
            if text not in cache:
                cache[text] = normalise.words(text)
            return cache[text]

        out = np.zeros(len(replies))
        for i, (h, r) in enumerate(zip(replies, references)):
            hyp, ref = tokens(h), tokens(r)
            if hyp and ref:
                out[i] = single_meteor_score(ref, hyp, wordnet=self.wordnet, stemmer=self.stemmer)
        return {"meteor": out}
