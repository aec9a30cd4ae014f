"""Checks of a worker's written text, after ParlAI's crowdsourcing ``AcceptabilityChecker``
(``parlai/crowdsourcing/utils/acceptability.py``: ``min_words``, ``penalize_greetings``,
``all_caps``, ``exact_match``), applied per message so the evidence can show which message failed.

Reimplemented rather than imported: ParlAI's checker loads its offensive-language list (a
download) on construction, and this module must work on a machine with only the analysis core.
"""
from __future__ import annotations

import re

#: ParlAI's greeting words (AcceptabilityChecker, penalize_greetings)
GREETINGS = {"hi", "hii", "hiii", "hiiii", "hai", "hello", "hey", "howdy", "greetings"}
MIN_WORDS = 3  # ParlAI's DEFAULT_MIN_WORDS_THRESHOLD
CHECKS = ("too_short", "all_caps", "greetings_only", "exact_repeat")
_PUNCT = re.compile(r"[!\"#$%&()*+,\-./:;<=>?@\[\]\\^`{|}~_']")
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: str) -> str:
    """ParlAI's ``normalize_answer``: lower case, no punctuation, no articles, single spaces
    (what its ``exact_match`` compares)."""
    return " ".join(_ARTICLES.sub(" ", _PUNCT.sub(" ", text.lower())).split())


def check_messages(messages: list[str], min_words: int = MIN_WORDS) -> list[set[str]]:
    """For each message (one worker's, in the order written), the checks it fails."""
    seen, out = set(), []
    for text in messages:
        text = str(text or "")
        failed = set()
        words = text.split()
        if len(words) < min_words:
            failed.add("too_short")
        letters = [c for c in text if c.isalpha()]
        if letters and text == text.upper():
            failed.add("all_caps")
        bare = [w for w in normalize(text).split()]
        if bare and all(w in GREETINGS for w in bare):
            failed.add("greetings_only")
        key = normalize(text)
        if key and key in seen:
            failed.add("exact_repeat")
        seen.add(key)
        out.append(failed)
    return out
