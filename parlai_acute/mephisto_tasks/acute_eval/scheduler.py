"""Which comparisons a worker gets: the paper's quality rules as one small, thread-safe object.

Units of the Mephisto task are interchangeable slots; what a slot contains is decided here
when a worker takes it, so that

* a worker's first comparison ever is an onboarding (gold) pair, until they pass one;
* a worker never sees the same pair of conversations twice (across runs of the task);
* no worker makes more than ``max_per_worker`` regular judgments;
* every pair gets ``annotations_per_pair`` judgments, fewest-judged pairs first, and a
  relaunch of the same task only hands out what is still missing (``history``).

Pairs a worker was given but did not judge (disconnect, shutdown) are released again.
"""
from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field


def pair_id(pairing: dict, index: int) -> str:
    """Stable id of a pair of conversations (same default as parlai_acute.acute.judgments)."""
    if pairing.get("pair_id"):
        return str(pairing["pair_id"])
    ids = pairing.get("dialogue_ids")
    if ids:
        return "|".join(sorted(str(i) for i in ids))
    return f"onboarding-{index}"


def model_pairs(pairings: list[dict]) -> int:
    """Number of distinct (unordered) model pairs among the regular pairings."""
    return len({frozenset(p["speakers_to_eval"]) for p in pairings if not p["is_onboarding"]})


@dataclass
class _Worker:
    seen: set = field(default_factory=set)  # pair ids judged or reserved
    judged: int = 0  # regular judgments made
    reserved: int = 0  # regular comparisons handed out, not yet judged
    passed_onboarding: bool = False


@dataclass(frozen=True)
class Slot:
    """One comparison handed to a worker: which pairing and which side goes left."""

    index: int  # line of the pairing in the pairings file (0-based, blank lines skipped)
    left: int  # 0 or 1: which dialogue of the pairing is shown on the left
    is_onboarding: bool


class Scheduler:
    def __init__(self, pairings: list[dict], *, annotations_per_pair: int = 1, comparisons_per_unit: int = 5,
                 max_per_worker: int | None = None, use_onboarding: bool = True, seed: int = 0,
                 history: list[dict] = ()):
        self.pairings = pairings
        self.ids = [pair_id(p, i) for i, p in enumerate(pairings)]
        self.regular = [i for i, p in enumerate(pairings) if not p["is_onboarding"]]
        self.onboarding = [i for i, p in enumerate(pairings) if p["is_onboarding"]]
        self.comparisons_per_unit = comparisons_per_unit
        self.max_per_worker = max_per_worker if max_per_worker is not None else model_pairs(pairings)
        self.use_onboarding = use_onboarding and bool(self.onboarding)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._workers: dict[str, _Worker] = {}
        self.needed = {i: annotations_per_pair for i in self.regular}
        index_of = {self.ids[i]: i for i in self.regular}
        for h in history:  # earlier judgments of this task: {"worker", "pair_id", "is_onboarding", "onboarding_correct"}
            w = self._worker(str(h["worker"]))
            w.seen.add(h["pair_id"])
            if h.get("is_onboarding"):
                w.passed_onboarding |= bool(h.get("onboarding_correct"))
            else:
                w.judged += 1
                if h["pair_id"] in index_of:
                    i = index_of[h["pair_id"]]
                    self.needed[i] = max(0, self.needed[i] - 1)

    def _worker(self, worker: str) -> _Worker:
        return self._workers.setdefault(worker, _Worker())

    def remaining(self) -> int:
        """Regular judgments not handed out yet (what a new unit could still get)."""
        with self._lock:
            return sum(self.needed.values())

    def complete(self) -> bool:
        """Every pair has all its judgments (nothing left to hand out, nothing in flight)."""
        with self._lock:
            return not any(self.needed.values()) and not any(w.reserved for w in self._workers.values())

    def units_needed(self) -> int:
        """Unit slots to open: enough for full units, plus slack for units cut short
        (failed onboarding, workers at their cap); leftover slots are expired when complete."""
        per_unit = max(1, min(self.comparisons_per_unit, self.max_per_worker))
        full = -(-self.remaining() // per_unit)
        return full + full // 2 + 2

    def _candidates(self, w: _Worker) -> list[int]:
        free = [i for i in self.regular if self.needed[i] > 0 and self.ids[i] not in w.seen]
        self._rng.shuffle(free)
        free.sort(key=lambda i: -self.needed[i])  # stable: random among equally needed
        room = self.max_per_worker - w.judged - w.reserved
        return free[:max(0, min(room, self.comparisons_per_unit))]

    def has_work_for(self, worker: str) -> bool:
        with self._lock:
            return bool(self._candidates(self._worker(worker)))

    def assign(self, worker: str) -> list[Slot]:
        """Reserve the comparisons of one unit for ``worker`` (empty if nothing is left for them)."""
        with self._lock:
            w = self._worker(worker)
            chosen = self._candidates(w)
            if not chosen:
                return []
            slots = []
            if self.use_onboarding and not w.passed_onboarding:
                unseen = [i for i in self.onboarding if self.ids[i] not in w.seen] or self.onboarding
                i = self._rng.choice(unseen)
                slots.append(Slot(i, self._rng.randrange(2), True))
            for i in chosen:
                self.needed[i] -= 1
                w.reserved += 1
                w.seen.add(self.ids[i])
                slots.append(Slot(i, self._rng.randrange(2), False))
            return slots

    def record(self, worker: str, slot: Slot, onboarding_correct: bool | None = None) -> None:
        """A judgment for ``slot`` was stored."""
        with self._lock:
            w = self._worker(worker)
            w.seen.add(self.ids[slot.index])
            if slot.is_onboarding:
                w.passed_onboarding |= bool(onboarding_correct)
            else:
                w.reserved -= 1
                w.judged += 1

    def release(self, worker: str, slots: list[Slot]) -> None:
        """Give back regular comparisons handed to ``worker`` that were never judged."""
        with self._lock:
            w = self._worker(worker)
            for slot in slots:
                if not slot.is_onboarding:
                    self.needed[slot.index] += 1
                    w.reserved -= 1
                    w.seen.discard(self.ids[slot.index])

    def reclaim(self, worker: str, slots: list[Slot]) -> list[Slot]:
        """A worker came back to a unit cut short: reserve its unjudged ``slots`` for them again,
        those still needed (someone else may have judged a pair meanwhile); returns the ones granted."""
        with self._lock:
            w = self._worker(worker)
            granted = []
            for slot in slots:
                if slot.is_onboarding:
                    if not w.passed_onboarding:
                        granted.append(slot)
                    continue
                if self.needed.get(slot.index, 0) > 0 and w.judged + w.reserved < self.max_per_worker:
                    self.needed[slot.index] -= 1
                    w.reserved += 1
                    w.seen.add(self.ids[slot.index])
                    granted.append(slot)
            return granted
