"""What a multi-reference collection measures, defined once: per collection mode, how diverse its
replies are and how they relate to the single reference the dataset had.

Every surface that reports a multi-reference number -- ``multiref analyze``, its report,
``summary.csv`` and the Python API (``result.summary()``) -- takes it from here. The comparison is
the collection mode (4R1W, 2R2W, 1R4W or any name); each estimate is the mean over the mode's
contexts of a per-context value, with a percentile bootstrap interval resampling contexts:

* **Self-BLEU-4**: sentence BLEU-4 of each collected reply against the other replies of its context
  (lower: more diverse); a context with one reply has none, and is left out;
* **Gt-BLEU-2**, **Gt-BLEU-4**: sentence BLEU of each collected reply against the context's original;
* **unique n-grams** (group: the order, ``"1-grams"`` .. ``"4-grams"``): distinct n-grams of the
  context's collected replies together (**collected**), of its original (**original**), and those
  collected that the original lacks (**new**).

BLEU is sacrebleu's, as :class:`parlai_acute.metrics.reference.SentenceBleu` makes it (its signature
is in the outputs). The estimates need BLEU over every reply, so there is no ``estimates(table)``:
the analysis gives them.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.multiref.analysis import ORDERS, MultirefResult
from parlai_acute.stats.estimand import Estimand, headline_table

__all__ = ["SELF_BLEU", "GT_BLEU2", "GT_BLEU4", "UNIQUE_COLLECTED", "UNIQUE_ORIGINAL", "UNIQUE_NEW", "ESTIMANDS",
           "COLUMNS", "headline"]

_ESTIMATOR = "mean over the mode's contexts of each context's value"
_INF = float("inf")
SELF_BLEU = Estimand(
    measure="Self-BLEU-4", quantity="sentence BLEU-4 of each collected reply against the other collected replies of "
    "its context, averaged (lower: more diverse)", estimator=_ESTIMATOR, unit="context", low=0.0, high=1.0,
    exclusions="contexts with a single collected reply (nothing to compare it with)")
GT_BLEU2 = Estimand(
    measure="Gt-BLEU-2", quantity="sentence BLEU-2 of each collected reply against the context's original reply, "
    "averaged", estimator=_ESTIMATOR, unit="context", low=0.0, high=1.0)
GT_BLEU4 = Estimand(
    measure="Gt-BLEU-4", quantity="sentence BLEU-4 of each collected reply against the context's original reply, "
    "averaged", estimator=_ESTIMATOR, unit="context", low=0.0, high=1.0)
UNIQUE_COLLECTED = Estimand(
    measure="unique n-grams, collected", quantity="distinct n-grams (lowercase word tokens) of the context's "
    "collected replies together", estimator=_ESTIMATOR, unit="context", low=0.0, high=_INF)
UNIQUE_ORIGINAL = Estimand(
    measure="unique n-grams, original", quantity="distinct n-grams (lowercase word tokens) of the context's original "
    "reply", estimator=_ESTIMATOR, unit="context", low=0.0, high=_INF)
UNIQUE_NEW = Estimand(
    measure="unique n-grams, new", quantity="distinct n-grams of the collected replies that the original reply lacks",
    estimator=_ESTIMATOR, unit="context", low=0.0, high=_INF)
ESTIMANDS = {e.measure: e for e in (SELF_BLEU, GT_BLEU2, GT_BLEU4, UNIQUE_COLLECTED, UNIQUE_ORIGINAL, UNIQUE_NEW)}
#: the modes table's column behind each (estimand, group)
COLUMNS = {"self_bleu4": (SELF_BLEU, ""), "gt_bleu2": (GT_BLEU2, ""), "gt_bleu4": (GT_BLEU4, ""),
           **{f"unique{n}_{kind}": (estimand, f"{n}-grams") for n in ORDERS
              for kind, estimand in (("collected", UNIQUE_COLLECTED), ("original", UNIQUE_ORIGINAL),
                                     ("new", UNIQUE_NEW))}}


def headline(result: MultirefResult) -> pd.DataFrame:
    """Every mode's measures with their bootstrap intervals over contexts, in the estimands table's
    shape; where there is no interval or no value, the analysis' reason in words."""
    c = result.config
    interval = f"{100 * c['confidence']:g}% percentile bootstrap over contexts ({c['bootstrap']} resamples, seed " \
               f"{c['seed']})"
    reasons = {(r.mode, r.measure): r.reason for r in result.reasons.itertuples(index=False)}
    rows = []
    for m in result.modes.to_dict("records"):
        for column, (estimand, group) in COLUMNS.items():
            rows.append({"group": group, "comparison": m["mode"], "measure": estimand.measure,
                         "estimate": float(m[column]), "n": int(m["contexts"]), "clusters": int(m["contexts"]),
                         "low": float(m[f"{column}_low"]), "high": float(m[f"{column}_high"]), "interval": interval,
                         "why_no_interval": reasons.get((m["mode"], column), "")})
    return headline_table(rows)
