"""Which comparisons a worker gets: the paper's quality rules as one small, thread-safe object.

Units of the Mephisto task are interchangeable slots; what a slot contains is decided here
when a worker takes it, so that

* a worker's first comparison ever is an onboarding (gold) pair, until they pass one;
* a worker never sees the same pair of conversations twice (across runs of the task);
* no worker makes more than ``max_per_worker`` regular judgments;
* every pair gets ``annotations_per_pair`` judgments, fewest-judged pairs first, and a
  relaunch of the same task only hands out what is still missing (``history``).

Pairs a worker was given but did not judge (disconnect, shutdown) are released again.

Two options of issue 18 (``selection``, ``stop``):

* ``selection="adaptive"`` serves first the pairings whose model pair most reduces the
  uncertainty of the Bradley-Terry ranking (:func:`parlai_acute.stats.adaptive.pair_scores`
  on the judgments so far), drawn in proportion to that score; sides stay random, each
  slot records why it was chosen (``reason``), and the per-pair quota still bounds it.
* ``stop={"alpha": 0.05, "comparisons": ["a vs b", ...], "budget": N}`` stops handing out
  comparisons once the shared stop rule (:class:`parlai_acute.monitoring.stopping.StopRule`, the same
  for the per-turn and SSA tasks) fires: every named model pair (all, if none are named)
  decided by the anytime-valid status, or N regular judgments in; ``decision`` holds why,
  for the runner to store with the judgment that settled it.
* ``stop={"alpha": 0.05, "top_k": 3}`` stops instead once the set of the top 3 models is
  decided (:func:`parlai_acute.monitoring.status.top_k`: each of them decided ahead of every other model
  by its own confidence sequence, Bonferroni over all model pairs); with adaptive selection
  the pairs across the current top-3 boundary that are still open are served first.
"""
from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass, field

SELECTIONS = ("balanced", "adaptive")
#: top-k stop with adaptive selection: weight of a pair off the open boundary (an open one weighs 1)
BESIDE = 0.02


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
    reason: str = ""  # adaptive selection: why this pair was chosen


class Scheduler:
    def __init__(self, pairings: list[dict], *, annotations_per_pair: int = 1, comparisons_per_unit: int = 5,
                 max_per_worker: int | None = None, use_onboarding: bool = True, seed: int = 0,
                 history: list[dict] = (), selection: str = "balanced", stop: dict | None = None):
        if selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
        from parlai_acute.monitoring.stopping import StopRule

        self.pairings = pairings
        self.selection = selection
        self.judgments: list[dict] = []  # regular judgments with their winner: what selection reads
        self.models = sorted({m for p in pairings if not p["is_onboarding"] for m in p["speakers_to_eval"]})
        self.max_per_worker = max_per_worker if max_per_worker is not None else model_pairs(pairings)
        # the stop rule keeps what the analysis keeps: the cap this task enforces
        self.stop = StopRule("acute", stop, [p["speakers_to_eval"] for p in pairings if not p["is_onboarding"]],
                             {"per_worker_cap": (self.max_per_worker, "the live task's max_per_worker")}) \
            if stop else None
        self.ids = [pair_id(p, i) for i, p in enumerate(pairings)]
        self.regular = [i for i, p in enumerate(pairings) if not p["is_onboarding"]]
        self.onboarding = [i for i, p in enumerate(pairings) if p["is_onboarding"]]
        self.comparisons_per_unit = comparisons_per_unit
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
                outcome = h.get("outcome") or "win"
                if (h.get("winner") or outcome != "win") and h.get("models"):
                    self._note(str(h["worker"]), list(h["models"]), h.get("winner") or "", h.get("timestamp"), outcome,
                               h.get("dialogues"))
        if self.stop:
            self.stop.add(self.judgments)  # one look at everything stored before

    @property
    def decision(self) -> dict | None:
        """Why the run stopped (:class:`parlai_acute.monitoring.stopping.StopRule`), None while it goes on."""
        return self.stop.decision if self.stop else None

    @property
    def _boundary(self) -> set | None:
        """Top-k stop: the model pairs across the top-k boundary still open (None: no top-k look yet)."""
        return self.stop.boundary if self.stop else None

    def _worker(self, worker: str) -> _Worker:
        return self._workers.setdefault(worker, _Worker())

    # ---------------------------------------------------------------- adaptive selection and stopping
    def _note(self, worker: str, models: list, winner: str, timestamp=None, outcome: str = "win",
              dialogues: list | None = None) -> dict:
        """A judgment as the stop rule reads it (``outcome`` "tie"/"both_bad": no winner, half a win each;
        ``dialogues``: the pairing's conversation ids, in the order of ``models``, so the rule sees
        conversations reused across judgments and treats them as sampled)."""
        row = {"worker": worker, "model_left": models[0], "model_right": models[1], "winner": winner,
               "outcome": outcome, "timestamp": time.time() if timestamp is None else timestamp, "is_onboarding": False,
               "question_key": "q", "pair_id": ""}
        if isinstance(dialogues, (list, tuple)) and len(dialogues) == 2:
            row["dialogue_left"], row["dialogue_right"] = str(dialogues[0]), str(dialogues[1])
        self.judgments.append(row)
        return row

    def _weights(self, free: list[int]) -> dict:
        """Adaptive: each free pairing's weight, the expected uncertainty reduction of its model pair."""
        import numpy as np

        from parlai_acute.stats.adaptive import pair_scores

        index = {m: i for i, m in enumerate(self.models)}
        wins = np.zeros((len(self.models), len(self.models)))
        for j in self.judgments:
            if j.get("outcome", "win") != "win":  # a tie: half a win each way, as the estimand counts it
                if j["model_left"] in index and j["model_right"] in index:
                    wins[index[j["model_left"]], index[j["model_right"]]] += 0.5
                    wins[index[j["model_right"]], index[j["model_left"]]] += 0.5
                continue
            loser = j["model_right"] if j["winner"] == j["model_left"] else j["model_left"]
            if j["winner"] in index and loser in index:
                wins[index[j["winner"]], index[loser]] += 1
        out = {}
        if self._boundary is not None:  # top-k stop: the open pairs across the boundary, a little of the rest
            for i in free:
                out[i] = 1.0 if frozenset(self.pairings[i]["speakers_to_eval"]) in self._boundary else BESIDE
            return out
        scores = pair_scores(wins, "ranking")["scores"] if len(self.models) > 2 and wins.sum() else None
        for i in free:
            a, b = (index[m] for m in self.pairings[i]["speakers_to_eval"])
            out[i] = float(scores[a, b]) if scores is not None else 1.0
        return out

    def _why(self, index: int) -> str:
        if self._boundary is None:
            return "expected ranking-uncertainty reduction"
        if frozenset(self.pairings[index]["speakers_to_eval"]) in self._boundary:
            return "open pair across the top-k boundary"
        return "off the open top-k boundary (kept exploring)"

    def stopped(self) -> bool:
        with self._lock:
            return self.decision is not None

    def remaining(self) -> int:
        """Regular judgments not handed out yet (what a new unit could still get); 0 once stopped."""
        with self._lock:
            return 0 if self.decision is not None else sum(self.needed.values())

    def complete(self) -> bool:
        """Every pair has all its judgments (nothing left to hand out, nothing in flight)."""
        with self._lock:
            return ((self.decision is not None or not any(self.needed.values()))
                    and not any(w.reserved for w in self._workers.values()))

    def units_needed(self) -> int:
        """Unit slots to open: enough for full units, plus slack for units cut short
        (failed onboarding, workers at their cap); leftover slots are expired when complete."""
        per_unit = max(1, min(self.comparisons_per_unit, self.max_per_worker))
        full = -(-self.remaining() // per_unit)
        return full + full // 2 + 2

    def _candidates(self, w: _Worker, why: dict | None = None) -> list[int]:
        if self.decision is not None:
            return []
        free = [i for i in self.regular if self.needed[i] > 0 and self.ids[i] not in w.seen]
        room = max(0, min(self.max_per_worker - w.judged - w.reserved, self.comparisons_per_unit))
        # the stop budget, less the comparisons handed out and not judged yet
        left = None if self.stop is None else self.stop.budget_left(sum(v.reserved for v in self._workers.values()))
        if left is not None:
            room = min(room, left)
        self._rng.shuffle(free)
        if self.selection == "adaptive" and free and room:
            weights = self._weights(free)
            total = sum(weights.values()) or 1.0
            # a weighted draw without replacement (Efraimidis-Spirakis keys u^(1/w))
            keys = {i: math.log(self._rng.random() or 1e-300) / max(weights[i] / total, 1e-12) for i in free}
            free.sort(key=lambda i: -keys[i])
            if why is not None:
                why.update({i: f"adaptive: {self._why(i)} share {weights[i] / total:.3f}" for i in free[:room]})
            return free[:room]
        free.sort(key=lambda i: -self.needed[i])  # stable: random among equally needed
        return free[:room]

    def has_work_for(self, worker: str) -> bool:
        with self._lock:
            return bool(self._candidates(self._worker(worker)))

    def assign(self, worker: str) -> list[Slot]:
        """Reserve the comparisons of one unit for ``worker`` (empty if nothing is left for them)."""
        with self._lock:
            w = self._worker(worker)
            why: dict = {}
            chosen = self._candidates(w, why)
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
                slots.append(Slot(i, self._rng.randrange(2), False, why.get(i, "")))
            return slots

    def record(self, worker: str, slot: Slot, onboarding_correct: bool | None = None,
               winner: str | None = None, outcome: str = "win") -> dict | None:
        """A judgment for ``slot`` was stored (``winner``: the model picked, for selection and
        stopping). Returns the stop decision if this judgment settled it, else None."""
        with self._lock:
            w = self._worker(worker)
            w.seen.add(self.ids[slot.index])
            if slot.is_onboarding:
                w.passed_onboarding |= bool(onboarding_correct)
                return None
            w.reserved -= 1
            w.judged += 1
            if winner is None:
                return None
            pairing = self.pairings[slot.index]
            row = self._note(worker, list(pairing["speakers_to_eval"]), winner, outcome=outcome,
                             dialogues=pairing.get("dialogue_ids"))
        # the rule's statistics (up to a second at 100k judgments) run outside the lock that every
        # arriving worker's assignment waits for; the rule has a lock of its own
        return self.stop.add([row]) if self.stop else None

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
        those still needed (someone else may have judged a pair meanwhile, or the stop rule has
        decided); returns the ones granted."""
        with self._lock:
            w = self._worker(worker)
            granted = []
            for slot in slots:
                if slot.is_onboarding:
                    if not w.passed_onboarding:
                        granted.append(slot)
                    continue
                if (self.decision is None and self.needed.get(slot.index, 0) > 0
                        and w.judged + w.reserved < self.max_per_worker):
                    self.needed[slot.index] -= 1
                    w.reserved += 1
                    w.seen.add(self.ids[slot.index])
                    granted.append(slot)
            return granted
