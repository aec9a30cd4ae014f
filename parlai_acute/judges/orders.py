"""Position swap: every multi-option item is judged in several orders, and the verdicts resolve into one.

Language-model judges prefer positions (Zheng et al. 2023, "Judging LLM-as-a-judge"; Wang
et al. 2023, "Large language models are not fair evaluators"), so an item with k options
is shown in ``rotations`` (k orders, each option once in each position: for a pair, both
orders) or ``all`` k! orders. Verdicts are mapped back from positions to options, then:

* ``consistent``: every order gave the same verdict: that is the judge's verdict;
* ``inconsistent``: the verdict changed with the order (``follows_position`` when it
  was the same *position* every time: the judge picked a place, not an option). Rule
  ``drop`` (default) leaves the item out of the judge's table; rule ``tie`` keeps it as a
  tie where the protocol's table can hold one (ACUTE: one judgment with outcome tie; see the
  protocol module);
* ``missing``: some order has no parseable answer after all retries: the item is left
  out, never guessed from the other orders.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Optional, Sequence

ORDER_MODES = ("rotations", "all", "none")
RULES = ("drop", "tie")
CONSISTENT, INCONSISTENT, MISSING = "consistent", "inconsistent", "missing"


def orders(k: int, mode: str = "rotations", offset: int = 0, seed: int = 0) -> list:
    """The display orders of an item with ``k`` options: tuples giving the option shown at each position.

    ``offset`` (the item's index) rotates which order comes first, so that "the first
    order" is not always the canonical one; ``none``: one order, drawn at random per item
    (seeded), as the human task randomises left and right -- no swap, so a position bias
    goes undetected and adds noise.
    """
    if mode not in ORDER_MODES:
        raise ValueError(f"unknown order mode {mode!r}")
    base = tuple(range(k))
    if k <= 1:
        return [base]
    if mode == "all":
        found = list(itertools.permutations(base))
    else:
        found = [base[i:] + base[:i] for i in range(k)]
    if mode == "none":
        return [random.Random(f"{seed}:{offset}").choice(found)]
    start = offset % len(found)
    return found[start:] + found[:start]


def to_options(value, order: Sequence[int], kind: str):
    """A verdict in positions (0-based) -> the same verdict in option indices (an extra label
    such as ACUTE's "tie" picks no position and stays as it is)."""
    if kind == "one":
        return order[value] if isinstance(value, int) else value
    if kind == "any":
        return tuple(sorted(order[p] for p in value))
    return value  # yes_no: nothing to map


@dataclass
class Resolution:
    status: str  # consistent | inconsistent | missing
    value: object = None  # the verdict in option indices (consistent only)
    follows_position: bool = False


def resolve(verdicts: Sequence[Optional[object]], positions: Sequence[Optional[object]]) -> Resolution:
    """``verdicts``: per order, the verdict in option indices (None: missing); ``positions``: the same in positions."""
    if any(v is None for v in verdicts):
        return Resolution(MISSING)
    if all(v == verdicts[0] for v in verdicts):
        return Resolution(CONSISTENT, verdicts[0])
    return Resolution(INCONSISTENT, follows_position=all(p == positions[0] for p in positions))
