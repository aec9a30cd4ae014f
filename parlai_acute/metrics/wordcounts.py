"""Word frequencies of a reference corpus, for the rare-word shares of log analytics.

Default: every turn of the chitchat corpus this package already uses (chitchat-dataset,
7,168 human-human conversations). Any other corpus can be given as a plain text file (one
utterance per line, counted here) or as a count file (``word<TAB>count`` per line).
Words are counted with the ``words`` tokenisation of :mod:`.normalise`.
"""
from __future__ import annotations

import functools
from collections import Counter
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.metrics import normalise


def count_words(lines) -> Counter:
    counts: Counter = Counter()
    for line in lines:
        counts.update(normalise.words(line))
    return counts


@functools.lru_cache(maxsize=1)
def default_counts() -> Counter:
    from parlai_acute.tasks import sources

    return count_words(turn for split in sources.SPLITS for conv in sources.chitchat(split, min_turns=1)
                       for turn in conv.turns)


def read_counts(path: str | Path) -> Counter:
    """A count file (``word<TAB>count``) or a plain text corpus, told apart by the first line."""
    from parlai_acute.jsonl import read_text

    lines = read_text(path, "reference corpus", "pass a text file or a word<TAB>count file").splitlines()
    first = next((line for line in lines if line.strip()), "")
    parts = first.split("\t")
    if len(parts) == 2 and parts[1].strip().isdigit():
        counts: Counter = Counter()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            word, _, value = line.partition("\t")
            if not value.strip().isdigit():
                raise UserError(f"{path}:{number}: expected word<TAB>count; fix the line or give a plain text corpus")
            counts[word.strip().lower()] += int(value)
        return counts
    counts = count_words(lines)
    if not counts:
        raise UserError(f"reference corpus {path} has no words; give a text corpus or a count file")
    return counts


def corpus_name(path: str | None) -> str:
    return str(path) if path else "chitchat-dataset (all turns)"
