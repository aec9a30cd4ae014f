"""The live loop every task of this package runs per unit: packets in, views out, clean ending.

Mephisto calls ``run_unit`` in a thread per unit. Each task's runner only says what a packet
does (:meth:`LiveRunner.handle`) and how a unit's work is settled when it ends, finished or
not (:meth:`LiveRunner.end`: give back what was handed out, mark partial work); this base
class owns the rest, once for every task: waiting for packets or the submit, noticing a
worker who left (so Mephisto clears the unit), settling the unit exactly once whether it
ended in ``run_unit`` or in Mephisto's cleanup, and expiring spare units when the task's
scheduler has everything (also from a watcher thread: units come back after cleanups).
"""
from __future__ import annotations

import logging
import time

from mephisto.abstractions.blueprint import TaskRunner

from parlai_acute.mephisto_tasks.units import expire_launched_units, raise_if_gone, watch_completion

logger = logging.getLogger(__name__)
WAIT = 0.25  # seconds between checks for a submitted unit while idle (a packet wakes the loop at once)


class LiveRunner(TaskRunner):
    """Subclasses set ``self.scheduler`` (with ``complete()``) before calling :meth:`start_watching`,
    and implement :meth:`handle` and :meth:`end`."""

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        self.duration = task_run.get_task_args().assignment_duration_in_seconds
        self._watch = None

    def start_watching(self) -> None:
        """Expire spare units whenever the scheduler is complete (call once the scheduler exists)."""
        self._watch = watch_completion(self.task_run, self.scheduler.complete)

    # ------------------------------------------------------------------ for subclasses
    def handle(self, agent, update: dict) -> None:
        """One packet from the page: validate, store, and ``agent.observe`` the new view."""
        raise NotImplementedError

    def end(self, agent) -> None:
        """The unit is over: settle its work (idempotent; called from run_unit and cleanup)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ mephisto hooks
    def run_unit(self, unit, agent) -> None:
        start = time.time()
        try:
            while (not agent.await_submit(timeout=None) and unit.db_id in self.running_units
                   and time.time() - start < self.duration):
                agent.has_live_update.wait(WAIT)  # the event can be cleared with an item queued: poll too
                update = agent.get_live_update()
                if update is not None:
                    self.handle(agent, update)
                else:
                    raise_if_gone(agent)  # a closed page sends nothing: let Mephisto clear the unit
            remaining = self.duration - (time.time() - start)
            if remaining > 0 and unit.db_id in self.running_units:
                agent.await_submit(timeout=remaining)
        finally:
            self.end(agent)
            if self.scheduler.complete():  # everything is collected: close the slots nobody took
                expire_launched_units(self.task_run)

    def cleanup_unit(self, unit) -> None:
        agent = unit.get_assigned_agent()
        if agent is not None:
            try:
                self.end(agent)
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
