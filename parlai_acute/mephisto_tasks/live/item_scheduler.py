"""Which items a worker gets, for tasks where every item needs answers from several different workers.

Shared by the static SSA labelling task (each reply labelled by ``per_item`` workers, Meena: 5)
and the multi-reference task (each context written for by ``per_item`` workers: 1 for 4R1W,
2 for 2R2W, 4 for 1R4W). One thread-safe object decides, when a worker starts a unit:

* a worker never gets an item twice (over all runs of the task);
* the neediest items go first, counting items *in progress* as taken (so concurrent workers
  spread over the items instead of piling onto the same ones);
* items handed out and not finished (the worker left, the run was stopped) go back;
* ``max_per_worker`` caps the items one worker answers (default: no cap);
* with ``use_onboarding``, a worker's first unit starts with a gold item until they pass one.

``history`` (what earlier runs of the task stored) makes a relaunch hand out only what is missing.
With a ``stop`` rule (:class:`parlai_acute.monitoring.stopping.StopRule`) that has fired, no new unit gets
items; units under way finish theirs. Items under way count against its budget: those handed out,
and those answered in units still running (the rule reads a unit's answers when the unit ends).
"""
from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field


@dataclass
class _Worker:
    seen: set = field(default_factory=set)  # item ids answered, reserved, or started
    done: int = 0
    reserved: int = 0
    passed_onboarding: bool = False


class OnboardingGate:
    """Who still needs the gold item, for a scheduler with ``use_onboarding``, a ``_lock`` and
    ``_worker(name)`` records that have ``passed_onboarding`` (item tasks and the per-turn task)."""

    def needs_onboarding(self, worker: str) -> bool:
        with self._lock:
            return self.use_onboarding and not self._worker(worker).passed_onboarding

    def passed_onboarding(self, worker: str) -> None:
        with self._lock:
            self._worker(worker).passed_onboarding = True


class ItemScheduler(OnboardingGate):
    def __init__(self, item_ids: list[str], *, per_item: int, items_per_unit: int,
                 max_per_worker: int | None = None, use_onboarding: bool = False, seed: int = 0,
                 history: list[dict] = (), stop=None):
        if len(set(item_ids)) != len(item_ids):
            raise ValueError("item ids must be unique")
        self.ids = list(item_ids)
        self.per_item, self.items_per_unit = int(per_item), int(items_per_unit)
        self.max_per_worker = max_per_worker
        self.stop = stop
        self.use_onboarding = use_onboarding
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._workers: dict[str, _Worker] = {}
        self._unsettled: set = set()  # (worker, index) answered in a unit the stop rule has not read yet
        self.needed = [self.per_item] * len(self.ids)
        index_of = {item: i for i, item in enumerate(self.ids)}
        # earlier answers: {"worker", "item": id, "done": bool} and {"worker", "passed_onboarding": bool}
        for h in history:
            w = self._worker(str(h["worker"]))
            w.passed_onboarding |= bool(h.get("passed_onboarding"))
            item = h.get("item")
            if item is None:
                continue
            w.seen.add(item)
            if h.get("done"):
                w.done += 1
                if item in index_of:
                    i = index_of[item]
                    self.needed[i] = max(0, self.needed[i] - 1)

    def _worker(self, worker: str) -> _Worker:
        return self._workers.setdefault(worker, _Worker())

    def _stopped(self) -> bool:
        return self.stop is not None and self.stop.stopped

    def remaining(self) -> int:
        """Answers (item x worker) not yet handed out; 0 once the stop rule fired."""
        with self._lock:
            return 0 if self._stopped() else sum(self.needed)

    def complete(self) -> bool:
        """Every item has all its answers (or the stop rule fired), nothing in progress."""
        with self._lock:
            return (self._stopped() or not any(self.needed)) and not any(w.reserved for w in self._workers.values())

    def units_needed(self) -> int:
        """Unit slots to open: enough for full units plus slack for units cut short (spares are expired)."""
        full = -(-self.remaining() // max(1, self.items_per_unit))
        return full + full // 2 + 2

    def _candidates(self, w: _Worker) -> list[int]:
        if self._stopped():
            return []
        free = [i for i, item in enumerate(self.ids) if self.needed[i] > 0 and item not in w.seen]
        self._rng.shuffle(free)
        free.sort(key=lambda i: -self.needed[i])  # stable: random among the equally needy
        room = self.items_per_unit
        if self.max_per_worker is not None:
            room = min(room, self.max_per_worker - w.done - w.reserved)
        # the stop budget, less the items under way (handed out, or answered and not read by the rule yet)
        left = None if self.stop is None else self.stop.budget_left(
            sum(v.reserved for v in self._workers.values()) + len(self._unsettled))
        if left is not None:
            room = min(room, left)
        return free[:max(0, room)]

    def has_work_for(self, worker: str) -> bool:
        with self._lock:
            return bool(self._candidates(self._worker(worker)))

    def assign(self, worker: str) -> list[int]:
        """Reserve the items (indices into ``ids``) of one unit for ``worker``; empty if none is left for them."""
        with self._lock:
            w = self._worker(worker)
            chosen = self._candidates(w)
            for i in chosen:
                self.needed[i] -= 1
                w.reserved += 1
                w.seen.add(self.ids[i])
            return chosen

    def record(self, worker: str, index: int) -> None:
        """``worker`` finished item ``index`` (its answer is stored)."""
        with self._lock:
            w = self._worker(worker)
            w.reserved -= 1
            w.done += 1
            self._unsettled.add((worker, index))

    def settled(self, worker: str, indices: list[int]) -> None:
        """The stop rule has read ``worker``'s answers to ``indices`` (their unit ended): they count
        there now, no longer as work under way."""
        with self._lock:
            self._unsettled.difference_update((worker, i) for i in indices)

    def release(self, worker: str, index: int, *, started: bool = False) -> None:
        """Give back an item ``worker`` was handed and did not finish. ``started``: part of an answer is
        stored (e.g. two of four replies), so the worker keeps it as seen and never gets it again."""
        with self._lock:
            w = self._worker(worker)
            self.needed[index] += 1
            w.reserved -= 1
            if not started:
                w.seen.discard(self.ids[index])

    def reclaim(self, worker: str, indices: list[int]) -> list[int]:
        """A worker came back to a unit cut short: reserve its unfinished items for them again, those
        still needed (an item they had started stays theirs); returns the indices granted."""
        with self._lock:
            w = self._worker(worker)
            granted = []
            for i in indices:
                if self.needed[i] > 0:
                    self.needed[i] -= 1
                    w.reserved += 1
                    w.seen.add(self.ids[i])
                    granted.append(i)
            return granted
