"""What per-turn evaluation measures, defined once: pick rates and their differences, per model set.

Every surface that reports a per-turn number -- ``per-turn analyze``, ``status``, the live stop
rule, ``ppi``, ``judge per-turn``, the reports and the Python API -- takes it from here:

* **group**: one model set run under one design, named ``"<setting> <protocol> <model set>"``
  (e.g. ``"mm sata_user a|b|c"``); models of a set are sorted, as the table stores them;
* **pick rate** (comparison: the model): the share of the group's kept turns whose reply from
  that model was picked, pooled over turns;
* **pick rate difference** (comparison ``"B vs A"``, A the earlier name): B's pick rate minus A's
  over the same turns, pooled over turns (each turn contributes pick_B - pick_A in {-1, 0, 1}).
  In PM-SOBA (one of two picked every turn) it is 2 x B's win rate - 1. SM runs compare models
  across dialogues (``sm_comparisons`` of the analysis); their pick rates are estimands too;
* **unit**: the dialogue (or the worker with ``cluster="worker"``); **exclusions**: incomplete turns,
  and the quality flags named in ``exclude`` (:func:`parlai_acute.per_turn.analysis.apply_exclusions`).
"""
from __future__ import annotations

import itertools

import pandas as pd

from parlai_acute.per_turn.analysis import AnalysisConfig, AnalysisResult, apply_exclusions
from parlai_acute.per_turn.turns import _TEXT, COLUMNS
from parlai_acute.stats.estimand import Estimand, complete, headline_table, point_estimates

__all__ = ["PICK_RATE", "PICK_DIFFERENCE", "ESTIMANDS", "group_name", "label", "kept", "observations", "estimates",
           "headline", "observe"]

_EXCLUSIONS = "turns where a model failed (incomplete), and turns with the quality flags named in exclude"
PICK_RATE = Estimand(
    measure="pick rate", quantity="share of the group's turns whose reply from the model was picked",
    estimator="pooled over kept turns (picked / turns)", unit="dialogue", low=0.0, high=1.0,
    exclusions=_EXCLUSIONS)
PICK_DIFFERENCE = Estimand(
    measure="pick rate difference",
    quantity="pick rate of the model named first minus the other's, over the same turns, pairs named 'B vs A' "
             "with B the later name alphabetically",
    estimator="pooled over kept turns (mean of pick_B - pick_A)", unit="dialogue", low=-1.0, high=1.0,
    exclusions=_EXCLUSIONS)
ESTIMANDS = {e.measure: e for e in (PICK_RATE, PICK_DIFFERENCE)}


def group_name(setting: str, protocol: str, model_set: str) -> str:
    return f"{setting} {protocol} {model_set}"


def label(a: str, b: str) -> str:
    """The one name of the comparison of models ``a`` < ``b``: ``"b vs a"`` (B minus A)."""
    return f"{b} vs {a}"


def kept(table: pd.DataFrame, config: AnalysisConfig | None = None) -> pd.DataFrame:
    """The turn rows the protocol keeps."""
    return apply_exclusions(complete(table, COLUMNS, _TEXT, ["incomplete", "continued"]), config or AnalysisConfig())[0]


def observations(kept_turns: pd.DataFrame, cluster: str = "dialogue") -> pd.DataFrame:
    """One row per (turn, model) for pick rates and per (turn, pair of the group) for differences:
    ``value`` (pick, or pick_B - pick_A), ``cluster`` (dialogue or worker), ``item`` (the turn's
    candidate, for a judge), ``timestamp``."""
    parts = []
    for (setting, protocol, model_set), rows in kept_turns.groupby(["setting", "protocol", "model_set"], sort=True):
        group = group_name(setting, protocol, model_set)
        key = rows["dialogue"].astype(str) + "#" + rows["turn"].astype(str)
        parts.append(pd.DataFrame({
            "group": group, "comparison": rows["model"].astype(str).to_numpy(), "measure": PICK_RATE.measure,
            "model_a": rows["model"].astype(str).to_numpy(), "model_b": "",
            "value": rows["picked"].astype(float).to_numpy(), "cluster": rows[cluster].astype(str).to_numpy(),
            "item": (key + "#" + rows["model"].astype(str)).to_numpy(),
            "timestamp": pd.to_numeric(rows["timestamp"], errors="coerce").to_numpy(float)}))
        if setting == "sm":
            continue  # one model per dialogue: compared across dialogues by the analysis
        picks = rows.assign(_key=key).pivot_table(index="_key", columns="model", values="picked", aggfunc="max")
        first = rows.assign(_key=key).groupby("_key").agg(cluster=(cluster, "first"), timestamp=("timestamp", "max"))
        first = first.reindex(picks.index)
        for a, b in itertools.combinations(sorted(picks.columns), 2):
            pa, pb = picks[a].astype(float).fillna(0.0), picks[b].astype(float).fillna(0.0)
            parts.append(pd.DataFrame({
                "group": group, "comparison": label(a, b), "measure": PICK_DIFFERENCE.measure, "model_a": a,
                "model_b": b, "value": (pb - pa).to_numpy(), "cluster": first["cluster"].astype(str).to_numpy(),
                "item": picks.index.to_numpy(), "timestamp": pd.to_numeric(first["timestamp"], errors="coerce")
                .to_numpy(float)}))
    columns = ["group", "comparison", "measure", "model_a", "model_b", "value", "cluster", "item", "timestamp"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def estimates(table: pd.DataFrame, config: AnalysisConfig | None = None, judge: bool = False) -> pd.DataFrame:
    """The protocol's estimate of every pick rate and difference of a turns table (no interval)."""
    return point_estimates(observe(table, config, judge))


def headline(result: AnalysisResult) -> pd.DataFrame:
    """The analysis' reported estimates with their headline intervals, in the estimands table's
    shape: pick rates (cluster bootstrap, else exact) and pair differences (the cluster-aware test)."""
    level = f"{100 * result.config.confidence:g}%"
    unit = result.config.cluster
    rows = []
    for design in result.designs:
        for g in design.groups:
            group = group_name(g.setting, g.protocol, g.model_set)
            for m in g.models_table.itertuples(index=False):
                boot = m.boot_low == m.boot_low
                low, high = (m.boot_low, m.boot_high) if boot else (m.ci_low, m.ci_high)
                rows.append({"group": group, "comparison": m.model, "measure": PICK_RATE.measure,
                             "estimate": float(m.rate), "n": int(m.turns), "clusters": int(g.dialogues if unit ==
                                                                                            "dialogue" else g.workers),
                             "low": float(low), "high": float(high),
                             "interval": f"{level} percentile cluster bootstrap over {unit}s" if boot else
                             f"{level} Clopper-Pearson (turns independent; too few {unit}s to resample)",
                             "why_no_interval": ""})
            if g.setting == "sm":
                continue
            for p in g.pairs.itertuples(index=False):
                rows.append({"group": group, "comparison": label(p.model_a, p.model_b),
                             "measure": PICK_DIFFERENCE.measure, "estimate": float(p.diff), "n": int(p.turns),
                             "clusters": int(p.clusters), "low": float(p.cluster_low), "high": float(p.cluster_high),
                             "interval": f"{level} cluster-aware test over {unit}s, inverted",
                             "why_no_interval": "" if p.cluster_low == p.cluster_low else (p.cluster_note or
                                                                                          "no interval")})
    return headline_table(rows)



def observe(table: pd.DataFrame, config: AnalysisConfig | None = None, judge: bool = False) -> pd.DataFrame:
    """The observations of a turns table after the protocol's exclusions (a judge's the same way)."""
    config = config or AnalysisConfig()
    return observations(kept(table, config), config.cluster)
