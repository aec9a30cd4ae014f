"""E-mail addresses and phone numbers in free text: flagged for the researcher, never changed
(a model's made-up number or a worker's own address: a person decides what to do with it)."""
from __future__ import annotations

import re

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
# 7 to 15 digits, with the usual separators and an optional country code; not a bare year or id
PHONE = re.compile(r"(?<![\w.])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,4}(?![\w.])")


_NOT_PHONES = re.compile(r"(19|20)\d{2}[\s.-](19|20)\d{2}"          # a span of years
                         r"|\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}")  # a date


def _phone(match: str) -> bool:
    digits = re.sub(r"\D", "", match)
    return 7 <= len(digits) <= 15 and not _NOT_PHONES.fullmatch(match.strip())


def scan(text: str) -> list[tuple[str, str]]:
    """(kind, matched text) of each e-mail address and phone number in ``text``."""
    text = str(text or "")
    found = [("email", m.group(0)) for m in EMAIL.finditer(text)]
    without = EMAIL.sub(" ", text)
    found += [("phone", m.group(0)) for m in PHONE.finditer(without) if _phone(m.group(0))]
    return found
