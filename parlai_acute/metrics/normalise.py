"""Text normalisation and tokenisation shared by every metric here.

Two tokenisations, named in every signature that uses them:

* ``parlai``: ParlAI's answer normalisation (lowercase; each ASCII punctuation character
  becomes a space, so "don't" is "don t"; the words a, an, the dropped; whitespace
  collapsed). F1, ROUGE-L, METEOR and the embedding metrics use it, so F1 equals
  ``parlai.core.metrics.F1Metric``.
* ``words``: lowercase Unicode word tokens, apostrophes kept inside words ("don't" is one
  word). Log analytics (lengths, rare words, repeats) count words this way.
"""
from __future__ import annotations

import re
import string
from collections import Counter

from parlai_acute.errors import UserError

_PUNCTUATION = re.compile("[" + re.escape(string.punctuation) + "]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_WORDS = re.compile(r"\w+(?:['\u2019]\w+)*")


def parlai_normalise(text: str) -> str:
    """ParlAI's ``normalize_answer``: lowercase, punctuation to spaces, no articles."""
    text = _PUNCTUATION.sub(" ", (text or "").lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


def parlai_tokens(text: str) -> list[str]:
    return parlai_normalise(text).split()


def words(text: str) -> list[str]:
    """Lowercase word tokens (Unicode letters and digits; "don't" stays one word)."""
    return _WORDS.findall((text or "").lower())


def ngrams(tokens: list[str], n: int) -> list[tuple]:
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]


def overlap_f1(pred: list[str], gold: list[str]) -> float:
    """F1 of the multiset overlap of two token lists (0 when either is empty)."""
    common = Counter(pred) & Counter(gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


class ParlaiTokenizer:
    """The ``parlai`` tokenisation as an object with ``tokenize(text)`` (rouge-score's interface)."""

    name = "parlai"

    def tokenize(self, text: str) -> list[str]:
        return parlai_tokens(text)


ROUGE_TOKENIZE = ("words", "rouge-score", "none")


def rouge_tokenizer(name: str):
    """``text -> tokens`` for ROUGE-L. ``words``: lowercase Unicode words, "n't" kept inside
    its word (the project's); ``rouge-score``: rouge-score's own (lowercase, every non-[a-z0-9]
    character a separator, so "don't" is "don t" and "café" is "caf"); ``none``: the text as
    given, split on single spaces (coco's ROUGE-L)."""
    if name == "words":
        return words
    if name == "rouge-score":
        from rouge_score.tokenizers import DefaultTokenizer

        return DefaultTokenizer(use_stemmer=False).tokenize
    if name == "none":
        return lambda text: [t for t in (text or "").split(" ")] if (text or "").strip() else []
    raise UserError(f"rouge_tokenize {name!r} is not one of {', '.join(ROUGE_TOKENIZE)}", param="rouge_tokenize")
