"""The judge's answer format and its strict parser.

A reply is accepted only in this form (case of the keywords and surrounding ``**`` markup
aside), with the ``Answer:`` line first::

    Answer: 2
    Reason: Speaker 2 asks questions and remembers what was said.

``one``: exactly one of the labels; ``any``: labels separated by commas, or ``none``;
``yes_no``: yes or no. Anything else -- prose around the answer, two answers, a label that
was not offered, a missing required reason -- is unparseable: the runner asks again, and
after the last retry records the item as missing. Nothing is ever guessed from prose.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

_ANSWER = re.compile(r"^\**\s*answer\s*:\s*\**\s*(?P<value>[^*]*?)\s*\**\s*\.?\s*$", re.IGNORECASE)
_REASON = re.compile(r"^\**\s*reason\s*:\s*\**\s*(?P<value>.*?)\s*$", re.IGNORECASE)
MIN_REASON_CHARS = 3


@dataclass(frozen=True)
class Parsed:
    """``value``: a label (one), a sorted tuple of labels (any) or a bool (yes_no)."""

    value: object
    reason: str


def parse_value(text: str, kind: str, labels: Sequence[str]):
    """The value of an ``Answer:`` field, or None if it is not exactly one allowed answer."""
    text = text.strip().lower()
    if kind == "one":
        return text if text in labels else None
    if kind == "yes_no":
        return {"yes": True, "no": False}.get(text)
    if kind == "any":
        if text == "none":
            return ()
        parts = [p.strip() for p in text.split(",")]
        if not all(parts) or len(set(parts)) != len(parts) or not all(p in labels for p in parts):
            return None
        return tuple(sorted(parts, key=list(labels).index))
    raise ValueError(f"unknown answer kind {kind!r}")


def parse_reply(text: str, kind: str, labels: Sequence[str], reason_required: bool) -> Optional[Parsed]:
    """The parsed reply, or None when it does not follow the format exactly."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        return None
    match = _ANSWER.match(lines[0])
    if not match:
        return None
    value = parse_value(match.group("value"), kind, labels)
    if value is None:
        return None
    reason = ""
    if len(lines) > 1:
        found = _REASON.match(lines[1])
        if not found:
            return None  # something other than a reason follows the answer
        reason = " ".join([found.group("value")] + lines[2:]).strip()
    if reason_required and len(re.findall(r"\w", reason)) < MIN_REASON_CHARS:
        return None
    return Parsed(value, reason)


REMINDER = ("Your reply did not follow the format. Reply again with exactly two lines, the first "
            "'Answer: ' followed by your answer, the second 'Reason: ' followed by one short sentence.")
