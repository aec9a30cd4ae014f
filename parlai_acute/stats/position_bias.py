"""Position bias of a chooser: how often each position was picked, against a uniform choice.

Used for model judges (every item is shown in several orders, so an unbiased judge picks
each position equally often). Two positions: exact binomial test; more: chi-squared
goodness of fit. Picks from one judge are not independent across items of one
dialogue, so treat the p-value as a screen, not a precise error rate.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

from scipy.stats import binomtest, chisquare

__all__ = ["position_bias"]


def position_bias(picks: Iterable[tuple[int, int]]) -> list[dict]:
    """``picks``: (number of positions k, position picked). One summary per k."""
    by_k: dict = {}
    for k, position in picks:
        by_k.setdefault(int(k), Counter())[int(position)] += 1
    out = []
    for k, counts in sorted(by_k.items()):
        n = sum(counts.values())
        observed = [counts.get(p, 0) for p in range(k)]
        if k == 2:
            pvalue = float(binomtest(observed[0], n, 0.5).pvalue)
        else:
            pvalue = float(chisquare(observed).pvalue) if n else float("nan")
        out.append({"positions": k, "n": n, "picks": observed, "first_rate": observed[0] / n if n else float("nan"),
                    "expected_rate": 1 / k, "pvalue": pvalue})
    return out
