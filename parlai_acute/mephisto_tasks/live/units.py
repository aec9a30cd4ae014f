"""Ending a run when its work is done: close the unit slots nobody needs any more (shared by all tasks).

Tasks open a few more units than they need (workers leave, fail onboarding); once the
scheduler has everything, the spare ones are expired so Mephisto ends the run. Units come
back to "launched" *after* a worker who disconnected is cleaned up, so a check at the end
of each unit is not enough: a small watcher thread checks every few seconds as well.
"""
from __future__ import annotations

import threading
from typing import Callable


_EXPIRING: dict[str, threading.Lock] = {}
_EXPIRING_LOCK = threading.Lock()


def expire_launched_units(task_run) -> int:
    """Expire every unit of ``task_run`` still waiting for a worker; returns how many.

    One pass at a time per run: a pass reads every unit's status (several database queries each),
    and when the last judgment of a 200-worker run lands, 200 unit threads end at once; each
    walking all units behind Mephisto's one database lock kept the launcher busy for minutes
    after SIGTERM. A call while a pass runs returns 0 at once (that pass, or the watcher's next
    one, expires what is left)."""
    from mephisto.data_model.constants.assignment_state import AssignmentState

    with _EXPIRING_LOCK:
        lock = _EXPIRING.setdefault(str(task_run.db_id), threading.Lock())
    if not lock.acquire(blocking=False):
        return 0
    try:
        expired = 0
        for unit in task_run.get_units():
            if unit.get_status() == AssignmentState.LAUNCHED:
                unit.expire()
                expired += 1
        return expired
    finally:
        lock.release()


#: seconds a run whose stop rule fired keeps serving once its last unit in progress is done, so a
#: worker who opens the task then is told there is no more work instead of finding no server
STOP_LINGER_S = 30.0


def say_no_more_work(task_run) -> bool:
    """From now on, a worker Mephisto gives no unit is told :data:`~.texts.NO_WORK` ("There is no more
    work for you in this task"), not "All the work in this task is taken right now. Please try again
    later": the page reads what to say from the router's ``task_config.json``
    (:meth:`..task_blueprint.TaskBlueprint.get_frontend_args`), rewritten here in the running local
    router. Returns False where there is no such file (another architect: its page keeps the
    launch-time words)."""
    import json
    import os

    from mephisto.operations.datatypes import WorkerFailureReasons

    from parlai_acute.files import atomic_write
    from parlai_acute.mephisto_tasks.live.texts import NO_WORK

    # where the local router runs (parlai_acute.compat's mephisto-local-server-dir: beside the run's build)
    path = os.path.join(task_run.get_run_dir(), "local_server", "server", "static", "task_config.json")
    try:
        with open(path, encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError):
        return False
    reasons = config.setdefault("texts", {}).setdefault("failure_reasons", {})
    if reasons.get(WorkerFailureReasons.NO_AVAILABLE_UNITS) == NO_WORK:
        return True
    reasons[WorkerFailureReasons.NO_AVAILABLE_UNITS] = NO_WORK
    with atomic_write(path) as fh:
        json.dump(config, fh)
    return True


def watch_completion(task_run, complete: Callable[[], bool], every: float = 2.0) -> threading.Event:
    """Expire spare units whenever ``complete()`` holds; set the returned event to stop watching."""
    stop = threading.Event()

    def loop():
        while not stop.wait(every):
            try:
                if complete():
                    expire_launched_units(task_run)
            except Exception:  # the database may be closing at shutdown: try again next time
                continue

    threading.Thread(target=loop, name="expire-spare-units", daemon=True).start()
    return stop


def raise_if_gone(agent) -> None:
    """Raise Mephisto's own exception when ``agent``'s worker has left (disconnect, time-out, return).

    A live runner's loop only waits for packets and the submit, which never come from a closed
    page; raising lets Mephisto clear the unit so it can be taken again (or expired).
    """
    from mephisto.abstractions._subcomponents.agent_state import AgentState
    from mephisto.data_model.exceptions import AgentDisconnectedError, AgentReturnedError, AgentTimeoutError

    status = agent.get_status()
    if status == AgentState.STATUS_DISCONNECT:
        raise AgentDisconnectedError(agent.db_id)
    if status == AgentState.STATUS_RETURNED:
        raise AgentReturnedError(agent.db_id)
    if status in (AgentState.STATUS_TIMEOUT, AgentState.STATUS_EXPIRED):
        raise AgentTimeoutError(0, agent.db_id)


def expire_agent(agent) -> None:
    """Mark ``agent`` expired in Mephisto's database only: ``agent.update_status`` would also push the
    status to the page, which would then say "no longer available" while it is about to continue
    its work in another agent (or says "no more work" already)."""
    from mephisto.abstractions._subcomponents.agent_state import AgentState

    agent.db.update_agent(agent.db_id, status=AgentState.STATUS_EXPIRED)
    agent.db_status = AgentState.STATUS_EXPIRED
