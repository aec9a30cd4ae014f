"""What a protocol measures, said once: the shape every protocol's estimands take.

A number such as "human beats smollm2 61.8%" is only meaningful with its definition: which
quantity (a win rate, a pick rate, a difference), in which direction (whose share), pooled over
which observations (judgments, turns, items) or averaged over which clusters, after which
exclusions and caps. When every command computed the number its own way, `status`, `analyze`
and `ppi` printed three values for one rate. So each protocol declares its estimands once
(``<protocol>/estimands.py``) with this class, and every surface -- analyze, status, the live
stop rule, ppi, the judges, the reports, the Python API -- takes its numbers from there.

An estimands table (:data:`COLUMNS`) is the tidy form every surface shares: one row per
(group, comparison, measure). ``comparison`` is the label printed everywhere, in the
estimand's direction (``"B vs A"``: B's share; ``"A"``: one model's rate).

This module knows no protocol; it only says what a definition must contain.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["Estimand", "Monitor", "COLUMNS", "HEADLINE", "point_estimates", "headline_table", "describe", "complete"]

#: the columns of an estimands table (observations add ``value``, ``cluster``, ``item``, ``timestamp``)
COLUMNS = ["group", "comparison", "measure", "estimate", "n", "clusters"]
#: an analysis' reported estimates: the estimands table with each headline interval, named, and in
#: words why there is none (every protocol's ``headline(result)``, ``result.summary()``, summary.csv)
HEADLINE = COLUMNS + ["low", "high", "interval", "why_no_interval"]


@dataclass(frozen=True)
class Estimand:
    """One quantity a protocol reports.

    ``measure``: its short name ("win rate"); ``quantity``: what it is, direction included;
    ``estimator``: how the table gives it (pooled share of judgments, share of items, ...);
    ``unit``: the sampled cluster its intervals and marks treat as independent; ``low``/``high``:
    its range (every interval is clipped to it); ``exclusions``: what is left out first;
    ``pairwise``: a win rate between two models, so a ranking of all models may be fitted."""

    measure: str
    quantity: str
    estimator: str
    unit: str
    low: float
    high: float
    exclusions: str = "none"
    pairwise: bool = False  # a win rate of one model over another: a Bradley-Terry ranking applies

    def describe(self) -> str:
        """One sentence, as the outputs print it."""
        return (f"{self.measure}: {self.quantity}; estimated as {self.estimator}; unit {self.unit}; "
                f"exclusions: {self.exclusions}")

    def as_dict(self) -> dict:
        return {"measure": self.measure, "quantity": self.quantity, "estimator": self.estimator,
                "unit": self.unit, "range": [self.low, self.high], "exclusions": self.exclusions}


@dataclass(frozen=True)
class Monitor:
    """What ``status`` and the live stop rule watch of a protocol, in its own terms.

    ``watch``: measure -> the value of no difference (``None``: a rate with no null; two models'
    rates are then decided apart when their sequences are disjoint); ``signature``: the column
    that tells the protocol's table apart; ``unit``: the cluster its sequences run over (words);
    ``row_key``: the columns that make a stored row the same judgment when a unit is handed over
    twice (``()``: every row is new); ``judgment_key``: the columns one judgment spans (per-turn:
    a turn spans a row per model; ``()``: a row); ``stop_measures``: short names a stop
    comparison may add in brackets (``"a vs b [specific]"``) -> the measure they mean."""

    watch: dict
    signature: str
    unit: str
    row_key: tuple = ()
    judgment_key: tuple = ()
    stop_measures: dict = field(default_factory=dict)


def point_estimates(observations: pd.DataFrame) -> pd.DataFrame:
    """The estimate of every (group, comparison, measure) from a protocol's observations table:
    the pooled mean of ``value`` (each observation weighs one), the observations and the distinct
    clusters. Every protocol defines its observations so that this mean *is* its estimate."""
    if observations.empty:
        return pd.DataFrame(columns=COLUMNS)
    keys = ["group", "comparison", "measure"]
    grouped = observations.groupby(keys, sort=True)
    out = grouped.agg(estimate=("value", "mean"), n=("value", "size"), clusters=("cluster", "nunique"))
    return out.reset_index()[COLUMNS]


def headline_table(rows: list[dict]) -> pd.DataFrame:
    """Rows of reported estimates as the :data:`HEADLINE` table (its columns even when there are none)."""
    return pd.DataFrame(rows, columns=HEADLINE)


def describe(estimands: dict[str, Estimand]) -> list[dict]:
    """The definitions as JSON-ready records (results.json and run.json carry them)."""
    return [e.as_dict() for e in estimands.values()]


def inside(estimate: float, low: float, high: float) -> bool:
    """Whether an estimate lies in its interval (NaN bounds: there is no interval)."""
    return bool(np.isfinite(low) and np.isfinite(high) and low <= estimate <= high)


def complete(df: pd.DataFrame, columns, text=(), flags=()) -> pd.DataFrame:
    """``df`` with every column of ``columns`` it lacks added, blank: ``text`` columns "", ``flags``
    False, the rest NaN. The live stop rule hands over rows as judged, without the optional
    columns of a stored table; a blank column never triggers an exclusion rule."""
    missing = [c for c in columns if c not in df.columns]
    if not missing:
        return df
    return df.assign(**{c: "" if c in text else False if c in flags else np.nan for c in missing})
