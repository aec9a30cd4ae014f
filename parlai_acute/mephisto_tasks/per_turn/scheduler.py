"""Which model set a new dialogue gets, and whether a worker may start another: one thread-safe object.

Each new dialogue goes to the set that most needs dialogues (or turns), counting dialogues
*in progress* as well as finished ones: ParlAI's version counts only finished chats, so
concurrent workers all pile onto one pair. A dialogue that ends early (worker left, run
stopped) gives its place back; its finished turns are kept and still count when the
target is turns. ``history`` (earlier runs of the same task) makes a relaunch continue.
With a ``stop`` rule (:class:`parlai_acute.monitoring.stopping.StopRule`) that has fired, no new dialogue
starts; dialogues under way (and a worker coming back to one cut short) still finish. Nor does
one start when the dialogues under way (at ``turns_per_dialogue`` each) will spend its budget.
"""
from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

from parlai_acute.mephisto_tasks.live.item_scheduler import OnboardingGate


@dataclass
class _Worker:
    dialogues: int = 0  # complete + in progress
    passed_onboarding: bool = False


@dataclass
class _Set:
    names: tuple
    done: int = 0  # dialogues complete, or turns stored when counting turns
    running: set = field(default_factory=set)  # dialogue ids in progress


class Scheduler(OnboardingGate):
    def __init__(self, model_sets: list[tuple], *, target: int, unit: str = "dialogues", turns_per_dialogue: int = 10,
                 max_dialogues_per_worker: int | None = None, use_onboarding: bool = True, seed: int = 0,
                 history: list[dict] = (), stop=None):
        if unit not in ("dialogues", "turns"):
            raise ValueError(f"target unit {unit!r}: use dialogues or turns")
        self.unit, self.target, self.turns_per_dialogue = unit, int(target), int(turns_per_dialogue)
        self.sets = {"|".join(sorted(s)): _Set(tuple(s)) for s in model_sets}
        self.max_per_worker = max_dialogues_per_worker
        self.stop = stop
        self.use_onboarding = use_onboarding
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._workers: dict[str, _Worker] = {}
        # earlier dialogues: {"worker", "set", "status": complete|partial, "turns", "passed_onboarding"}
        for h in history:
            w = self._worker(str(h["worker"]))
            w.passed_onboarding |= bool(h.get("passed_onboarding"))
            if h.get("set") in self.sets:
                # as finish() counts: a dialogue cut short does not count against the worker's cap
                w.dialogues += int(h.get("status") == "complete" or self.unit == "turns")
                self.sets[h["set"]].done += self._credit(h.get("status") == "complete", int(h.get("turns") or 0))

    def _credit(self, complete: bool, turns: int) -> int:
        return turns if self.unit == "turns" else int(complete)

    def _worker(self, worker: str) -> _Worker:
        return self._workers.setdefault(worker, _Worker())

    def _need(self, s: _Set) -> int:
        if self.stop is not None and self.stop.stopped:
            return 0
        expected = len(s.running) * (self.turns_per_dialogue if self.unit == "turns" else 1)
        return self.target - s.done - expected

    def remaining(self) -> int:
        """Dialogues (or turns) not yet finished or under way, over all sets."""
        with self._lock:
            return sum(max(0, self._need(s)) for s in self.sets.values())

    def dialogues_needed(self) -> int:
        with self._lock:
            per = self.turns_per_dialogue if self.unit == "turns" else 1
            return sum(-(-max(0, self._need(s)) // per) for s in self.sets.values())

    def complete(self) -> bool:
        with self._lock:
            stopped = self.stop is not None and self.stop.stopped
            return all((stopped or s.done >= self.target) and not s.running for s in self.sets.values())

    def may_start(self, worker: str) -> bool:
        with self._lock:
            return self._may_start(self._worker(worker))

    def _may_start(self, w: _Worker) -> bool:
        if self.max_per_worker is not None and w.dialogues >= self.max_per_worker:
            return False
        if self.stop is not None:
            running = sum(len(s.running) for s in self.sets.values())
            if self.stop.budget_left(running * self.turns_per_dialogue) == 0:
                return False  # the dialogues under way will spend the stop budget
        return any(self._need(s) > 0 for s in self.sets.values())

    def start(self, worker: str, dialogue: str) -> tuple | None:
        """Reserve the neediest model set for a new dialogue of ``worker`` (None: nothing for them)."""
        with self._lock:
            w = self._worker(worker)
            if not self._may_start(w):
                return None
            open_sets = [s for s in self.sets.values() if self._need(s) > 0]
            self._rng.shuffle(open_sets)
            chosen = max(open_sets, key=self._need)  # random among the equally needy
            chosen.running.add(dialogue)
            w.dialogues += 1
            return chosen.names

    def finish(self, set_key: str, dialogue: str, *, complete: bool, turns: int, worker: str) -> None:
        """A dialogue ended: ``complete`` (minimum turns reached) or cut short."""
        with self._lock:
            s = self.sets[set_key]
            if dialogue not in s.running:
                return
            s.running.discard(dialogue)
            s.done += self._credit(complete, turns)
            if not complete and self.unit == "dialogues":
                # the place goes back, and it does not count against the worker's cap
                self._worker(worker).dialogues -= 1

    def resume(self, worker: str, set_key: str, dialogue: str, *, turns: int) -> bool:
        """A worker came back to a dialogue cut short (counted by ``finish`` or ``history`` as
        partial): it is in progress again; its stored turns are credited once, when it ends."""
        with self._lock:
            s = self.sets.get(set_key)
            if s is None or dialogue in s.running:
                return s is not None
            s.done -= self._credit(False, turns)
            s.running.add(dialogue)
            if self.unit == "dialogues":
                self._worker(worker).dialogues += 1
            return True
