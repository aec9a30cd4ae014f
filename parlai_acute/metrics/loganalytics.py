"""Conversation analytics per speaker, after the ConvAI2 report's tables (Dinan et al. 2019).

For every log and speaker (a model, or the people of a human-model log; ``seed``
turns, real openings handed to the speakers, belong to no one and are left out):

* ``words_per_utt``, ``chars_per_utt``: mean length of an utterance;
* ``freq1h``, ``freq1k``: share of the speaker's words that occur fewer than 100 / 1,000
  times in a reference corpus (:mod:`.wordcounts`);
* ``repeat_within_{1,2,3}``: share of n-gram occurrences that repeat an n-gram earlier
  in the same utterance; ``repeat_self_{1,2,3}``: share of n-grams that the speaker
  already used in an earlier turn of the same conversation;
* ``unique_share``: distinct utterances (after ParlAI normalisation) over utterances;
* ``question_word``: share of utterances starting with who/what/when/where/why/how;
  ``question_mark``: share containing "?";
* ``persona_copy``: share of turns that reproduce one of the speaker's own persona lines
  (at least ``persona_threshold`` of the line's tokens appear in the turn); empty when
  the log carries no personas.

Shares of words and n-grams are pooled over all the speaker's utterances. These are
descriptive statistics of the logs given, with no interval.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from parlai_acute.logs import HUMAN_IDS, SEED, Episode, speaker_name, turn_role
from parlai_acute.metrics import normalise

QUESTION_WORDS = ("who", "what", "when", "where", "why", "how")
COLUMNS = ["log", "speaker", "role", "conversations", "utterances", "words_per_utt", "chars_per_utt",
           "freq1h", "freq1k", "repeat_within_1", "repeat_within_2", "repeat_within_3",
           "repeat_self_1", "repeat_self_2", "repeat_self_3", "unique_share", "question_word",
           "question_mark", "persona_copy"]


@dataclass
class LogsConfig:
    human_ids: tuple = HUMAN_IDS
    rare_thresholds: tuple = (100, 1000)
    persona_threshold: float = 0.8


class _Speaker:
    def __init__(self):
        self.conversations = set()
        self.utterances = 0
        self.words = self.chars = 0
        self.rare = [0, 0]
        self.within = [[0, 0] for _ in range(3)]  # [repeated, total] per n
        self.self_rep = [[0, 0] for _ in range(3)]
        self.normalised: set = set()
        self.question_word = self.question_mark = 0
        self.persona_turns = self.persona_copies = 0


def _persona_copied(tokens: set, lines: list[list[str]], threshold: float) -> bool:
    return any(line and sum(t in tokens for t in line) / len(line) >= threshold for line in lines)


def analyse_episodes(logs: dict[str, list[Episode]], config: LogsConfig | None = None,
                     counts: Counter | None = None) -> pd.DataFrame:
    """One row per (log, speaker): the statistics above. ``counts``: reference word counts."""
    from parlai_acute.metrics.wordcounts import default_counts

    config = config or LogsConfig()
    counts = default_counts() if counts is None else counts
    low, high = config.rare_thresholds
    speakers: dict[tuple, _Speaker] = {}
    for log, episodes in logs.items():
        for e_index, episode in enumerate(episodes):
            personas = {k: [normalise.parlai_tokens(line) for line in v] for k, v in episode.personas().items()}
            earlier: dict[str, list[set]] = {}
            for turn in episode.turns:
                role = turn_role(turn, config.human_ids)
                if role == SEED:
                    continue
                name = speaker_name(str(turn["id"]))
                stats = speakers.setdefault((log, name, role), _Speaker())
                stats.conversations.add(e_index)
                text = str(turn.get("text") or "")
                tokens = normalise.words(text)
                stats.utterances += 1
                stats.words += len(tokens)
                stats.chars += len(text)
                for word in tokens:
                    c = counts.get(word, 0)
                    stats.rare[0] += c < low
                    stats.rare[1] += c < high
                seen = earlier.setdefault(name, [set(), set(), set()])
                for n in (1, 2, 3):
                    grams = normalise.ngrams(tokens, n)
                    stats.within[n - 1][0] += len(grams) - len(set(grams))
                    stats.within[n - 1][1] += len(grams)
                    stats.self_rep[n - 1][0] += sum(g in seen[n - 1] for g in grams)
                    stats.self_rep[n - 1][1] += len(grams)
                    seen[n - 1].update(grams)
                stats.normalised.add(normalise.parlai_normalise(text))
                stats.question_word += bool(tokens) and tokens[0] in QUESTION_WORDS
                stats.question_mark += "?" in text
                own = personas.get(str(turn["id"]))  # a speaker's own persona, by its full id
                if own:
                    stats.persona_turns += 1
                    stats.persona_copies += _persona_copied(set(normalise.parlai_tokens(text)), own,
                                                            config.persona_threshold)
    rows = []
    for (log, name, role), s in speakers.items():
        def share(a, b):
            return a / b if b else float("nan")

        row = {"log": log, "speaker": name, "role": role, "conversations": len(s.conversations),
               "utterances": s.utterances, "words_per_utt": share(s.words, s.utterances),
               "chars_per_utt": share(s.chars, s.utterances), "freq1h": share(s.rare[0], s.words),
               "freq1k": share(s.rare[1], s.words), "unique_share": share(len(s.normalised), s.utterances),
               "question_word": share(s.question_word, s.utterances),
               "question_mark": share(s.question_mark, s.utterances),
               "persona_copy": share(s.persona_copies, s.persona_turns)}
        for n in (1, 2, 3):
            row[f"repeat_within_{n}"] = share(*s.within[n - 1])
            row[f"repeat_self_{n}"] = share(*s.self_rep[n - 1])
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)
