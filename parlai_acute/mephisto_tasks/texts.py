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
}


def live_texts() -> dict:
    """The shared lines, as the page reads them from the task configuration."""
    return dict(LIVE)


def count(n: int, one: str, many: str | None = None) -> str:
    """``"1 pair"`` / ``"3 pairs"``."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
