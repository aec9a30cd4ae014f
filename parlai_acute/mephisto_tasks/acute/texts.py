"""Every word the ACUTE-Eval page shows a worker, rendered here from the task's configuration and state.

The page (``frontend/acute.js``) has no wording of its own: each view carries ``text``, made by
:func:`page_texts` from the question, the unit's plan (how many comparisons, whether a check
comparison comes first), the reason's minimum length and where the worker is, so what the page
says cannot disagree with what the server enforces; the server's refusals use the same strings.
Pure functions of plain values, no Mephisto.
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.texts import count, thanks

ONBOARDING_FAILED = (
    "You did not pass the check comparison (it has one clear answer, and yours was the other one), so "
    "this task has ended for you and you cannot take more comparisons in it. Thank you for your time.")
CHOOSE_SPEAKER = "Please choose one of the two speakers."
CHOOSE_ANSWER = "Please choose one of the two speakers, or say they are about the same or both bad."
#: the answers beside the two speakers when the task allows a tie (``allow_tie``), by the value the page sends
TIE_CHOICES = {"tie": "They are about the same", "both_bad": "Both are bad"}
INSTRUCTIONS = ("Read both conversations, then choose the highlighted speaker that fits the question better; "
                "the grey turns are their partner.")
STEPS = ("For each pair: read the question, read both conversations, choose the highlighted speaker who fits the "
         "question better, and explain your choice in a sentence.")


def reason_too_short(min_reason: int) -> str:
    return f"Please give a reason of at least {count(min_reason, 'character')}."


def intro(n: int, minutes: int, check_first: bool, allow_tie: bool = False) -> str:
    """Before the first comparison: how many, about how long, and the check when there is one."""
    text = (f"You will compare {count(n, 'pair')} of conversations, one pair at a time. It takes about "
            f"{count(minutes, 'minute')} in all.")
    if check_first:
        text += (" The first pair is a check with one clear answer: " +
                 ("any other answer" if allow_tie else "choosing the other speaker") + " ends this task for you.")
    return text


def progress(position: int | None, n: int, *, finished: bool, blocked: bool) -> str:
    if blocked:
        return "Ended"
    if finished:
        return "Done" if n else ""
    return f"Comparison {position} of {n}"


def side_label(number: int) -> str:
    """The name of the speaker judged in conversation ``number`` (1 or 2): the choice's label."""
    return f"Speaker {number}"


def page_texts(*, question: str, n: int, position: int | None, minutes: int, min_reason: int,
               check_first: bool, finished: bool = False, blocked: bool = False,
               blocked_message: str = "", side_labels: tuple = (side_label(1), side_label(2)),
               allow_tie: bool = False) -> dict:
    """Every string of one view of the page (``{missing}`` in ``reason_help`` is filled as the worker types);
    ``allow_tie``: the two answers beside the speakers (``ties``) and the wording that offers them."""
    return {
        "progress": progress(position, n, finished=finished, blocked=blocked),
        "intro_heading": "Before you start",
        "intro": intro(n, minutes, check_first, allow_tie),
        "steps": STEPS + (" If neither fits better, say they are about the same, or that both are bad."
                          if allow_tie else ""),
        "question": question,
        "instructions": INSTRUCTIONS,
        "ties": dict(TIE_CHOICES) if allow_tie else {},
        "sides": [f"Conversation {k} (judge {label})" for k, label in enumerate(side_labels, start=1)],
        "partner": "partner",
        "answer": "Your answer",
        "reason_label": "Please explain your choice:",
        "reason_help": f"At least {count(min_reason, 'character')} ({{missing}} more).",
        "submit": "Submit",
        "choose_speaker": CHOOSE_ANSWER if allow_tie else CHOOSE_SPEAKER,
        "reason_short": reason_too_short(min_reason),
        "done": blocked_message if blocked else thanks(f" ({count(n, 'comparison')} judged)"),
    }
