"""Every word the SSA labelling page shows a worker, rendered here from the task's configuration and state.

The page (``frontend/ssa_label.js``) has no wording of its own: each view carries ``text``, made
by :func:`page_texts` from the unit's plan (how many items, whether a gold check item comes first),
the item's source (a static context, or a turn of a real conversation) and the step the server
holds the worker at (first or second question), so what the page says cannot disagree with what
the server enforces; the server's refusals use the same strings. Meena's two questions
(Adiwardana et al. 2020). Pure functions of plain values, no Mephisto.
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.texts import count, thanks
from parlai_acute.ssa.questions import SENSIBLE as SENSIBLE_QUESTION  # the protocol's definition
from parlai_acute.ssa.questions import SENSIBLE_HELP, SPECIFIC_HELP
from parlai_acute.ssa.questions import SPECIFIC as SPECIFIC_QUESTION

FIRST_MISSING = "Please answer the first question: does the response make sense?"
SECOND_MISSING = "Please answer the second question: is the response specific?"
NOT_SENSIBLE_SPECIFIC = "A response that does not make sense cannot be specific; please answer again."
FAILED = ("Sorry, you said a response makes sense that plainly does not, so you cannot take part in this task. "
          "Thank you for your time.")


def intro(n: int, check_first: bool) -> str:
    text = (f"You will label {count(n, 'response')}, one at a time. Each shows a short conversation between A "
            f"and B, then B's response. Answer two questions about the response, in order: does it make sense? "
            f"and, only if it does, is it specific to the conversation? There are no trick questions: go with "
            f"your first impression as a reader.")
    if check_first:
        text += (" The first one is a check with one clear answer: saying that a response makes sense when it "
                 "plainly does not ends this task for you.")
    return text


def source_note(source: str) -> str:
    """Where the conversation comes from: a turn of a real chat is judged in that chat's context."""
    if source in ("interactive", "log"):
        return "This conversation is part of a longer chat; judge B's response as the next turn of it."
    return ""


def progress(position: int | None, n: int) -> str:
    return f"Item {position} of {n}" if position is not None else ""


def done(status: str, labelled: int, message: str = "") -> str:
    if status == "complete":
        return thanks(f" ({count(labelled, 'response')} labelled)")
    return message


def page_texts(*, status: str, n: int, position: int | None, step: int = 1, check_first: bool = False,
               source: str = "static", labelled: int = 0, message: str = "") -> dict:
    """Every string of one view of the page."""
    return {
        "intro": intro(n, check_first),
        "source": source_note(source),
        "progress": progress(position, n),
        "sensible": SENSIBLE_QUESTION, "sensible_help": SENSIBLE_HELP,
        "specific": SPECIFIC_QUESTION, "specific_help": SPECIFIC_HELP,
        "sensible_yes": "Yes, it makes sense", "sensible_no": "No, it does not",
        "specific_yes": "Yes, it is specific", "specific_no": "No, it is generic",
        "step": ("You said the response makes sense. Now the second question:" if step == 2 else ""),
        "change_first": "Change my first answer",
        "speaker_a": "A", "speaker_b": "B", "response": "B (response)",
        "done": done(status, labelled, message),
    }
