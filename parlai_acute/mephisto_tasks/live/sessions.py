"""Where each worker is: units left unfinished, found again by worker + provider registration (all tasks).

A worker's page can lose its unit without the worker doing anything wrong: the launcher is
stopped and relaunched (a new run, new Mephisto agents), or the router stops hearing the page
(a laptop lid, a dropped connection) and Mephisto clears the unit. The work stored so far is in
the unit's agent state; when the same worker comes back on the same provider assignment (the
provider's ``agent_registration_id``: mock ``<assignment>-<worker>``, MTurk the same pair) the
runner copies that state into the new agent and goes on from the same step.

The old state is then marked ``superseded_by`` the new agent, and the new one lists the agents
it continues in ``resumed_from``: :func:`..stored_units.stored_units` reads each piece of work
once, also if the launcher died between the two writes.

Work that is finished is remembered the same way, by worker + registration: a page of a submitted
assignment that registers again after a relaunch (a reload, a tab left open, the address opened
again) is told it has submitted this work and gets no new unit or dialogue. The record is the
finished unit's own stored state (its ``registration`` is saved with the unit's first state, and
every state is written atomically), read back at launch: nothing else to keep in step.

Finished is not submitted: the page submits (``/submit_task``, then the provider's form) as soon as
it shows the finished view, and a launcher stopped in between leaves work that is done but that the
provider never saw submitted (on MTurk: never paid). Mephisto's database cannot tell the two apart
(it marks an agent "completed" when its run stops, submit or not); the page's submit is recorded in
the state itself (``final_submission``, written by Mephisto's ``handle_submit``). Such work is handed
to the page's next agent like unfinished work: the page shows its finished view again and submits it
there, and the agent that did the work is expired, so one agent holds it, completed once.

Such work keeps a run going even when nothing is left to hand out: a relaunch that finds every answer
collected but some finished work unsubmitted serves anyway (:func:`unsubmitted_work`), with a unit slot
for each such page, hands new workers nothing ("no more work"), and ends once those pages submitted.
"""
from __future__ import annotations

import copy
import logging
import threading
from typing import Any, Callable

logger = logging.getLogger(__name__)

# what a stored state carries about where it came from, never copied as work. The tab that owned the
# assignment is copied: after a relaunch it still owns it (another page coming back first, e.g. one in
# another browser that had not heard it was displaced, must not take it with an action it had pending)
_OWN_KEYS = ("start_time", "end_time", "final_submission", "superseded_by")
# review decided the agent: its work is settled whatever its state says (see ..review)
_DECIDED = ("approved", "soft_rejected", "rejected")


def submitted(data: dict, agent=None) -> bool:
    """Did the page submit this unit (``final_submission``, see the module docstring), or has review
    already decided its agent? Not the agent's "completed": Mephisto sets it when a run stops too."""
    return data.get("final_submission") is not None or getattr(agent, "db_status", None) in _DECIDED


def registration_of(agent) -> str | None:
    """The provider's registration id the page registered ``agent`` with (None outside a live run)."""
    try:
        by_registration = agent.get_live_run().client_io.agents_by_registration_id
    except Exception:  # no live run (tests, reading back): nothing to resume by
        return None
    agent_id = agent.get_agent_id()
    return next((reg for reg, aid in list(by_registration.items()) if aid == agent_id), None)


def in_live_run(agent) -> bool:
    """Is ``agent`` served by a live run (its page registered through Mephisto's client IO)?"""
    try:
        return agent.get_live_run().client_io is not None
    except Exception:
        return False


def restore_registration(agent, registration: str, holder_id: str) -> None:
    """Point ``registration`` back at the agent that holds its work (Mephisto pointed it at ``agent``, made
    by a second registration at the same instant): the page's next registration reconnects to the holder."""
    try:
        agent.get_live_run().client_io.agents_by_registration_id[registration] = holder_id
    except Exception:
        logger.exception("pointing registration %s back at agent %s", registration, holder_id)


def forget_registration(agent) -> None:
    """Let the page's next registration make a new agent (Mephisto would reconnect it to this
    finished one, whose unit is gone: "This task is no longer available")."""
    try:
        by_registration = agent.get_live_run().client_io.agents_by_registration_id
    except Exception:
        return
    for reg, aid in list(by_registration.items()):
        if aid == agent.get_agent_id():
            by_registration.pop(reg, None)


class Sessions:
    """Units to go on with by (worker id, registration id): unfinished, or finished and never submitted
    (:meth:`open_work`); and the registrations whose work is submitted. ``resumable(data)`` says which
    stored states still have work in them, ``holds_work(data)`` which got any (a state that did and has
    none left is finished). Thread-safe."""

    def __init__(self, resumable: Callable[[dict], bool], holds_work: Callable[[dict], bool]):
        self.resumable = resumable
        self.holds_work = holds_work
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str], dict[str, Any]] = {}
        self._done: set[tuple[str, str]] = set()

    def open_work(self, data: dict, agent=None, is_submitted: bool | None = None) -> bool:
        """Is there something left to do with this state: work, or the page's submit of finished work?
        (``is_submitted``: what the live agent knows, else :func:`submitted`.)"""
        if is_submitted is None:
            is_submitted = submitted(data, agent)
        return self.resumable(data) or (self.holds_work(data) and not is_submitted)

    def keep(self, data: dict) -> bool:
        """Is this stored state one to load (unfinished, or finished work)?"""
        return self.resumable(data) or self.holds_work(data)

    def load(self, units: list[dict]) -> "Sessions":
        """Units of earlier runs (rows of :func:`..stored_units.stored_units` passing :meth:`keep`, with ``agent``)."""
        for unit in units:
            self.add(str(unit["worker_id"]), unit["data"].get("registration"), unit["agent"], unit["data"])
        return self

    def add(self, worker: str, registration: str | None, agent, data: dict, is_submitted: bool | None = None) -> None:
        """A unit that ended (or was read back): its work, open or submitted, under its registration."""
        if not registration or data.get("superseded_by"):
            return
        if self.open_work(data, agent, is_submitted):
            with self._lock:
                self._open[(worker, registration)] = {"agent": agent, "data": copy.deepcopy(data)}
        elif self.holds_work(data):
            with self._lock:
                self._done.add((worker, registration))

    def unsubmitted(self) -> int:
        """How many finished, never submitted units wait for their page to register again and submit
        (the run must not end before: the page would have no server to submit to, the worker no pay)."""
        with self._lock:
            return sum(1 for entry in self._open.values() if not self.resumable(entry["data"]))

    def finished(self, worker: str, registration: str | None) -> bool:
        """Was this registration's work submitted (and none of it is open again)?"""
        with self._lock:
            key = (worker, registration)
            return bool(registration) and key in self._done and key not in self._open

    def waiting_for(self, worker: str) -> bool:
        with self._lock:
            return any(w == worker for w, _ in self._open)

    def has_finished(self, worker: str) -> bool:
        with self._lock:
            return any(w == worker for w, _ in self._done)

    def take(self, worker: str, registration: str | None) -> dict | None:
        with self._lock:
            return self._open.pop((worker, registration), None) if registration else None


def unsubmitted_work(db, task_name: str, runner_class) -> int:
    """The stored units of ``task_name`` whose work is finished and was never submitted (by
    ``runner_class``'s ``resumable`` / ``holds_work``): what a relaunch must serve although every answer
    is collected, so that their pages can submit. The same units :meth:`Sessions.load` finds open."""
    from parlai_acute.mephisto_tasks.live.stored_units import stored_units

    sessions = Sessions(runner_class.resumable, runner_class.holds_work)
    units = stored_units(db, task_name, sessions.keep, with_agent=True)
    return sessions.load(units).unsubmitted()


def carried_over(old: dict, old_agent_id: str) -> dict:
    """The work of an unfinished state, to continue in a new agent."""
    data = {k: copy.deepcopy(v) for k, v in old.items() if k not in _OWN_KEYS}
    data["resumed_from"] = list(old.get("resumed_from") or []) + [str(old_agent_id)]
    return data


def mark_superseded(old_agent, new_agent_id: str) -> None:
    """Write ``superseded_by`` into the old agent's state (after the new one is saved)."""
    try:
        state = old_agent.state
        state.data["superseded_by"] = str(new_agent_id)
        state.save_data()
    except Exception:  # the new state already lists it in resumed_from: readers skip it anyway
        logger.exception("marking agent %s superseded", old_agent.db_id)
