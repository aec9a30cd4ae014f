"""What a protocol gives the judge: items, and how one item is shown in one order.

A protocol's judge adapter (``acute/judge.py``, ``per_turn/judge.py``, ``ssa/judge.py``, each in
its protocol's package; the shared modules here never import them)
turns its stored data into :class:`Item` objects, renders an item in a given order with
one of its templates (:meth:`Protocol.render`), and turns the resolved verdicts back
into rows of its own tidy table, so that its existing analysis reads them unchanged.
Everything else -- orders, cache, retries, parsing, consistency -- is shared
(:mod:`.runner`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

from parlai_acute.judges.templates import Template


@dataclass
class Item:
    """One question about one set of options.

    ``options``: identities of the things compared (model names, candidate ids), in a
    canonical order; ``gold``: for onboarding items, the verdict (option index) that is
    right; ``data``: what the protocol needs to render it and to write rows.
    """

    key: str
    options: list
    template: Template
    data: dict = field(default_factory=dict)
    gold: Optional[object] = None

    @property
    def kind(self) -> str:
        return self.template.answer


class Protocol:
    """Base class of protocol modules."""

    name = ""

    def render(self, item: Item, order: Sequence[int]) -> str:
        """The user message showing ``item`` with option ``order[p]`` at position ``p``."""
        raise NotImplementedError

    @staticmethod
    def labels(item: Item) -> list:
        """The answer labels of the positions: "1".."k" (yes_no: "yes", "no"), then the template's
        ``extra_labels`` (ACUTE's "tie")."""
        if item.kind == "yes_no":
            return ["yes", "no"]
        return [str(p + 1) for p in range(len(item.options))] + list(item.template.extra_labels)
