"""What a report's numbers are, said at the top of every report: its estimands.

A reader who sees "61.8%" must first know whose share of what it is, how it was estimated and
over which independent units, and what was left out: the definitions each protocol declares once
(:class:`parlai_acute.stats.estimand.Estimand`). Every protocol's report shows them through
:func:`estimands_section`, so they read alike everywhere. The report layer knows no protocol: the
caller hands over its Estimand objects.
"""
from __future__ import annotations

import math
from typing import Iterable

import pandas as pd

from parlai_acute.report.document import Report, Section
from parlai_acute.stats.estimand import Estimand

__all__ = ["estimands_section", "range_text"]


def range_text(low: float, high: float) -> str:
    """An estimand's range in words ("0 to 1", "unbounded")."""
    if not (math.isfinite(low) or math.isfinite(high)):
        return "unbounded"
    if not math.isfinite(high):
        return f"{low:g} or more"
    if not math.isfinite(low):
        return f"{high:g} or less"
    return f"{low:g} to {high:g}"


def estimands_section(report: Report, estimands: Iterable[Estimand], heading: str = "What is measured") -> Section:
    """A section first among the report's sections (under its title, banners and introduction):
    one row per estimand -- measure, quantity (direction included), estimator, independent unit,
    range and exclusions -- also exported as ``tables/estimands.tex`` and ``.md``."""
    rows = [{"measure": e.measure, "quantity": e.quantity, "estimator": e.estimator, "unit": e.unit,
             "range": range_text(e.low, e.high), "exclusions": e.exclusions} for e in estimands]
    section = report.section(heading)
    report.sections.insert(0, report.sections.pop())  # near the top, wherever the protocol adds it
    section.note("Every number below estimates one of these; its interval, where there is one, treats the units "
                 "as independent and the observations within a unit as not.")
    section.table(pd.DataFrame(rows, columns=["measure", "quantity", "estimator", "unit", "range", "exclusions"]),
                  "estimands", caption="Estimands: what each reported number estimates")
    return section
