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
        return Signature("f1", {"variant": "parlai", "tok": "parlai", "impl": "parlai_acute (= parlai.core.metrics.F1Metric)",
                                "parlai": library_version("parlai")})

    def pair_scores(self, replies, references):
        tokens = functools.lru_cache(maxsize=None)(normalise.parlai_tokens)  # a reference recurs for every reply
        return {"f1": np.array([normalise.overlap_f1(tokens(h), tokens(r)) for h, r in zip(replies, references)])}


def _bleu(order: int, smooth: str, smooth_value, tokenize: str, lowercase: bool, effective: bool):
    from sacrebleu.metrics import BLEU

    if smooth not in SMOOTHING:
        raise UserError(f"bleu_smoothing {smooth!r} is not one of {', '.join(SMOOTHING)}", param="bleu_smoothing")
    try:
        return BLEU(max_ngram_order=order, smooth_method=smooth, smooth_value=smooth_value, tokenize=tokenize,
                    lowercase=lowercase, effective_order=effective, force=True)
    except (KeyError, RuntimeError) as exc:
        raise UserError(f"bleu_tokenize {tokenize!r} is not available in sacrebleu ({exc}); use 13a, intl, char or "
                        f"none", param="bleu_tokenize") from None


class _BleuSettings:
    def __init__(self, smooth: str = "exp", smooth_value: float | None = None, tokenize: str = "13a",
                 lowercase: bool = True):
        self.smooth, self.smooth_value, self.tokenize, self.lowercase = smooth, smooth_value, tokenize, lowercase
        self.bleu = _bleu(4, smooth, smooth_value, tokenize, lowercase, self.effective)

    effective = True

    def _signature(self, name: str) -> Signature:
        fields = {"variant": "sacrebleu", "tok": self.tokenize, "case": "lc" if self.lowercase else "mixed", "smooth": self.smooth}
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
            self.pair_stats = np.zeros((0, 10))
            return {c: np.zeros(0) for c in self.columns}
        stats = self.bleu._extract_corpus_statistics(list(replies), [list(references)])
        self.pair_stats = np.array(stats, dtype=float)  # kept for the corpus BLEU of first references
        rows = [self._scores(s) for s in stats]
        return {c: np.array([r[c] for r in rows]) for c in self.columns}


class CorpusBleu(_BleuSettings, CorpusMetric):
    """Corpus BLEU-1..4 (sacrebleu ``corpus_score``): n-gram counts pooled over all items,
    each item against all its references together.

    Against first references only, an item's statistics are those of its first pair, so
    they are taken from the sentence BLEU of the same settings (``pairs``) when given.
    """

    columns = tuple(f"corpus_bleu{n}" for n in BLEU_ORDERS)
    prefix = "corpus_"
    effective = False

    def __init__(self, *args, pairs: "SentenceBleu | None" = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.pairs = pairs

    def item_stats(self, replies, references, pair_rows=None):
        if _pairs_match(self.pairs, pair_rows) and all(len(r) == 1 for r in references):
            return self.pairs.pair_stats[pair_rows["first"]]
        return self.stats(replies, references)

    def signature(self) -> Signature:
        return self._signature("corpus_bleu")

    def stats(self, replies, references):
        return np.array(self.bleu._extract_corpus_statistics(list(replies), _streams(references)), dtype=float)

    def from_stats(self, summed):
        return self._scores(summed)


def _pairs_match(pairs, pair_rows) -> bool:
    """The sentence metric last scored exactly the pairs of these items (see score.pair_table)."""
    return (pairs is not None and pair_rows is not None and getattr(pairs, "pair_stats", None) is not None
            and len(pairs.pair_stats) == int(sum(pair_rows["count"])))


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
        return Signature(name, {"variant": "sacrebleu", "nc": self.chrf.char_order, "nw": self.chrf.word_order, "beta": self.chrf.beta,
                                "case": "lc" if self.lowercase else "mixed", "sacrebleu": library_version("sacrebleu")})


class SentenceChrf(_ChrfSettings, PairMetric):
    columns = ("chrf",)

    def signature(self):
        return self._signature("chrf")

    def pair_scores(self, replies, references):
        if not len(replies):
            self.pair_stats, self.pair_f = np.zeros((0, 18)), np.zeros(0)
            return {"chrf": np.zeros(0)}
        stats = self.chrf._extract_corpus_statistics(list(replies), [list(references)])
        self.pair_stats = np.array(stats, dtype=float)  # kept for corpus chrF
        self.pair_f = np.array([self.chrf._compute_f_score(s) for s in stats])
        return {"chrf": self.pair_f / 100.0}


class CorpusChrf(_ChrfSettings, CorpusMetric):
    """Corpus chrF (sacrebleu): per item the best reference's statistics, pooled.

    sacrebleu keeps, per item, the statistics of the reference with the highest chrF (the
    first on ties); those are pair statistics, so they are taken from the sentence chrF of
    the same settings (``pairs``) when given.
    """

    columns = ("corpus_chrf",)

    def __init__(self, *args, pairs: "SentenceChrf | None" = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.pairs = pairs

    def item_stats(self, replies, references, pair_rows=None):
        if not _pairs_match(self.pairs, pair_rows):
            return self.stats(replies, references)
        single = all(len(r) == 1 for r in references)
        rows = []
        for first, count in zip(pair_rows["first"], pair_rows["count"]):
            f = self.pairs.pair_f[first:first + (1 if single else count)]
            rows.append(first + int(np.argmax(f)))  # argmax: the first of equal scores, as sacrebleu
        return self.pairs.pair_stats[rows]

    def signature(self):
        return self._signature("corpus_chrf")

    def stats(self, replies, references):
        return np.array(self.chrf._extract_corpus_statistics(list(replies), _streams(references)), dtype=float)

    def from_stats(self, summed):
        return {"corpus_chrf": self.chrf._compute_f_score([int(x) for x in summed]) / 100.0}


class _Tokenizer:
    def __init__(self, split):
        self.tokenize = split


class RougeL(PairMetric):
    """ROUGE-L F-measure (rouge-score), by default on lowercase Unicode word tokens.

    rouge-score's own tokeniser (``tokenize="rouge-score"``) drops every non-ASCII character
    and splits "don't" into "don t"; the default ``words`` keeps both (see
    :func:`.normalise.rouge_tokenizer`).
    """

    columns = ("rougeL",)

    def __init__(self, tokenize: str = "words"):
        from rouge_score import rouge_scorer

        from parlai_acute.metrics.normalise import rouge_tokenizer

        self.tokenize = tokenize
        self.scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tokenizer(rouge_tokenizer(tokenize)))

    def signature(self):
        return Signature("rougeL", {"variant": "rouge-score", "tok": self.tokenize, "stem": "no", "measure": "f",
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


class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class _Synonyms:
    __slots__ = ("_lemmas",)

    def __init__(self, names):
        self._lemmas = tuple(_Lemma(n) for n in names)

    def lemmas(self):
        return self._lemmas


class _SynonymWordNet:
    """What nltk's METEOR asks of WordNet, answered once per word.

    METEOR only collects, for a hypothesis word, the lemma names of all its synsets; this
    gives it one pseudo-synset holding exactly those names (computed from the real reader
    once per word), so the synonym sets, and the scores, are nltk's own. The tests compare
    with nltk given the plain reader."""

    def __init__(self, wordnet):
        self.wordnet = wordnet
        self._cache: dict = {}

    def synsets(self, word):
        found = self._cache.get(word)
        if found is None:
            names = dict.fromkeys(lemma.name() for synset in self.wordnet.synsets(word) for lemma in synset.lemmas())
            found = self._cache[word] = (_Synonyms(names),) if names else ()
        return found


class Meteor(PairMetric):
    """METEOR (nltk ``meteor_score``: exact, Porter-stem and WordNet-synonym matches)."""

    columns = ("meteor",)

    def __init__(self):
        from parlai_acute.metrics.wordnet import load_wordnet

        self.wordnet = load_wordnet()
        self.stemmer = _CachedPorterStemmer()
        self.synonyms = _SynonymWordNet(self.wordnet)

    def signature(self):
        from parlai_acute.metrics.wordnet import wordnet_dir, wordnet_version

        return Signature("meteor", {"variant": "nltk", "tok": "words", "alpha": 0.9, "beta": 3, "gamma": 0.5,
                                    "wordnet": f"{wordnet_version(self.wordnet)}:{wordnet_dir()}",
                                    "nltk": library_version("nltk")})

    def pair_scores(self, replies, references):
        from nltk.translate.meteor_score import single_meteor_score

        tokens = functools.lru_cache(maxsize=None)(normalise.words)
        out = np.zeros(len(replies))
        for i, (h, r) in enumerate(zip(replies, references)):
            hyp, ref = tokens(h), tokens(r)
            if hyp and ref:
                out[i] = single_meteor_score(ref, hyp, wordnet=self.synonyms, stemmer=self.stemmer)
        return {"meteor": out}
