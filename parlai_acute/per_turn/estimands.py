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

import numpy as np
import pandas as pd

from parlai_acute.per_turn.analysis import AnalysisConfig, AnalysisResult, apply_exclusions, resolve_cluster
from parlai_acute.per_turn.turns import _TEXT, COLUMNS
from parlai_acute.stats.estimand import Estimand, Monitor, complete, headline_table, point_estimates

__all__ = ["PICK_RATE", "PICK_DIFFERENCE", "ESTIMANDS", "MONITOR", "group_name", "label", "kept", "observations", "estimates",
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
#: what ``status`` and the live stop rule watch: every pair's pick rate difference against 0, over
#: dialogues; a judgment is a turn (a row per model), a resent row the same (dialogue, turn, model)
MONITOR = Monitor(watch={PICK_DIFFERENCE.measure: 0.0}, signature="picked", unit="dialogue",
                  row_key=("dialogue", "turn", "model"), judgment_key=("dialogue", "turn"))


def group_name(setting: str, protocol: str, model_set: str) -> str:
    return f"{setting} {protocol} {model_set}"


def label(a: str, b: str) -> str:
    """The one name of the comparison of models ``a`` < ``b``: ``"b vs a"`` (B minus A)."""
    return f"{b} vs {a}"


def kept(table: pd.DataFrame, config: AnalysisConfig | None = None) -> pd.DataFrame:
    """The turn rows the protocol keeps: :func:`~parlai_acute.per_turn.analysis.apply_exclusions`'s,
    and when no quality flag excludes turns (the default) the same rows without computing the flags
    (every turn where a model failed is left out whole), which a live look cannot afford."""
    config = config or AnalysisConfig()
    table = complete(table, COLUMNS, _TEXT, ["incomplete", "continued"])
    if config.exclude:
        return apply_exclusions(table, config)[0]
    table = table.reset_index(drop=True)
    failed = table["incomplete"].fillna(False).astype(bool)
    if not failed.any():
        return table
    turn = pd.MultiIndex.from_arrays([table["dialogue"], table["turn"]])
    bad = set(turn[failed.to_numpy()])
    return table[~turn.isin(bad)].reset_index(drop=True)


def observations(kept_turns: pd.DataFrame, cluster: str = "dialogue") -> pd.DataFrame:
    """One row per (turn, model) for pick rates and per (turn, pair of the group) for differences:
    ``value`` (pick, or pick_B - pick_A), ``cluster`` (dialogue or worker), ``item`` (the turn's
    candidate, for a judge), ``timestamp``."""
    parts = []
    for (setting, protocol, model_set), rows in kept_turns.groupby(["setting", "protocol", "model_set"], sort=True):
        group = group_name(setting, protocol, model_set)
        key = rows["dialogue"].astype(str) + "#" + rows["turn"].astype(str)
        model = rows["model"].astype(str).to_numpy()
        stamp = pd.to_numeric(rows["timestamp"], errors="coerce").to_numpy(float)
        parts.append(pd.DataFrame({
            "group": group, "comparison": model, "measure": PICK_RATE.measure, "model_a": model, "model_b": "",
            "value": rows["picked"].astype(float).to_numpy(), "cluster": rows[cluster].astype(str).to_numpy(),
            "item": (key + "#" + rows["model"].astype(str)).to_numpy(), "timestamp": stamp}))
        if setting == "sm":
            continue  # one model per dialogue: compared across dialogues by the analysis
        # the group's (turns, models) matrix of picks, every turn's cluster and last timestamp
        turn, turns = pd.factorize(key)
        which, models = pd.factorize(model, sort=True)
        picks = np.zeros((len(turns), len(models)))
        np.maximum.at(picks, (turn, which), rows["picked"].astype(float).to_numpy())
        owner = np.empty(len(turns), dtype=object)
        owner[turn] = rows[cluster].astype(str).to_numpy()
        last = np.full(len(turns), -np.inf)
        np.fmax.at(last, turn, stamp)
        last[np.isinf(last)] = np.nan
        for i, j in itertools.combinations(range(len(models)), 2):
            parts.append(pd.DataFrame({
                "group": group, "comparison": label(models[i], models[j]), "measure": PICK_DIFFERENCE.measure,
                "model_a": models[i], "model_b": models[j], "value": picks[:, j] - picks[:, i], "cluster": owner,
                "item": np.asarray(turns), "timestamp": last}))
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
    rows = kept(table, config)
    unit = resolve_cluster(rows, config)[0].cluster  # the unit analyze uses: workers when they repeat
    out = observations(rows, unit)
    out.attrs["unit"] = unit
    return out
