"""What every live page says about the connection, other tabs, saving and the end of work, in one place.

These lines are the same for all four tasks (ACUTE-Eval, per-turn, SSA labelling, multi-reference)
and must be on the page before the task server answers (a preview, a server that is down), so
they are written into the page when it is built (:func:`..page_builder.page_html`) and come again
with the task's configuration (``task_config.json``, see
:meth:`..task_blueprint.TaskBlueprint.get_frontend_args`); ``MephistoLive.say(key)`` (the shared
page code, ``frontend/mephisto_live.js``) gives them to the pages.
Each task's own words are in its ``texts`` module and reach the page in every view's ``text``.
Pure values, no Mephisto.
"""
from __future__ import annotations

NO_WORK = "There is no more work for you in this task. Thank you!"
UNKNOWN_ACTION = "Unknown action; please reload the page."
FAILED = "Something went wrong on our side; please try again."
STALE_ITEM = "That item is already done; please continue with the one shown."
NOT_ELIGIBLE = "Sorry, you cannot take part in this task. Thank you for your time."  # a failed check, by default


# What Mephisto says when it gives a worker no unit (``WorkerFailureReasons`` in mephisto/operations/
# datatypes.py, sent by worker_pool.py as ``failure_reason``) -> what our pages say instead. Mephisto's
# lines end in "..." and speak of "tasks" and "sessions"; a worker is told plainly what happened and what
# to do. Keys are Mephisto's exact lines (tests/mephisto/test_live_texts.py checks they still are).
FAILURE_REASONS = {
    # blocked, failed a check, or lacking a required qualification
    "You are not currently qualified to work on this task...": NOT_ELIGIBLE,
    # the task is full: every unit is taken or done
    "There is currently no available work, please try again later...":
        "All the work in this task is taken right now. Please try again later, or return this assignment.",
    "You are currently working on too many tasks concurrently to accept another, please finish your current "
    "work.": "You have too many of these assignments open at once; please finish one, then reload this page.",
    "You have already completed the maximum amount of tasks the requester has set for this task.":
        "You have done as many assignments of this task as one worker may. Thank you!",
    # finished already, or away so long that the unit was cleared
    "You appear to have already completed this task, or have disconnected long enough for your session to "
    "clear...": ("This assignment is no longer open: it was finished, or this page was disconnected for too "
                 "long. Everything you submitted is saved; you can close this page."),
}
# any other reason (a newer Mephisto's) is not shown as it is: its wording was not written for workers
FAILURE_UNKNOWN = "This task cannot be opened for you right now. Please try again later, or return this assignment."


def failure_text(reason: str | None) -> str:
    """The line a worker is shown when Mephisto gives them no unit for ``reason`` (its
    ``failure_reason``): ours for a known reason, a plain generic line for any other, and
    :data:`NO_WORK` when it gave none. ``MephistoLive`` does the same lookup with the table
    :func:`live_texts` sends it."""
    if not reason:
        return NO_WORK
    return FAILURE_REASONS.get(reason, FAILURE_UNKNOWN)


def thanks(what: str = "") -> str:
    """The last line of a finished unit; ``what`` (e.g. " (3 responses labelled)") says what was saved."""
    return f"Thank you! Your answers are saved{what}. You can close this page."


LIVE = {
    "reconnecting": "Reconnecting to the task server\u2026 Your work so far is saved; please keep this page open.",
    "elsewhere": ("This assignment is open in another tab or window. Please continue there, or click "
                  "\"Continue here\" to work in this tab instead."),
    "continue_here": "Continue here",
    "unreachable": "Could not reach the task server; please reload the page.",
    "save_failed": "Could not reach the server; please retry in a moment.",
    "saving": "Saving\u2026",
    "sending": "Sending\u2026",
    "preview": "Preview: accept the task to start.",
    "gone": "This task is no longer available ({status}). Everything you submitted is saved.",
    "no_work": NO_WORK,
    # a page of an assignment whose work was submitted, registering again (after a relaunch)
    "already_submitted": ("You have already submitted this assignment. Everything you submitted is saved; you can "
                          "close this page."),
    "failure_reasons": FAILURE_REASONS,
    "failure_unknown": FAILURE_UNKNOWN,
}


def live_texts() -> dict:
    """The shared lines, as the page reads them from the task configuration (a copy, nested ones too)."""
    return {key: dict(value) if isinstance(value, dict) else value for key, value in LIVE.items()}


def count(n: int, one: str, many: str | None = None) -> str:
    """``"1 pair"`` / ``"3 pairs"``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
