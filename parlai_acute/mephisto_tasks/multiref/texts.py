"""Every word the multi-reference page shows a worker, rendered here from the task's configuration and state.

The page (``frontend/multiref.js``) has no wording of its own: each view carries ``text``, made
by :func:`page_texts` from the collection mode (replies per worker), the reply length limits and
where the worker is (which context, how many replies written), so what the page says cannot
disagree with what the server enforces; the server's refusals and its warning use the same
strings. Pure functions of plain values, no Mephisto.
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.texts import count, thanks

REPEAT = "You already wrote this reply for this conversation; please write a different one."
FAST = ("You are entering replies very quickly. Please take the time to write a thoughtful reply that fits the "
        "conversation, different from your others.")
ALREADY = "That reply was already received; please continue."


def too_short(min_chars: int) -> str:
    return f"Please write a reply of at least {count(min_chars, 'character')}."


def too_long(max_chars: int) -> str:
    return f"Please keep your reply under {count(max_chars, 'character')}."


def intro(replies: int, n: int) -> str:
    """What to do, in the mode's numbers (one reply, or several different ones)."""
    what = ("Write one reply that B could say next: it should fit the conversation." if replies == 1 else
            f"Write {replies} different replies that B could say next: each should fit the conversation, and "
            f"together they should show the different ways B could reasonably answer.")
    return (f"You will see the start of {count(n, 'conversation')} between A and B, one at a time. {what} "
            f"Press Enter or \"Add reply\" after each one.")


def remaining(k: int) -> str:
    return f"{count(k, 'more reply', 'more replies')} to write for this conversation"


def page_texts(*, status: str, replies: int, n: int, position: int | None, left: int, min_chars: int,
               max_chars: int, written: int = 0, message: str = "") -> dict:
    """Every string of one view of the page."""
    return {
        "intro": intro(replies, n),
        "progress": f"Conversation {position} of {n}" if position is not None else "",
        "remaining": remaining(left),
        "speaker_a": "A", "speaker_b": "B",
        "label": "B's next turn:",
        "placeholder": "Write a reply as B\u2026",
        "add": "Add reply",
        "too_short": too_short(min_chars),
        "too_long": too_long(max_chars),
        "repeat": REPEAT,
        "done": thanks(f" ({count(written, 'reply', 'replies')} written)") if status == "complete" else message,
    }
