"""The "Methods" paragraph that ends every report: what a researcher pastes into a paper.

It names each test, the interval, the multiple-comparison correction and the unit of
resampling, with the seed and the package version, so that a reader can redo the
analysis. Built from words the analysis already uses (the ``method`` of a
:class:`~parlai_acute.stats.inference.ClusterTest`), never from a second description.
"""
from __future__ import annotations

import parlai_acute
from parlai_acute.stats.inference import min_clusters

__all__ = ["methods_paragraph"]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or text.endswith(".") else text + "."


def methods_paragraph(*, data: str, unit: str, comparison: str, alpha: float, confidence: float,
                      permutations: int, seed: int, family: str = "each family of comparisons",
                      omnibus: str = "", secondary: str = "", extra: str = "", clusters_needed: int | None = None,
                      version: str | None = None) -> str:
    """One paragraph. ``data``: what was analysed ("per-turn choices of 3 models over 40
    dialogues"); ``unit``: the cluster ("dialogue"); ``comparison``: the effect tested
    ("the difference in pick rates"); ``omnibus``/``secondary``/``extra``: further
    sentences (e.g. the exact tests kept beside, which assume independent judgments)."""
    need = clusters_needed if clusters_needed is not None else min_clusters(alpha)
    parts = [
        f"We analysed {data} with parlai_acute {version or parlai_acute.__version__}.",
        f"Because judgments within a {unit} are not independent, {comparison} was tested with a two-sided "
        f"randomisation test at the level of whole {unit}s (the unit of resampling): a sign-flip test of the "
        f"{unit} totals when both models were judged within each {unit}, and a permutation of the models of whole "
        f"{unit}s when each {unit} saw one model; all arrangements were enumerated when there were at most "
        f"{permutations:,}, otherwise {permutations:,} random ones were drawn (seed {seed}), and mid-p-values are "
        f"reported (arrangements as extreme as the data by chance count half; the observed arrangement and its "
        f"mirror images, the same outcome, count fully, so no mark fires above its level at any size).",
        f"P-values were Holm-adjusted within {family}; * marks p < {alpha:g} and ** p < {alpha / 5:g} after "
        f"adjustment.",
        f"{100 * confidence:g}% confidence intervals of differences are the inverted tests (every shift the same "
        f"test does not reject at {1 - confidence:g}); none is given when it would have no width.",
        f"With fewer than {need} {unit}s no test can reach p < {alpha:g}, so such comparisons carry no mark.",
    ]
    parts += [_sentence(s) for s in (omnibus, secondary, extra) if s]
    return " ".join(parts)
