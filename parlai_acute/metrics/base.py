"""The two kinds of metric: scored per (reply, reference) pair, or over a whole corpus.

A :class:`PairMetric` gives one score per pair; :mod:`.score` then takes the first
reference (single-reference) or the best over references (multi-reference, Gupta et al.
2019). A :class:`CorpusMetric` pools sufficient statistics over all items, so its
multi-reference form uses every reference at once (sacrebleu's convention) and its
interval comes from resampling items. Each metric may give several columns at once
(BLEU-1..4 from one n-gram count), named by :attr:`columns`. An :class:`ItemMetric` is a
pair metric whose multi-reference score is its own (coco's BLEU, ROUGE-L, CIDEr and METEOR
1.5 use all references together, not the best single one): it scores whole items.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from parlai_acute.metrics.signature import Signature


class PairMetric:
    """Subclasses set ``columns`` and implement :meth:`pair_scores` and :meth:`signature`."""

    columns: tuple[str, ...] = ()

    def signature(self) -> Signature:
        raise NotImplementedError

    def pair_scores(self, replies: Sequence[str], references: Sequence[str]) -> dict[str, np.ndarray]:
        """One score per ``(replies[i], references[i])`` for every column, in [0, 1]
        (embedding cosines in [-1, 1]); an empty reply or reference scores 0."""
        raise NotImplementedError


class ItemMetric(PairMetric):
    """Subclasses implement :meth:`item_scores`; :mod:`.score` calls it with each item's first
    reference (single-reference) and with all of them (multi-reference)."""

    def item_scores(self, replies: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, np.ndarray]:
        """One score per ``(replies[i], references[i])`` (a list of references) for every column."""
        raise NotImplementedError

    def pair_scores(self, replies, references):
        return self.item_scores(replies, [[r] for r in references])


class CorpusMetric:
    """Subclasses implement :meth:`stats` (per-item sufficient statistics, summable) and
    :meth:`from_stats` (scores from the summed statistics)."""

    columns: tuple[str, ...] = ()

    def signature(self) -> Signature:
        raise NotImplementedError

    def stats(self, replies: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        raise NotImplementedError

    def item_stats(self, replies, references, pair_rows=None) -> np.ndarray:
        """:meth:`stats`, or the same taken from pair statistics already computed (``pair_rows``:
        each item's first pair row and number of pairs) when a subclass can."""
        return self.stats(replies, references)

    def from_stats(self, summed: np.ndarray) -> dict[str, float]:
        raise NotImplementedError
