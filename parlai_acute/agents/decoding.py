"""Decoding strategies shared by every model wrapper (llama.cpp, transformers, OpenAI-compatible).

A wrapper only has to produce candidates: N samples (or one greedy reply) with the sum of
their token log-probabilities. Everything else lives here, so all wrappers decode alike:

* ``greedy``: one reply, temperature 0.
* ``sample``: one reply drawn with temperature / top-k / nucleus (top-p).
* ``sample_rank``: Meena's sample-and-rank (Adiwardana et al. 2020, sec. 2.4): draw N
  independent samples with temperature T (Meena: N=20, T=0.88, plain sampling, i.e.
  ``--topk 0 --topp 1``) and keep the most probable one (``--rank-by logprob``, the sum of
  token log-probs, as in Meena; ``mean_logprob`` divides by the length).

Cross-turn repetition filter (Meena sec. 2.4 removes "candidates that have long common
sub-sequences with previous turns"): a candidate is *filtered* when, for some earlier turn
of the same conversation (either speaker), the word-level longest common subsequence
(lower-cased words, punctuation stripped) covers at least ``--repetition-threshold`` of the
candidate's words AND is at least ``--repetition-min-words`` words long. Short replies
("ok", "yes") are never filtered. Empty candidates are always filtered (reason "empty").
If every candidate is filtered we still must answer: the fallback keeps the non-empty
candidate with the smallest overlap (ties: best rank score) and records ``fallback=True``.

Unfinished sentences: a candidate cut off by ``--max-new-tokens`` (finish reason "length",
or as many tokens as the budget) loses its unfinished trailing sentence ("What kind of art
are you interested"), so a reply never ends mid-sentence when a sentence end came before;
the candidate records ``truncated``, ``trimmed`` and its ``untrimmed`` text, or, when it keeps
its unfinished end (no sentence end before the cut, or the cut would leave a repeat),
``untrimmed_reason``. Its score stays that of everything the model generated.

Every reply act carries all candidates for later analysis::

    act['candidates'] = [{'text', 'score', 'num_tokens', 'mean_logprob', 'filtered',
                          'overlap', 'reason', 'truncated', 'trimmed', 'chosen'}, ...]
    act['decoding'] = {'inference', 'temperature', 'topp', 'topk', 'num_samples',
                       'rank_by', 'repetition_filter', ..., 'chosen', 'fallback', 'num_filtered',
                       'trimmed'}
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Sequence

from parlai_acute.agents.options import option_adder
from parlai_acute.errors import UserError

INFERENCE_CHOICES = ("greedy", "sample", "sample_rank")
RANK_BY_CHOICES = ("logprob", "mean_logprob")
#: Enough for most chit-chat replies of a small instruct model to end by themselves (40 cut
#: about a third of SmolLM2's replies mid-sentence); the rest are trimmed to a sentence end.
DEFAULT_MAX_NEW_TOKENS = 64


def add_decoding_args(parser):
    """Add the shared decoding options to a ParlAI parser; returns the argument group.

    ``--inference``, ``--temperature``, ``--topk``, ``--topp`` have the names ParlAI's
    TorchGeneratorAgent uses for the same ideas. Safe to call twice (e.g. two wrappers).
    """
    group, add = option_adder(parser, "Decoding (parlai_acute)")

    add("--inference", type=str, default="sample", choices=list(INFERENCE_CHOICES),
        help="greedy; sample (temperature/top-k/top-p); sample_rank (Meena: N samples, keep the most probable)")
    add("--temperature", type=float, default=0.7,
        help="sampling temperature (Meena sample-and-rank: 0.88)")
    add("--topp", type=float, default=0.9, help="nucleus sampling mass, 1 disables it (Meena: 1)")
    add("--topk", type=int, default=0, help="top-k sampling, 0 disables it (Meena: 0)")
    add("--num-samples", type=int, default=20, help="N candidates for sample_rank (Meena: 20)")
    add("--max-new-tokens", type=int, default=DEFAULT_MAX_NEW_TOKENS,
        help=f"maximum tokens generated per reply (default {DEFAULT_MAX_NEW_TOKENS}); a reply cut off by it loses "
             "its unfinished last sentence")
    add("--seed", type=int, default=0,
        help="random seed; each sample's seed is derived from it, the conversation and the sample index")
    add("--repetition-filter", type=str, default="on", choices=["on", "off"],
        help="drop candidates that repeat an earlier turn of the conversation (Meena)")
    add("--repetition-threshold", type=float, default=0.8,
        help="fraction of a candidate's words found, in order, in one earlier turn that marks it as a repeat")
    add("--repetition-min-words", type=int, default=4,
        help="a repeat must share at least this many words (in order) with the earlier turn")
    add("--rank-by", type=str, default="logprob", choices=list(RANK_BY_CHOICES),
        help="score used to rank sample_rank candidates: sum of token log-probs (Meena) or its mean")
    return group


@dataclass(frozen=True)
class DecodingConfig:
    """The decoding options of one agent, validated."""

    inference: str = "sample"
    temperature: float = 0.7
    topp: float = 0.9
    topk: int = 0
    num_samples: int = 20
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    seed: int = 0
    repetition_filter: bool = True
    repetition_threshold: float = 0.8
    repetition_min_words: int = 4
    rank_by: str = "logprob"

    @classmethod
    def from_opt(cls, opt) -> "DecodingConfig":
        """Build from a ParlAI opt; missing keys take the defaults above."""
        defaults = cls()
        get = lambda key: opt.get(key) if opt.get(key) is not None else getattr(defaults, key)  # noqa: E731
        rep = opt.get("repetition_filter", "on")
        if isinstance(rep, str):
            if rep not in ("on", "off"):
                raise UserError(f"repetition_filter {rep!r} is not valid; use on or off", param="repetition_filter")
            rep = rep == "on"
        cfg = cls(
            inference=get("inference"), temperature=float(get("temperature")), topp=float(get("topp")),
            topk=int(get("topk")), num_samples=int(get("num_samples")), max_new_tokens=int(get("max_new_tokens")),
            seed=int(get("seed")), repetition_filter=bool(rep),
            repetition_threshold=float(get("repetition_threshold")),
            repetition_min_words=int(get("repetition_min_words")), rank_by=get("rank_by"),
        )
        cfg.validate()
        return cfg

    def validate(self) -> None:
        if self.inference not in INFERENCE_CHOICES:
            raise UserError(f"inference {self.inference!r} is not supported here; "
                            f"use one of {', '.join(INFERENCE_CHOICES)}",
                            param="inference")
        if self.rank_by not in RANK_BY_CHOICES:
            raise UserError(f"rank_by {self.rank_by!r} is not valid; use one of {', '.join(RANK_BY_CHOICES)}",
                            param="rank_by")
        if self.temperature < 0:
            raise UserError(f"temperature {self.temperature} is negative; use 0 or more (e.g. 0.88)",
                            param="temperature")
        if not 0 < self.topp <= 1:
            raise UserError(f"topp {self.topp} is out of range; use a value in (0, 1] (1 disables nucleus sampling)",
                            param="topp")
        if self.topk < 0:
            raise UserError(f"topk {self.topk} is negative; use 0 (off) or a positive number", param="topk")
        if self.num_samples < 1:
            raise UserError(f"num_samples {self.num_samples} is too small; use 1 or more (Meena: 20)",
                            param="num_samples")
        if self.max_new_tokens < 1:
            raise UserError(f"max_new_tokens {self.max_new_tokens} is too small; use 1 or more", param="max_new_tokens")
        if not 0 < self.repetition_threshold <= 1:
            raise UserError(f"repetition_threshold {self.repetition_threshold} is out of range; use a value in (0, 1]",
                            param="repetition_threshold")
        if self.repetition_min_words < 1:
            raise UserError(f"repetition_min_words {self.repetition_min_words} is too small; use 1 or more",
                            param="repetition_min_words")

    @property
    def n_candidates(self) -> int:
        """How many candidates the model must produce per reply."""
        return self.num_samples if self.inference == "sample_rank" else 1

    @property
    def greedy(self) -> bool:
        return self.inference == "greedy" or self.temperature == 0

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class Candidate:
    """One generated reply. ``score`` is the sum of its tokens' log-probabilities."""

    text: str
    score: float = 0.0
    num_tokens: int = 0
    filtered: bool = False
    overlap: float = 0.0
    reason: str = ""
    extra: dict = field(default_factory=dict)
    truncated: bool = False  # generation stopped at --max-new-tokens
    trimmed: bool = False  # an unfinished trailing sentence was cut off (see trim_unfinished)

    @property
    def mean_logprob(self) -> float:
        return self.score / self.num_tokens if self.num_tokens else 0.0

    def rank_score(self, rank_by: str = "logprob") -> float:
        return self.mean_logprob if rank_by == "mean_logprob" else self.score

    def to_dict(self) -> dict:
        row = {"text": self.text, "score": self.score, "num_tokens": self.num_tokens,
               "mean_logprob": self.mean_logprob, "filtered": self.filtered,
               "overlap": self.overlap, "reason": self.reason, "truncated": self.truncated,
               "trimmed": self.trimmed}
        row.update(self.extra)
        return row


@dataclass
class Choice:
    """The outcome of filtering and ranking: all candidates and the index of the reply."""

    candidates: list
    index: int
    fallback: bool = False

    @property
    def chosen(self) -> Candidate:
        return self.candidates[self.index]


# --------------------------------------------------------------------------- seeds

def sample_seed(seed: int, key: str, index: int) -> int:
    """A reproducible 31-bit seed for sample ``index`` of the reply keyed by ``key``.

    Deriving the seed from the conversation (not from a call counter) keeps replies the
    same whether conversations run one at a time or batched, and makes the N samples of
    sample_rank differ from each other.
    """
    digest = hashlib.blake2b(f"{seed}\x00{index}\x00{key}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


# --------------------------------------------------------------------------- repetition

_WORD = re.compile(r"[\w']+")


def words(text: str) -> list:
    """Lower-cased words without punctuation: the unit of the repetition filter."""
    return _WORD.findall((text or "").lower())


def lcs_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common subsequence of two sequences (O(len(a)*len(b)))."""
    if not a or not b:
        return 0
    if len(b) > len(a):
        a, b = b, a
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, start=1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


def repetition_overlap(text: str, history: Iterable[str]) -> tuple:
    """(largest fraction of ``text``'s words covered by an LCS with one earlier turn, that LCS's length)."""
    cand = words(text)
    if not cand:
        return 0.0, 0
    best = (0.0, 0)
    for turn in history:
        n = lcs_length(cand, words(turn))
        best = max(best, (n / len(cand), n))
    return best


def mark_repetitions(candidates: list, history: Sequence[str], threshold: float = 0.8, min_words: int = 4) -> list:
    """Set ``overlap``/``filtered``/``reason`` on each candidate in place; returns the list."""
    for cand in candidates:
        overlap, n = repetition_overlap(cand.text, history)
        cand.overlap = overlap
        if n >= min_words and overlap >= threshold:
            cand.filtered = True
            cand.reason = f"repeats {n} words of an earlier turn"
    return candidates


# --------------------------------------------------------------------------- unfinished replies

# A sentence end: . ! ? or an ellipsis, possibly followed by closing quotes or brackets, then
# whitespace or the end of the text; not the period of a common abbreviation ("Dr. Smith").
_SENTENCE_END = re.compile(r"""[.!?\u2026]+["'\u2019\u201d)\]]*(?=\s|$)""")
_ABBREVIATION = re.compile(r"(?:^|\W)(?:mr|mrs|ms|dr|st|prof|vs|etc|e\.g|i\.e)\.$", re.IGNORECASE)


def trim_unfinished(text: str) -> str:
    """``text`` up to its last sentence end; unchanged if it already ends one or has none."""
    stripped = text.rstrip()
    ends = _sentence_ends(stripped)
    if not ends or ends[-1] == len(stripped):
        return text
    return stripped[:ends[-1]]


def _sentence_ends(stripped: str) -> list[int]:
    """Where the sentences of ``stripped`` end (an abbreviation's full stop is no end)."""
    return [m.end() for m in _SENTENCE_END.finditer(stripped) if not _ABBREVIATION.search(stripped[:m.end()])]


def ran_out_of_budget(cand: Candidate, config: DecodingConfig) -> bool:
    """Did generation stop at --max-new-tokens (not at an end-of-turn)?"""
    reason = cand.extra.get("finish_reason")
    if reason is not None:
        return reason == "length"
    return cand.num_tokens >= config.max_new_tokens


def _repeats(text: str, history: Sequence[str], config: DecodingConfig) -> bool:
    overlap, n = repetition_overlap(text, history)
    return n >= config.repetition_min_words and overlap >= config.repetition_threshold


def trim_truncated(candidates: list, config: DecodingConfig, history: Sequence[str] = ()) -> list:
    """Cut the unfinished trailing sentence of every candidate the token budget stopped; in place.

    Not when the cut would turn a new reply into a repeat of an earlier turn (a model often
    starts by restating itself): then the unfinished sentence is the new part and stays. A
    budget-cut candidate is either trimmed or says why not in ``untrimmed_reason``
    (:data:`UNTRIMMED_REASONS`), so a reply that ends mid-sentence is never unexplained.
    """
    for cand in candidates:
        if cand.trimmed or not ran_out_of_budget(cand, config):
            continue
        cand.truncated = True
        trimmed = trim_unfinished(cand.text)
        if trimmed == cand.text:
            stripped = cand.text.rstrip()
            ends = _sentence_ends(stripped)
            if not ends or ends[-1] != len(stripped):  # unfinished, and no earlier sentence end to cut at
                cand.extra["untrimmed_reason"] = UNTRIMMED_REASONS["no_sentence_end"]
        elif history and _repeats(trimmed, history, config) and not _repeats(cand.text, history, config):
            cand.extra["untrimmed_reason"] = UNTRIMMED_REASONS["repeat"]
        else:
            cand.extra["untrimmed"] = cand.text
            cand.text, cand.trimmed = trimmed, True
    return candidates


#: Why a candidate the token budget stopped keeps its unfinished end (``untrimmed_reason``).
UNTRIMMED_REASONS = {
    "no_sentence_end": "no sentence ends before the cut: trimming would leave nothing",
    "repeat": "trimming would leave only a repeat of an earlier turn",
}


# --------------------------------------------------------------------------- selection

def choose(candidates: list, history: Sequence[str], config: DecodingConfig) -> Choice:
    """Filter repeats (if enabled) and pick the best-ranked survivor (Meena sample-and-rank).

    With one candidate (greedy/sample) ranking is trivial but the filter still records
    whether the reply repeats the conversation. When every candidate is filtered the one
    with the smallest overlap is kept (``fallback=True``).
    """
    if not candidates:
        raise ValueError("choose() needs at least one candidate")
    trim_truncated(candidates, config, history)
    for cand in candidates:
        cand.filtered, cand.reason = False, ""
    if config.repetition_filter and history:
        mark_repetitions(candidates, history, config.repetition_threshold, config.repetition_min_words)
    else:
        for cand in candidates:
            cand.overlap = repetition_overlap(cand.text, history)[0] if history else 0.0
    for cand in candidates:
        if not cand.text.strip():
            cand.filtered, cand.reason = True, "empty"
    order = range(len(candidates))
    kept = [i for i in order if not candidates[i].filtered]
    if kept:
        index = max(kept, key=lambda i: (candidates[i].rank_score(config.rank_by), -i))
        return Choice(candidates, index, fallback=False)
    index = min(order, key=lambda i: (not candidates[i].text.strip(), candidates[i].overlap,
                                      -candidates[i].rank_score(config.rank_by), i))
    return Choice(candidates, index, fallback=True)


def decode(generate: Callable[[int], list], history: Sequence[str], config: DecodingConfig) -> Choice:
    """Ask ``generate(n)`` for ``config.n_candidates`` candidates and choose one."""
    return choose(list(generate(config.n_candidates)), history, config)


def package(act, choice: Choice, config: DecodingConfig, extra: Optional[dict] = None):
    """Put the chosen text, every candidate and the decoding record into ``act`` (a ParlAI Message)."""
    rows = []
    for i, cand in enumerate(choice.candidates):
        row = cand.to_dict()
        row["chosen"] = i == choice.index
        rows.append(row)
    record = config.as_dict()
    record["repetition_filter"] = "on" if config.repetition_filter else "off"
    record.update(chosen=choice.index, fallback=choice.fallback,
                  num_filtered=sum(c.filtered for c in choice.candidates), trimmed=choice.chosen.trimmed)
    if choice.chosen.extra.get("untrimmed_reason"):  # the reply ends mid-sentence: the record says why
        record["untrimmed_reason"] = choice.chosen.extra["untrimmed_reason"]
    if extra:
        record.update(extra)
    _set(act, "text", choice.chosen.text)
    _set(act, "candidates", rows)
    _set(act, "decoding", record)
    return act


def _set(act, key, value):
    # ParlAI Messages refuse to overwrite keys with plain assignment
    if hasattr(act, "force_set"):
        act.force_set(key, value)
    else:
        act[key] = value
