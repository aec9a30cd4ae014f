"""Where conversation seeds come from: real chitchat openings, personas and topics.

Every choice is a pure function of ``(seed, episode index)`` so that a self-chat run, a
batched run and a rerun with the same ``--context-seed`` seed the same conversations,
whatever the batch size. Conversations are split into train/valid/test by a hash of their
id, so the split never changes when the dataset file is reordered.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from parlai_acute.errors import UserError

DATA_DIR = Path(__file__).parent / "data"
SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class Conversation:
    """A real human-human conversation; each turn joins one speaker's consecutive messages."""

    id: str
    prompt: str
    turns: tuple[str, ...]


@dataclass
class Seed:
    """How one conversation starts: per-speaker contexts and/or real opening utterances."""

    contexts: list[str] | None = None
    openers: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)


def split_of(conversation_id: str) -> str:
    """5% test, 5% valid, 90% train, stable under reordering of the dataset."""
    bucket = int(hashlib.sha1(conversation_id.encode("utf-8")).hexdigest(), 16) % 20
    return "test" if bucket == 0 else "valid" if bucket == 1 else "train"


def datatype_split(datatype: str | None) -> str:
    """ParlAI datatype ('train:evalmode', 'valid', ...) -> our split name."""
    base = (datatype or "train").split(":")[0]
    return base if base in SPLITS else "train"


def chitchat_path() -> Path:
    spec = importlib.util.find_spec("chitchat_dataset")
    if spec is None or spec.origin is None:
        from parlai_acute import extras

        raise extras.needs("the chitchat-dataset conversations (seeds, reference word counts)", ["models"])
    return Path(spec.origin).parent / "dataset.json"


@functools.lru_cache(maxsize=1)
def _all_chitchat() -> tuple[Conversation, ...]:
    path = chitchat_path()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {path}: {exc}; reinstall chitchat-dataset==0.9.0") from None
    out = []
    for cid in sorted(raw):
        turns = tuple(" ".join(m["text"].strip() for m in turn if m.get("text", "").strip())
                      for turn in raw[cid]["messages"])
        turns = tuple(t for t in turns if t)
        out.append(Conversation(id=cid, prompt=(raw[cid].get("prompt") or "").strip(), turns=turns))
    return tuple(out)


def chitchat(split: str = "train", min_turns: int = 2) -> list[Conversation]:
    """Conversations of one split with at least ``min_turns`` turns, in a fixed order."""
    return list(_chitchat(split, min_turns))


@functools.lru_cache(maxsize=16)
def _chitchat(split: str, min_turns: int) -> tuple[Conversation, ...]:
    return tuple(c for c in _all_chitchat() if len(c.turns) >= min_turns and split_of(c.id) == split)


#: Openings (the real turns a chitchat seed starts with, taken together) longer than this are left out
#: of the seeds: the dataset has a few monologues (one first turn of 1,528 words; 6 over 300), and a
#: conversation that opens with one made an ACUTE-Eval introduction promise "about 20 minutes" for 5
#: comparisons. 100 words keeps 99% of the openings of every split.
MAX_OPENING_WORDS = 100


def opening_words(conv: Conversation, turns: int) -> int:
    """Words of the first ``turns`` turns of ``conv``: what a seed of that many turns opens with."""
    return sum(len(t.split()) for t in conv.turns[:turns])


@functools.lru_cache(maxsize=16)
def _chitchat_pool(split: str, min_turns: int, seed: int) -> tuple[Conversation, ...]:
    """Conversations a seed of ``min_turns - 1`` opening turns may start from, in the seed's order:
    those with a turn left to answer and an opening of at most :data:`MAX_OPENING_WORDS`."""
    usable = [c for c in _chitchat(split, min_turns) if opening_words(c, min_turns - 1) <= MAX_OPENING_WORDS]
    return tuple(permuted(usable, seed, f"chitchat:{split}"))


def _load_list(name: str) -> list:
    path = DATA_DIR / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the packaged file {path}: {exc}; reinstall parlai_acute") from None


def personas() -> list[list[str]]:
    """Our own PersonaChat-style profiles: each a few first-person sentences."""
    return _load_list("personas.json")


def topics() -> list[str]:
    return _load_list("topics.json")


def permuted(items: list, seed: int, salt: str) -> list:
    """A fixed pseudo-random order of ``items`` for ``(seed, salt)``."""
    order = list(items)
    random.Random(f"{seed}:{salt}").shuffle(order)
    return order


def read_personas(path: str) -> list[list[str]]:
    """A lab's own persona set: a JSON list of personas, each a list of first-person sentences."""
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the persona file {path}: {exc}; pass a JSON list of personas "
                        f"(each a list of sentences)") from None
    ok = isinstance(data, list) and all(isinstance(p, list) and p and all(isinstance(x, str) and x.strip() for x in p)
                                        for p in data)
    if not ok:
        raise UserError(f"persona file {path} must be a JSON list of personas, each a non-empty list of sentences")
    return [[x.strip() for x in p] for p in data]


def persona_context(lines: list[str]) -> str:
    """ParlAI's persona convention (ConvAI2, BlendedSkillTalk): one 'your persona:' line each."""
    return "\n".join(f"your persona: {line}" for line in lines)


def topic_context(topic: str) -> str:
    return f"Let's talk about {topic}."


def chitchat_seed(index: int, seed: int, split: str, turns: int) -> Seed:
    """Episode ``index`` starts with the first ``turns`` real turns of a human conversation."""
    pool = _chitchat_pool(split, turns + 1, seed)
    conv = pool[index % len(pool)]
    return Seed(openers=list(conv.turns[:turns]),
                info={"source": "chitchat_dataset", "conversation_id": conv.id, "prompt": conv.prompt})


def persona_seed(index: int, seed: int, everyone: list[list[str]] | None = None) -> Seed:
    """Episode ``index``: two different personas, one per speaker. Every run of
    ``len(personas()) // 2`` episodes uses each persona at most once. ``everyone``: another
    set of personas (each a list of sentences) instead of the packaged ones."""
    everyone = everyone if everyone is not None else personas()
    pairs = len(everyone) // 2
    order = permuted(range(len(everyone)), seed, f"personas:{index // pairs}")
    slot = index % pairs
    a, b = everyone[order[2 * slot]], everyone[order[2 * slot + 1]]
    return Seed(contexts=[persona_context(a), persona_context(b)],
                info={"source": "personas", "personas": [a, b]})


def topic_seed(index: int, seed: int) -> Seed:
    """Episode ``index``: both speakers get the same topic."""
    pool = permuted(topics(), seed, "topics")
    topic = pool[index % len(pool)]
    return Seed(contexts=[topic_context(topic), topic_context(topic)], info={"source": "topics", "topic": topic})
