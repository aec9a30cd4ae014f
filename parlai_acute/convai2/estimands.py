"""What the ConvAI2 end-of-chat survey measures, defined once: Likert means, calibrated scores,
differences between models, and persona detection.

Every surface that reports a ConvAI2 number -- ``convai2 analyze``, its report, ``summary.csv`` and
the Python API (``result.summary()``) -- takes it from here:

* **mean score** (group: the question; comparison: the model): the mean of the model's ratings on
  the question, pooled over ratings; headline interval: the percentile bootstrap resampling whole
  workers (a worker's harshness runs through all their ratings); the t interval beside it in
  models.csv treats dialogues as independent and is secondary;
* **calibrated score**: the model's quality once each worker's bias is removed (Kulikov et al.
  2018: score = quality + worker bias + noise), the posterior mean, with its normal posterior
  interval; not bounded by the scale;
* **mean score difference** (comparison ``"B vs A"``, A the earlier name): B's score minus A's on a
  question, tested over workers: each worker who rated both contributes their own mean difference
  (their harshness cancels); where no worker rated both, B's mean minus A's, permuting whole workers;
* **persona detection rate** (comparison: the model): the share of the model's dialogues whose
  worker picked its persona out of two (chance: 1/2), with a Clopper-Pearson interval.

Nothing is excluded. The means and persona rates come cheaply from the table (:func:`estimates`);
the calibrated scores and the differences only from the analysis.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.convai2.analysis import ConvAI2Result
from parlai_acute.convai2.ratings import SCALE
from parlai_acute.stats.estimand import Estimand, headline_table, point_estimates

__all__ = ["MEAN", "CALIBRATED", "DIFFERENCE", "PERSONA", "ESTIMANDS", "label", "estimates", "headline"]

_SCALE = f"on the question's scale (ConvAI2: {SCALE[0]}-{SCALE[1]}; the range is that scale's)"
MEAN = Estimand(
    measure="mean score", quantity=f"mean of the model's ratings on the question, {_SCALE}",
    estimator="pooled over ratings (mean of scores)", unit="worker", low=float(SCALE[0]), high=float(SCALE[1]))
CALIBRATED = Estimand(
    measure="calibrated score", quantity="the model's quality on the question once each worker's bias is removed "
    "(score = quality + worker bias + noise, Kulikov et al. 2018)",
    estimator="posterior mean of the model's quality (flat prior; worker biases and noise normal)", unit="worker",
    low=float("-inf"), high=float("inf"))
DIFFERENCE = Estimand(
    measure="mean score difference", quantity="score of the model named first minus the other's on the question, "
    "pairs named 'B vs A' with B the later name alphabetically",
    estimator="mean over the workers who rated both of each one's mean difference; where no worker rated both, the "
              "difference of the pooled means", unit="worker",
    low=float(SCALE[0] - SCALE[1]), high=float(SCALE[1] - SCALE[0]))
PERSONA = Estimand(
    measure="persona detection rate", quantity="share of the model's dialogues whose worker picked the model's "
    "persona out of two (chance: 1/2)", estimator="pooled over dialogues (correct / dialogues asked)",
    unit="dialogue", low=0.0, high=1.0, exclusions="dialogues where persona detection was not asked")
ESTIMANDS = {e.measure: e for e in (MEAN, CALIBRATED, DIFFERENCE, PERSONA)}


def label(a: str, b: str) -> str:
    """The one name of the comparison of models ``a`` < ``b``: ``"b vs a"`` (B minus A)."""
    return f"{b} vs {a}"


def estimates(table: pd.DataFrame) -> pd.DataFrame:
    """The mean score of every (question, model) and every model's persona detection rate, from a
    ratings table (no interval; the calibrated scores and differences need the analysis)."""
    scores = pd.DataFrame({"group": table["question"].astype(str), "comparison": table["model"].astype(str),
                           "measure": MEAN.measure, "value": table["score"].astype(float),
                           "cluster": table["worker"].astype(str)})
    asked = table.dropna(subset=["persona_choice_correct"]).groupby("dialogue", sort=True).agg(
        model=("model", "first"), correct=("persona_choice_correct", "first"))
    persona = pd.DataFrame({"group": "", "comparison": asked["model"].astype(str), "measure": PERSONA.measure,
                            "value": asked["correct"].astype(float), "cluster": asked.index.astype(str)})
    return point_estimates(pd.concat([scores, persona], ignore_index=True))


def _why(low: float, high: float, note: str = "") -> str:
    return "" if low == low and high == high and high > low else (note or "no interval can be given")


def headline(result: ConvAI2Result) -> pd.DataFrame:
    """The analysis' reported estimates with their headline intervals, in the estimands table's shape."""
    names = result.config.interval_names()
    rows = []
    for m in result.likert.itertuples(index=False):
        base = {"group": m.question, "comparison": m.model, "n": int(m.ratings), "clusters": int(m.workers)}
        rows.append({**base, "measure": MEAN.measure, "estimate": float(m.mean), "low": float(m.boot_low),
                     "high": float(m.boot_high), "interval": names["workers"],
                     "why_no_interval": _why(m.boot_low, m.boot_high, m.boot_note)})
        rows.append({**base, "measure": CALIBRATED.measure, "estimate": float(m.calibrated),
                     "low": float(m.calibrated_low), "high": float(m.calibrated_high), "interval": names["calibrated"],
                     "why_no_interval": _why(m.calibrated_low, m.calibrated_high, "no posterior spread")})
    ratings = result.likert.set_index(["question", "model"])["ratings"]
    for d in result.differences.itertuples(index=False):
        rows.append({"group": d.question, "comparison": label(d.model_a, d.model_b), "measure": DIFFERENCE.measure,
                     "estimate": float(d.difference), "n": int(ratings[(d.question, d.model_a)] +
                                                                ratings[(d.question, d.model_b)]),
                     "clusters": int(d.workers), "low": float(d.ci_low), "high": float(d.ci_high),
                     "interval": names["differences"], "why_no_interval": _why(d.ci_low, d.ci_high, d.reason)})
    for p in result.persona.itertuples(index=False):
        rows.append({"group": "", "comparison": p.model, "measure": PERSONA.measure, "estimate": float(p.rate),
                     "n": int(p.dialogues), "clusters": int(p.dialogues), "low": float(p.ci_low),
                     "high": float(p.ci_high), "interval": names["persona"],
                     "why_no_interval": _why(p.ci_low, p.ci_high)})
    return headline_table(rows)
