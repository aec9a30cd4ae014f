"""Live side of the item tasks: a unit is a plan of items shown one at a time; every answer stored at once.

Shared by the SSA labelling and the multi-reference tasks; a subclass says what an item looks
like (:meth:`ItemTaskRunner.entry_view`) and how an answer is checked and stored
(:meth:`ItemTaskRunner.answer`). The server is the source of truth:

* every reply to the page is a *view* ``{"type": "state", "version": n, "status": ..., "position": k,
  "n": n, "done": d, "item": {...} | null, "text": {...}, "ack": action_id, "error": ..., "warning": ...,
  ...}``; the item carries only what the worker must see (texts), never model names or item ids;
  ``text`` is every word the page shows, from the task's ``texts`` module (:meth:`ItemTaskRunner.texts`);
* the page sends ``{"type": "answer", "action_id": ..., "tab": ..., "position": k, ...}``: it names
  the item by its position in the unit, the server looks the item up in its own plan. An action is
  stored once and always answered with the current view (see :mod:`..live_runner`).

Items of a unit cut short (the worker left, the run was stopped) go back to the scheduler; when the
worker's page comes back (it re-registers by itself) they are theirs again if still needed, and
the unit goes on at the same item and step.
A gold (onboarding) item may lead the plan; failing it grants ``block_qualification``.
"""
from __future__ import annotations

import logging
import random
import threading
import time

from parlai_acute.mephisto_tasks.live.live_runner import UNKNOWN_ACTION, LiveRunner
from parlai_acute.mephisto_tasks.live.texts import NO_WORK, STALE_ITEM

logger = logging.getLogger(__name__)


def alternating_speakers(context) -> list[dict]:
    """Context turns with speaker labels A and B alternating; the last turn is A's (the reply is B's)."""
    n = len(context)
    return [{"speaker": "A" if (n - 1 - i) % 2 == 0 else "B", "text": text} for i, text in enumerate(context)]


class ItemTaskRunner(LiveRunner):
    """Subclasses set :meth:`setup` (returns the live object: ``scheduler``, ``items``,
    ``onboarding_items``, ``seed``, ``config``) and implement :meth:`entry_view`, :meth:`answer` and
    :meth:`texts` (every word of a view, from the task's ``texts`` module)."""

    @classmethod
    def setup(cls, task_run, args, shared_state):
        raise NotImplementedError

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        self.live = self.setup(task_run, args, shared_state)
        self.scheduler = self.live.scheduler
        self._lock = threading.Lock()
        self._ended: set[str] = set()
        self.start_watching()

    # ------------------------------------------------------------------ for subclasses
    def entry_view(self, state, entry: dict) -> dict:
        """What the page shows for plan ``entry`` (texts only)."""
        raise NotImplementedError

    def answer(self, agent, update: dict, entry: dict) -> tuple[str | None, str | None]:
        """Check and store one answer to ``entry``; returns (error, warning). Call :meth:`finish_entry`
        when the entry is done."""
        raise NotImplementedError

    def stop_rows(self, agent) -> list[dict]:
        """A finished unit's rows for the task's stop rule (none by default: no stop rule)."""
        return []

    def task_view(self) -> dict:
        """Fields of every view that do not change (instructions, questions)."""
        return {}

    def texts(self, state, view: dict) -> dict:
        """Every word of ``view`` (its ``text``), from the task's texts module."""
        raise NotImplementedError

    def item_of(self, entry: dict) -> dict:
        return (self.live.onboarding_items if entry["onboarding"] else self.live.items)[entry["index"]]

    # ------------------------------------------------------------------ views
    def current_entry(self, state) -> dict | None:
        d = state.data
        done = len(d["results"])
        if d["status"] != "working" or done >= len(d["plan"] or ()):
            return None
        return d["plan"][done]

    def view(self, state, **extra) -> dict:
        d = state.data
        entry = self.current_entry(state)
        done = len(d["results"])
        v = {"type": "state", "version": d.get("version", 0), "status": d["status"], "n": len(d["plan"] or ()),
             "done": done, "position": done + 1 if entry is not None else None,
             "item": self.entry_view(state, entry) if entry is not None else None,
             "message": d.get("message", ""), "ack": None, "error": None, "warning": None}
        v.update(self.task_view())
        v["text"] = self.texts(state, v)
        v.update(extra)
        return v

    # ------------------------------------------------------------------ start and resume
    def has_work_for(self, worker) -> bool:
        return self.scheduler.has_work_for(str(worker.db_id))

    @classmethod
    def resumable(cls, data: dict) -> bool:
        return (data.get("status") in ("working", "partial") and bool(data.get("plan"))
                and len(data.get("results") or ()) < len(data["plan"]))

    def start_unit(self, agent) -> None:
        worker = str(agent.worker_id)
        indices = self.scheduler.assign(worker)
        plan = [{"index": i, "item_id": self.scheduler.ids[i], "onboarding": False} for i in indices]
        if plan and self.live.onboarding_items and self.scheduler.needs_onboarding(worker):
            rng = random.Random(f"{self.live.seed}:{agent.db_id}:onboarding")
            k = rng.randrange(len(self.live.onboarding_items))
            plan.insert(0, {"index": k, "item_id": f"onboarding-{k}", "onboarding": True})
        data = {"worker_name": agent.get_worker().worker_name, "plan": plan, "config": self.live.config,
                "status": "working" if plan else "unavailable", "shown_at": time.time(),
                "message": "" if plan else NO_WORK}
        agent.state.set_init_state(data)  # saved

    def resume_unit(self, agent, data: dict) -> None:
        """The items not finished go back to this worker if still needed; the one on the page (with
        any replies already written) first, at the same step."""
        done = len(data["results"])
        rest = data["plan"][done:]
        granted = set(self.scheduler.reclaim(str(agent.worker_id), [e["index"] for e in rest if not e["onboarding"]]))
        kept = [e for e in rest if e["onboarding"] or e["index"] in granted]
        if rest and kept and kept[0] is not rest[0]:
            data["current"] = None  # the item on the page went to someone else meanwhile
        data["plan"] = data["plan"][:done] + kept
        if not kept:  # everything left went to others meanwhile: the unit ends with what was done
            data["status"] = "complete" if done else "unavailable"
            data["message"] = "" if done else NO_WORK
        else:
            data["status"] = "working"
        agent.state.set_init_state(data)

    # ------------------------------------------------------------------ packets
    def handle(self, agent, update: dict):
        state = agent.state
        entry = self.current_entry(state)
        if update.get("type") != "answer":
            return UNKNOWN_ACTION
        if entry is None or update.get("position") != len(state.data["results"]) + 1:
            return STALE_ITEM  # a stale page's answer
        self.accept(state, update)  # saved with whatever the answer stores
        error, warning = self.answer(agent, update, entry)
        if error:
            state.data["actions"].remove(update["action_id"])  # refused: nothing was stored
        return error, warning

    def finish_entry(self, agent, entry: dict, result: dict, *, gold_passed: bool | None = None) -> None:
        """Store ``result`` for ``entry`` (atomically, before anything else) and move on."""
        state = agent.state
        d = state.data
        now = time.time()
        result = dict(result, position=len(d["results"]) + 1, item_id=entry["item_id"], index=entry["index"],
                      onboarding=entry["onboarding"], shown_at=d.get("shown_at"), answered_at=now)
        if entry["onboarding"]:
            result["gold_passed"] = bool(gold_passed)
        d["results"].append(result)
        d["current"], d["shown_at"] = None, now
        worker = str(agent.worker_id)
        if entry["onboarding"] and not gold_passed:
            d.update(status="blocked", message=self.fail_message)
            state.save_data()
            if self.block_qualification:
                agent.get_worker().grant_qualification(self.block_qualification, 1)
            logger.info("worker %s failed the gold item: blocked with %s", worker, self.block_qualification)
            self.end(agent)
            return
        if len(d["results"]) >= len(d["plan"]):
            d["status"] = "complete"
        state.save_data()
        if entry["onboarding"]:
            self.scheduler.passed_onboarding(worker)
        else:
            self.scheduler.record(worker, entry["index"])
        if d["status"] == "complete":
            self.end(agent)  # the unit's labels count for the stop rule as soon as it is done

    def end(self, agent) -> None:
        """The unit is over (finished, blocked, or cut short): unfinished items go back, once."""
        d = agent.state.data
        with self._lock:
            if agent.get_agent_id() in self._ended or not d.get("plan"):
                return
            self._ended.add(agent.get_agent_id())
        done = len(d["results"])
        for k, entry in enumerate(d["plan"][done:]):
            if not entry["onboarding"]:
                started = k == 0 and self.started(d.get("current"))
                self.scheduler.release(str(agent.worker_id), entry["index"], started=started)
        if d["status"] == "working":
            d["status"] = "partial"
            agent.state.save_data()
        self.settle_stop(agent, self.stop_rows(agent))
        self.scheduler.settled(str(agent.worker_id), [e["index"] for e in d["plan"][:done] if not e["onboarding"]])

    @staticmethod
    def started(current: dict | None) -> bool:
        """Is part of an answer to the current item stored (so the worker keeps it as seen)? By default
        any stored step is; a task whose steps store no answer (SSA's first question) says otherwise."""
        return bool(current)
