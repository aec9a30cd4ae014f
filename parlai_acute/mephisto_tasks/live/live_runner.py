"""The live loop every task of this package runs per unit: packets in, views out, clean ending.

Mephisto calls ``run_unit`` in a thread per unit. Each task's runner only says what its
actions do (:meth:`LiveRunner.handle`), what the page is shown (:meth:`LiveRunner.view`), how a
unit starts or continues earlier work (:meth:`LiveRunner.start_unit`, :meth:`LiveRunner.resume_unit`)
and how its work is settled when it ends (:meth:`LiveRunner.end`); this base class owns the rest,
once for every task. The server, not the page, knows where a worker is:

* every packet from the page is an action with a unique ``action_id`` (the page's tab id and a
  counter): an action already stored is never stored again, and every packet, whatever it is,
  is answered with the current view (``ack`` = its action id), so no page waits for an answer
  that will not come and no click is dropped silently;
* a page (re)opening sends ``{"type": "hello", "tab": id, "claim": true}``: the newest tab owns
  the assignment (also over a relaunch: the owner is part of the stored work); actions from another
  tab are not stored, and the view it gets back names the owner (``tab``) so that page says the
  assignment is open elsewhere; a shown page asks every few seconds (``{"type": "ping"}``, answered
  with ``{"type": "owner", "tab", "version"}``, no view made), as the router delivers an agent's
  packets to one of its pages only (see ``frontend/mephisto_live.js``);
* one agent per provider registration in a run: two pages of one assignment registering at the same
  instant (two browsers coming back after a relaunch) would make Mephisto create two agents, the
  second starting new work from the page's resent action; the later one is answered "register again"
  (it then reaches the first agent) and expired, never completed;
* an agent that ends without its worker submitting, its work continued elsewhere (a relaunch, a
  page back after a drop) or holding no work at all ("no more work"), is expired rather than left for
  Mephisto to mark completed: Mephisto records one completed agent per piece of work;
* every view carries ``version``, a server-clock stamp that only grows (also over a relaunch),
  so a page drops views older than one it has shown;
* a unit cut short with work left (relaunch, a page the router stopped hearing) is found again by
  worker + provider registration (:mod:`.sessions`) and continued in the new agent;
* a page of an assignment whose work was submitted that registers again after a relaunch is answered
  ``{"type": "already_submitted"}`` (the page says the work was submitted): no unit or dialogue
  starts, and the agent Mephisto made for it is expired;
* work finished but never submitted (the launcher stopped between the last action and the page's
  submit) is handed to the page's next agent as it is: the page shows its finished view and submits
  there; the agent that did it is expired, and the work is not settled a second time (:meth:`end`);
* a run whose work is all handed out does not end while such finished work waits for its page (a
  relaunch serves it although nothing is left to collect: new workers are told "no more work");
* waiting for packets or the submit, noticing a worker who left, settling the unit exactly once
  (``run_unit`` or Mephisto's cleanup), and expiring spare units when the scheduler is done.
"""
from __future__ import annotations

import logging
import random
import threading
import time

from mephisto.abstractions._subcomponents.agent_state import AgentState
from mephisto.abstractions.blueprint import TaskRunner
from mephisto.data_model.exceptions import AgentShutdownError

from parlai_acute.mephisto_tasks.live.sessions import (Sessions, carried_over, forget_registration, in_live_run,
                                                  mark_superseded, registration_of, restore_registration, submitted)
from parlai_acute.mephisto_tasks.live.texts import FAILED, NOT_ELIGIBLE, UNKNOWN_ACTION
from parlai_acute.mephisto_tasks.live.units import (STOP_LINGER_S, expire_agent, expire_launched_units, raise_if_gone,
                                                   say_no_more_work, watch_completion)

logger = logging.getLogger(__name__)
WAIT = 0.25  # seconds between checks for a submitted unit while idle (a packet wakes the loop at once)
GONE_EVERY = 2.0  # seconds between database checks for a worker who left (each takes Mephisto's DB lock:
# checked every WAIT, 200 idle units made 800 locked queries a second and judgments waited behind them)
_UNSUBMITTED: dict[str, int] = {}  # task run id -> finished units of earlier runs never submitted, at its start
ACTIONS_KEPT = 500  # action ids remembered per unit (a unit has tens of actions; resends come within seconds)
_STAMP = threading.Lock()  # guards making the per-state locks below


def _stamp_lock(state) -> threading.RLock:
    """The lock that orders one unit's views (a model finishing, the unit's loop): one per state, so
    200 units stamp and send their views in parallel instead of in one line."""
    lock = getattr(state, "_parlai_acute_stamp", None)
    if lock is None:
        with _STAMP:
            lock = state.__dict__.setdefault("_parlai_acute_stamp", threading.RLock())
    return lock


def unsubmitted_at_start(task_run) -> int:
    """Finished units of earlier runs that were never submitted, as ``task_run``'s runner found them when
    it started (Mephisto makes the runner before it asks the blueprint for units): each gets a unit
    slot beside the new work, for its page to register to and submit (see :mod:`.sessions`)."""
    return _UNSUBMITTED.get(str(task_run.db_id), 0)


class LiveRunner(TaskRunner):
    """Subclasses set ``self.scheduler`` (with ``complete()``) and call :meth:`start_watching`,
    and implement :meth:`view`, :meth:`start_unit`, :meth:`handle` and :meth:`end`. A task with a
    gold item sets its own ``fail_message``; the blueprint argument ``onboarding_fail_message``
    replaces it when given (Mephisto's runner holds ``block_qualification``)."""

    fail_message = NOT_ELIGIBLE

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        b = args.blueprint
        self.fail_message = b.get("onboarding_fail_message") or type(self).fail_message
        self.duration = task_run.get_task_args().assignment_duration_in_seconds
        self._watch = None
        self._no_more_work_said = False
        self._stopped_and_done_at = None  # when the stop rule had fired and the last unit under way ended
        self._unsubmitted_since = None  # when all work was handed out but finished work still awaited its submit
        self._unsubmitted_given_up = False
        self.sessions = Sessions(self.resumable, self.holds_work)
        self._owners_lock = threading.Lock()
        self._owners: dict[str, str] = {}  # registration -> the agent id holding its work in this run
        self._extra: set[str] = set()  # agents made by a second registration at once: expired at start
        self._to_submit: set[str] = set()  # agents handed finished work to submit: settled already, never again

    def start_watching(self) -> None:
        """Expire spare units whenever the scheduler is complete, and find the unfinished units of
        earlier runs (call once the scheduler exists and the blueprint is registered)."""
        from parlai_acute.mephisto_tasks.live.stored_units import stored_units

        units = stored_units(self.task_run.db, self.task_run.get_task().task_name, self.sessions.keep, with_agent=True)
        self._complete_late_submits(units)
        self.sessions.load(units)
        _UNSUBMITTED[str(self.task_run.db_id)] = self.sessions.unsubmitted()
        self._watch = watch_completion(self.task_run, self.finished)

    def _complete_late_submits(self, units: list[dict]) -> None:
        """A page's submit that reached a stopping run after the runner had expired its agent as not
        submitted (:meth:`_expire_if_not_work`: Mephisto still takes packets while the run stops) is a
        submit all the same: the page went on to the provider's form. That agent, the one holding the
        work, is marked completed, so review decides and pays the work."""
        for unit in units:
            agent, data = unit["agent"], unit["data"]
            if agent.db_status == AgentState.STATUS_EXPIRED and self.holds_work(data) and submitted(data):
                agent.db.update_agent(agent.db_id, status=AgentState.STATUS_COMPLETED)
                agent.db_status = AgentState.STATUS_COMPLETED
                logger.info("agent %s of worker %s: its page's submit came as the run stopped; completed",
                            agent.db_id, agent.worker_id)

    def finished(self) -> bool:
        """Can the run end (its spare units expired)? Once nothing more will be handed out, new workers
        are told "no more work"; after the stop rule fired, the run keeps serving :data:`STOP_LINGER_S`
        more seconds once the units under way are done, so a worker who arrives then is told so
        instead of finding the server gone."""
        stop = getattr(self.scheduler, "stop", None)
        stopped = bool(stop is not None and stop.stopped)
        complete = self.scheduler.complete()
        if (stopped or complete) and not self._no_more_work_said:
            self._no_more_work_said = True
            if say_no_more_work(self.task_run):
                logger.debug("new workers are told there is no more work")
        if complete and self.sessions.unsubmitted():
            # finished work whose page has yet to register again and submit: keep its unit slots, for as
            # long as the provider gives a worker an assignment (after that it expires there anyway); the
            # work stays recorded as open, so a later launch serves it again
            if self._unsubmitted_since is None:
                self._unsubmitted_since = time.monotonic()
            if time.monotonic() - self._unsubmitted_since < self.duration:
                return False
            if not self._unsubmitted_given_up:
                self._unsubmitted_given_up = True
                logger.warning("%d finished assignments were not submitted within %d s; ending the run (a new "
                               "launch serves them again)", self.sessions.unsubmitted(), self.duration)
        if not stopped or not complete:
            return complete
        if self._stopped_and_done_at is None:
            self._stopped_and_done_at = time.monotonic()
        return time.monotonic() - self._stopped_and_done_at >= STOP_LINGER_S

    # ------------------------------------------------------------------ for subclasses
    def view(self, state, **extra) -> dict:
        """What the page shows now (``extra``: ack, error, ...); ``version`` and ``tab`` are added here."""
        raise NotImplementedError

    def start_unit(self, agent) -> None:
        """A new agent with no earlier work: hand out its work and ``state.set_init_state``."""
        raise NotImplementedError

    def resume_unit(self, agent, data: dict) -> None:
        """``data`` is unfinished work of this worker (an earlier agent's): take back from the
        scheduler what it still needs, fix its status, and ``state.set_init_state(data)``."""
        agent.state.set_init_state(data)

    def reconnected(self, agent) -> None:
        """The page of a running agent registered again (reload, second tab, dropped connection)."""

    def resume(self, agent) -> None:
        """First thing in ``run_unit``: finish a step a stopped run left half done."""

    def handle(self, agent, update: dict):
        """One action: validate, store (calling :meth:`accept` in the same save) and return an error
        text, ``(error, warning)`` or None; the view that answers it is sent by the caller."""
        raise NotImplementedError

    def end(self, agent) -> None:
        """The unit is over: settle its work (idempotent; called from run_unit and cleanup)."""
        raise NotImplementedError

    @classmethod
    def resumable(cls, data: dict) -> bool:
        """Does this stored state still have work the worker can come back to?"""
        return False

    @classmethod
    def holds_work(cls, data: dict) -> bool:
        """Did this unit get any work (not "no more work for you")? An agent without is expired."""
        return data.get("status") not in (None, "unavailable")

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def accept(state, update: dict) -> None:
        """Record ``update``'s action as stored (saved with the work it stored)."""
        actions = state.data.setdefault("actions", [])
        actions.append(update["action_id"])
        del actions[:-ACTIONS_KEPT]

    def settle_stop(self, agent, rows: list[dict]) -> None:
        """Hand a finished unit's tidy ``rows`` to the task's stop rule (``scheduler.stop``, see
        :mod:`parlai_acute.monitoring.stopping`); if they settled it, the decision is stored with this unit."""
        stop = getattr(self.scheduler, "stop", None)
        if stop is not None and rows:
            self.store_stop_decision(agent, stop.add(rows))

    @staticmethod
    def store_stop_decision(agent, decision: dict | None) -> None:
        """The stop rule's decision, when this unit's work settled it, saved in the unit's data (once)."""
        if decision is not None:
            agent.state.data["stop_decision"] = decision
            agent.state.save_data()
            logger.info("stop rule fired (%s) at %s judgments", decision["stopped"], decision["judgments"])

    def unit_record(self, agent) -> dict:
        """This agent's unit as the stores read it back (:mod:`.stored_units`), for their row builders."""
        return {"worker_id": agent.worker_id, "worker_name": agent.state.data.get("worker_name"),
                "unit_id": agent.unit_id, "assignment_id": agent.assignment_id, "task_run_id": self.task_run.db_id,
                "data": agent.state.data}

    def stamped(self, state, **extra) -> dict:
        with _stamp_lock(state):  # views are made in several threads (a model finishing, the unit's loop): one order
            d = state.data
            d["version"] = max(int(d.get("version") or 0) + 1, int(time.time() * 1000))
            view = self.view(state, **extra)
            view.update(version=d["version"], tab=d.get("tab"))
            return view

    def send_view(self, agent, **extra) -> None:
        with _stamp_lock(agent.state):  # sent in the order stamped: a page drops a view older than one it has shown
            agent.observe(self.stamped(agent.state, **extra))

    # ------------------------------------------------------------------ start and packets
    def get_init_data_for_agent(self, agent) -> dict:
        state = agent.state
        if state.get_init_state() is None:
            with self._owners_lock:  # one registration at a time decides who holds an assignment's work
                registration = registration_of(agent)
                holder = self._owners.get(registration) if registration else None
                if holder is not None or (registration is None and in_live_run(agent)):
                    # a second page of this assignment registered at the same instant (Mephisto keeps the
                    # later agent under the registration): this one does nothing, its page registers
                    # again and reaches the agent that holds the work
                    if holder is not None:
                        restore_registration(agent, registration, holder)
                    self._extra.add(agent.get_agent_id())
                    logger.info("agent %s of worker %s: a second registration of one assignment at once; its "
                                "page registers again", agent.db_id, agent.worker_id)
                    return {"type": "again", "again": True}
                if self.sessions.finished(str(agent.worker_id), registration):
                    # this assignment's work was submitted (in an earlier run): nothing starts for it
                    self._extra.add(agent.get_agent_id())
                    logger.info("agent %s of worker %s: registration %s has finished its work; its page is told so",
                                agent.db_id, agent.worker_id, registration)
                    return {"type": "already_submitted", "already_submitted": True}
                if registration:
                    self._owners[registration] = agent.get_agent_id()
            earlier = self.sessions.take(str(agent.worker_id), registration)
            if earlier is not None:
                logger.info("worker %s continues the work of agent %s in agent %s", agent.worker_id,
                            earlier["agent"].db_id, agent.db_id)
                data = carried_over(earlier["data"], earlier["agent"].db_id)
                data["registration"] = registration
                if self.resumable(earlier["data"]):
                    self.resume_unit(agent, data)
                else:
                    # finished, never submitted: nothing to take back from the scheduler, and its work was
                    # counted when it was done (or read back at launch); the page shows it and submits
                    self._to_submit.add(agent.get_agent_id())
                    state.set_init_state(data)
                mark_superseded(earlier["agent"], agent.db_id)
                old = earlier["agent"]
                status = old.db.get_agent(old.db_id)["status"]
                # a killed run left it "in task", or a stopped one "completed" with no submit: its work is
                # this agent's now (expired, so Mephisto holds one completed agent for it)
                if status not in AgentState.complete() or (status == AgentState.STATUS_COMPLETED
                                                            and not submitted(earlier["data"])):
                    expire_agent(old)
            else:
                # saved with the unit's first state: registering runs in Mephisto's event loop, where a
                # second fsync'd write per worker held up every page's packets while 200 registered
                state.data["registration"] = registration
                self.start_unit(agent)
                if state.get_init_state() is None:  # start_unit saved nothing (set_init_state saves)
                    state.save_data()
        else:
            self.reconnected(agent)
        return self.stamped(state)

    def filter_units_for_worker(self, units, worker):
        worker_id = str(worker.db_id)
        # a worker with finished work gets a unit to be told so (see get_init_data_for_agent), never new work
        if self.sessions.waiting_for(worker_id) or self.sessions.has_finished(worker_id):
            return units
        return units if self.has_work_for(worker) else []

    def has_work_for(self, worker) -> bool:
        return True

    def receive(self, agent, update: dict) -> None:
        """One packet from the page, always answered with the current view."""
        state = agent.state
        d = state.data
        if update.get("type") == "ping":  # which tab owns it, and the latest view's number: no view made
            agent.observe({"type": "owner", "tab": d.get("tab"), "version": d.get("version")})
            return
        if update.get("type") == "hello":
            tab = update.get("tab")
            if isinstance(tab, str) and tab and tab != d.get("tab") and (update.get("claim") or not d.get("tab")):
                d["tab"] = tab
                state.save_data()  # the owner survives a relaunch: a page coming back first does not take it
            self.send_view(agent)
            return
        action = update.get("action_id")
        if not isinstance(action, str) or not action:
            self.send_view(agent, error=UNKNOWN_ACTION)
            return
        if d.get("tab") and update.get("tab") != d["tab"]:
            self.send_view(agent, ack=action)  # not stored: that page is told the assignment is open elsewhere
            return
        if action in (d.get("actions") or ()):
            self.send_view(agent, ack=action)  # a resend (or a double click) of something stored
            return
        try:
            outcome = self.handle(agent, update)
        except Exception:  # never leave the page waiting: log, and say so
            logger.exception("%s packet of agent %s", update.get("type"), agent.get_agent_id())
            outcome = FAILED
        error, warning = outcome if isinstance(outcome, tuple) else (outcome, None)
        extra = {"warning": warning} if warning else {}
        self.send_view(agent, ack=action, error=error, **extra)

    # ------------------------------------------------------------------ mephisto hooks
    def run_unit(self, unit, agent) -> None:
        if agent.get_agent_id() in self._extra:  # see get_init_data_for_agent: never a piece of work (again, done)
            expire_agent(agent)
            raise AgentShutdownError(agent.db_id)  # Mephisto gives the unit back to the pool, uncompleted
        start = time.time()
        gone_check = time.monotonic() + random.uniform(0, GONE_EVERY)  # 200 units started together: spread their checks
        try:
            self.resume(agent)
            while (not agent.await_submit(timeout=None) and unit.db_id in self.running_units
                   and time.time() - start < self.duration):
                agent.has_live_update.wait(WAIT)  # the event can be cleared with an item queued: poll too
                update = agent.get_live_update()
                if update is not None:
                    self.receive(agent, update)
                elif time.monotonic() >= gone_check:
                    raise_if_gone(agent)  # a closed page sends nothing: let Mephisto clear the unit
                    gone_check = time.monotonic() + GONE_EVERY
            # Mephisto marks a worker who left by setting the submit flag too: the loop ends between two
            # checks, and only raising tells Mephisto to clear the unit for someone else
            raise_if_gone(agent)
            remaining = self.duration - (time.time() - start)
            if remaining > 0 and unit.db_id in self.running_units:
                agent.await_submit(timeout=remaining)
        finally:
            self._settle(agent)
            self._expire_if_not_work(agent)
            if self.finished():  # everything is collected: close the slots nobody took
                expire_launched_units(self.task_run)

    def _expire_if_not_work(self, agent) -> None:
        """Mephisto marks every agent whose unit thread ends without an error completed, a run that stops
        included: an agent whose work goes on in a later one (the page comes back after a relaunch: work
        left, or finished work the page had not submitted when the run stopped) or that held none would
        be a second "completed" agent for one piece of work (paid twice by anyone approving from
        Mephisto's agents), or a "completed" one the provider never saw submitted. Expired instead; its
        time stays in the work's record."""
        data = agent.state.data
        unsubmitted = not self._submitted(agent) and (self.resumable(data) or agent.is_shutdown)
        if (unsubmitted or not self.holds_work(data)) and agent.get_status() not in AgentState.complete():
            expire_agent(agent)

    def _settle(self, agent) -> None:
        with self._owners_lock:
            registration = agent.state.data.get("registration")
            if registration and self._owners.get(registration) == agent.get_agent_id():
                del self._owners[registration]
        if agent.get_agent_id() in self._extra:
            return
        if agent.get_agent_id() not in self._to_submit:
            self.end(agent)
        data = agent.state.data
        done = self._submitted(agent)
        if self.sessions.open_work(data, agent, done) and not data.get("superseded_by"):
            # the page may come back (it re-registers by itself): it continues this work in a new agent
            forget_registration(agent)
        self.sessions.add(str(agent.worker_id), data.get("registration"), agent, data, done)  # open, or submitted

    @staticmethod
    def _submitted(agent) -> bool:
        """Did the page submit this unit? Its ``final_submission`` is stored, or about to be: Mephisto sets
        ``did_submit`` just before writing it, and also when the run stops (``is_shutdown``) or the worker
        leaves (the status changes), which are no submit."""
        return submitted(agent.state.data, agent) or (
            agent.did_submit.is_set() and not agent.is_shutdown and agent.get_status() == AgentState.STATUS_IN_TASK)

    def cleanup_unit(self, unit) -> None:
        agent = unit.get_assigned_agent()
        if agent is not None:
            try:
                self._settle(agent)
            except Exception:  # cleanup must not mask the unit's outcome
                logger.exception("settling unit %s", unit.db_id)

    def shutdown(self) -> None:
        if self._watch is not None:
            self._watch.set()
        super().shutdown()

    def run_onboarding(self, agent) -> None:
        """Onboarding happens inside the unit (a gold item or practice turn), not as a Mephisto stage."""

    def cleanup_onboarding(self, agent) -> None:
        pass
