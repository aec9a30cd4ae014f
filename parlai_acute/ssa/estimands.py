"""What SSA measures, defined once: sensibleness and specificity of each model, by item majority.

Meena's labels are per worker; its numbers are per reply. Every surface that reports an SSA
number -- ``ssa analyze``, ``status``, the live stop rule, ``ppi``, ``judge ssa``, the reports and
the Python API -- takes it from here:

* **sensibleness** (comparison: the model): the share of the model's items (replies) whose
  majority of labels says sensible; a tie (exactly half) counts as no
  (:func:`parlai_acute.ssa.analysis.majority_labels`); **specificity** likewise;
* **differences** (comparison ``"B vs A"``, A the earlier name): B's rate minus A's;
* **estimator**: pooled over items (each item weighs one, however many labels it has); the
  label-level shares the analysis prints beside them are named "label shares", never the rate;
* **unit**: the conversation for interactive and log items, else the context, else the item
  (:func:`parlai_acute.ssa.analysis.cluster_of`); **exclusions**: none.
"""
from __future__ import annotations

import itertools

import pandas as pd

from parlai_acute.ssa.analysis import SSAResult, crossed_arrays, majority_labels, workers_cross_contexts
from parlai_acute.ssa.labels import _TEXT, COLUMNS
from parlai_acute.stats.estimand import Estimand, Monitor, complete, headline_table, point_estimates

__all__ = ["SENSIBLENESS", "SPECIFICITY", "SENSIBLENESS_DIFFERENCE", "SPECIFICITY_DIFFERENCE", "ESTIMANDS", "MONITOR", "QUESTIONS", "label", "observations", "crossed_labels", "label_rows", "estimates", "headline", "observe"]

_UNIT = "conversation (interactive and log items), else context, else item"
SENSIBLENESS = Estimand(
    measure="sensibleness", quantity="share of the model's replies whose majority of labels says sensible (a tie "
    "counts as no)", estimator="pooled over items (replies)", unit=_UNIT, low=0.0, high=1.0)
SPECIFICITY = Estimand(
    measure="specificity", quantity="share of the model's replies whose majority of labels says specific (a tie "
    "counts as no)", estimator="pooled over items (replies)", unit=_UNIT, low=0.0, high=1.0)
SENSIBLENESS_DIFFERENCE = Estimand(
    measure="sensibleness difference", quantity="sensibleness of the model named first minus the other's, pairs "
    "named 'B vs A' with B the later name alphabetically", estimator="difference of the two pooled rates",
    unit=_UNIT, low=-1.0, high=1.0)
SPECIFICITY_DIFFERENCE = Estimand(
    measure="specificity difference", quantity="specificity of the model named first minus the other's, pairs "
    "named 'B vs A' with B the later name alphabetically", estimator="difference of the two pooled rates",
    unit=_UNIT, low=-1.0, high=1.0)
ESTIMANDS = {e.measure: e for e in (SENSIBLENESS, SPECIFICITY, SENSIBLENESS_DIFFERENCE, SPECIFICITY_DIFFERENCE)}
#: the labels table's column behind each measure
QUESTIONS = {"sensibleness": "sensible", "specificity": "specific"}
#: what ``status`` and the live stop rule watch: each model's rates (no null), model pairs decided apart
#: when their sequences are disjoint; a stop comparison may name a question ("a vs b [specific]")
MONITOR = Monitor(watch={"sensibleness": None, "specificity": None}, signature="sensible",
                  unit="conversation or context", row_key=("item", "worker"),
                  stop_measures={question: measure for measure, question in QUESTIONS.items()})


def label(a: str, b: str) -> str:
    """The one name of the comparison of models ``a`` < ``b``: ``"b vs a"`` (B minus A)."""
    return f"{b} vs {a}"


def observations(labels: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, measure): ``value`` the item's majority verdict (1/0), ``cluster`` the
    item's cluster, ``comparison`` its model, ``timestamp`` its last label."""
    if labels.empty:
        return pd.DataFrame(columns=["group", "comparison", "measure", "model_a", "model_b", "value", "cluster",
                                     "item", "timestamp"])
    items = majority_labels(complete(labels, COLUMNS, _TEXT))
    stamp = pd.to_numeric(labels["timestamp"], errors="coerce").groupby(labels["item"]).max() \
        if "timestamp" in labels else pd.Series(dtype=float)
    stamp = stamp.reindex(items["item"]).to_numpy(float)
    parts = [pd.DataFrame({"group": "", "comparison": items["model"].astype(str).to_numpy(), "measure": measure,
                           "model_a": items["model"].astype(str).to_numpy(), "model_b": "",
                           "value": items[column].astype(float).to_numpy(),
                           "cluster": items["cluster"].astype(str).to_numpy(),
                           "item": items["item"].astype(str).to_numpy(), "timestamp": stamp})
             for measure, column in QUESTIONS.items()]
    out = pd.concat(parts, ignore_index=True)
    out.attrs["facet_note"] = worker_note(labels, items)
    if out.attrs["facet_note"] and workers_cross_contexts(complete(labels, COLUMNS, _TEXT)):
        out.attrs["split_facet"] = "worker"  # status' pair rows: the two-facet sequence (crossed_labels)
    return out


def crossed_labels(labels: pd.DataFrame) -> dict:
    """What status' two-facet sequence of a pair's difference needs when workers and contexts are
    crossed (static SSA): the analysis' own arrays (:func:`parlai_acute.ssa.analysis.crossed_arrays`:
    each item's model, context and values, each label's item, worker, votes and pivots) and the
    items' ids (``item``), in the order of those arrays, so the pair's items are found by id."""
    df = complete(labels, COLUMNS, _TEXT)
    items = majority_labels(df)
    return crossed_arrays(df, items) | {"item": items["item"].astype(str).to_numpy(), "measures": list(QUESTIONS)}


def worker_note(labels: pd.DataFrame, items: pd.DataFrame) -> str:
    """'' or the sentence status owes its reader when workers label items of several clusters
    (static SSA: workers x contexts crossed): its sequences run over the items' clusters and hold
    the workers fixed, while the analysis' pair tests treat workers and contexts both as sampled."""
    if "worker" not in labels.columns or not len(items):
        return ""
    cluster = labels["item"].astype(str).map(dict(zip(items["item"].astype(str), items["cluster"])))
    spread = cluster.groupby(labels["worker"].astype(str)).nunique()
    if not (spread > 1).any():
        return ""
    return (f"{int((spread > 1).sum())} of {len(spread)} workers label items of several contexts or conversations: "
            f"each model's rate sequence runs over those and holds the workers fixed (a statement about these "
            f"workers; the analysis' pair tests treat both as sampled)")


def label_rows(labels: pd.DataFrame) -> pd.DataFrame:
    """One row per (label, measure) behind the item majorities of :func:`observations`: ``item``,
    ``worker``, ``measure``, ``vote`` (1/0) and ``pivotal`` (1 when the label decides its item's
    majority, :func:`parlai_acute.stats.inference.pivotal`). What a variance that treats the
    workers as sampled needs: a majority moves with a worker only through the labels that decide
    it (``ppi``'s crossed interval, :func:`parlai_acute.stats.ppi.ppi_mean_crossed`)."""
    from parlai_acute.stats.inference import pivotal

    columns = ["item", "worker", "measure", "vote", "pivotal"]
    if labels.empty:
        return pd.DataFrame(columns=columns)
    df = complete(labels, COLUMNS, _TEXT)
    item = df["item"].astype(str)
    size = item.map(item.value_counts()).to_numpy(float)
    parts = []
    for measure, column in QUESTIONS.items():
        vote = df[column].astype(float).to_numpy()
        yes = pd.Series(vote).groupby(item.to_numpy()).transform("sum").to_numpy()
        parts.append(pd.DataFrame({"item": item.to_numpy(), "worker": df["worker"].astype(str).to_numpy(),
                                   "measure": measure, "vote": vote, "pivotal": pivotal(yes - vote, size)}))
    return pd.concat(parts, ignore_index=True)[columns]


def estimates(labels: pd.DataFrame, judge: bool = False) -> pd.DataFrame:
    """The protocol's estimate of every model's sensibleness and specificity, and of every pair's
    differences (no interval)."""
    rates = point_estimates(observations(labels))
    rows = []
    for measure, part in rates.groupby("measure", sort=True):
        by_model = part.set_index("comparison")
        for a, b in itertools.combinations(sorted(by_model.index), 2):
            rows.append({"group": "", "comparison": label(a, b), "measure": f"{measure} difference",
                         "estimate": by_model.at[b, "estimate"] - by_model.at[a, "estimate"],
                         "n": int(by_model.at[a, "n"] + by_model.at[b, "n"]),
                         "clusters": int(by_model.at[a, "clusters"] + by_model.at[b, "clusters"])})
    return pd.concat([rates, pd.DataFrame(rows, columns=rates.columns)], ignore_index=True) if rows else rates


def headline(result: SSAResult) -> pd.DataFrame:
    """The analysis' reported rates with their headline intervals (cluster bootstrap, else exact)
    and the pair differences with the cluster-aware test's, in the estimands table's shape."""
    level = f"{100 * result.config.confidence:g}%"
    rows = []
    for m in result.models.itertuples(index=False):
        for measure in QUESTIONS:
            boot_low, boot_high = getattr(m, f"{measure}_boot_low"), getattr(m, f"{measure}_boot_high")
            boot = boot_low == boot_low
            low, high = (boot_low, boot_high) if boot else (getattr(m, f"{measure}_exact_low"),
                                                             getattr(m, f"{measure}_exact_high"))
            rows.append({"group": "", "comparison": m.model, "measure": measure, "estimate": float(getattr(m, measure)),
                         "n": int(m.items), "clusters": int(m.clusters), "low": float(low), "high": float(high),
                         "interval": f"{level} percentile cluster bootstrap" if boot else
                         f"{level} Clopper-Pearson (items independent)", "why_no_interval": ""})
    items = dict(zip(result.models["model"], result.models["items"]))
    for p in result.pairs[result.pairs["measure"].isin(list(QUESTIONS))].itertuples(index=False):
        rows.append({"group": "", "comparison": label(p.model_a, p.model_b), "measure": f"{p.measure} difference",
                     "estimate": float(p.diff), "n": int(items[p.model_a] + items[p.model_b]),
                     "clusters": int(p.clusters), "low": float(p.cluster_low),
                     "high": float(p.cluster_high), "interval": (f"{level} two-way cluster-robust t, workers x contexts"
                                     if p.unit == "worker x context" else
                                     f"{level} cluster-aware test over {p.unit}s, inverted"),
                     "why_no_interval": "" if p.cluster_low == p.cluster_low else (p.cluster_note or "no interval")})
    return headline_table(rows)


def observe(table: pd.DataFrame, judge: bool = False) -> pd.DataFrame:
    """The observations of a labels table (SSA excludes nothing; a judge's labels the same way)."""
    return observations(table)
