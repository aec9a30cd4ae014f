"""Where a running evaluation stands: each comparison's estimate, its anytime-valid interval,
whether it is decided, and how many more judgments the undecided ones are likely to need.

Pure functions over the protocols' tidy tables (ACUTE judgments, per-turn turns, SSA labels):
the command ``parlai-acute status`` reads a Mephisto run or a table file and hands the table
here. Because the intervals are confidence sequences (:mod:`parlai_acute.stats.sequential`),
looking at a live run as often as one likes and stopping once a comparison is decided keeps
the error rate: a fixed-sample p-value checked this way would not.

The observation is the sampled unit, as in the issue "Verdicts that hold on real data": the
worker for ACUTE-Eval (a worker's taste spans their judgments), the dialogue for per-turn
runs, the conversation for interactive SSA items (the worker for static ones). A unit counts
once it is in the table; units are taken in the order they finished (last timestamp).

Two sampled facets: where a comparison's conversations are reused (the protocol's observations
name them in ``attrs["facets"]``; ACUTE: each side's conversation), its interval and decision
treat workers and conversations both as sampled: the two-facet asymptotic confidence sequence of
:func:`parlai_acute.stats.sequential.crossed_sequence` (the analysis' CR3 sandwich inside a
time-uniform boundary), decided when it and the one-facet sequence over workers both exclude no
difference (why: that module's docstring). The one-facet sequence stays beside it as
``one_facet``, a statement about these conversations. ``design`` in the result says which facets
were read and which procedures decided the rows; the ``unit:`` line says it in words. Static SSA
pairs where workers label replies to several contexts (the observations' ``attrs["split_facet"]``;
the protocol's ``crossed_labels`` gives the analysis' arrays) are decided the same way, with the
analysis' split variance (:func:`parlai_acute.stats.sequential.split_sequence`), the disjoint rates
over contexts kept as ``one_facet``; each model's own rate likewise (its sequence over contexts
as ``one_facet``).

Several comparisons are watched at once, so each gets alpha / (number of comparisons)
(Bonferroni): "decided" then holds for all of them together at level alpha.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.stats import ranksets
from parlai_acute.stats.bradley_terry import fit_counts
from parlai_acute.stats.sequential import (GRID, cluster_stream, confidence_sequence, crossed_decide, crossed_looks,
                                           crossed_sequence, decide, first_crossing, judgments_needed)

#: how a comparison with two sampled facets is decided, in words (status, results.json, the stop rule)
CROSSED_PROCEDURE = ("asymptotic confidence sequence: the mean +/- a time-uniform normal-mixture multiple of its "
                     "two-way cluster-robust standard error (CR3, as analyze), read on a t with min(levels) - 1 df; "
                     "Waudby-Smith et al. 2024")

#: how an SSA pair is decided where workers and contexts are crossed (status, results.json, the stop rule)
SPLIT_PROCEDURE = ("asymptotic confidence sequence: the difference +/- a time-uniform normal-mixture multiple of its "
                   "two-way standard error over contexts and workers (CR2 on contexts, item majorities split into "
                   "their labels' linear parts, as ssa analyze), read on a t with the contexts that carry it as df; "
                   "Waudby-Smith et al. 2024")


def monitors() -> dict:
    """Every protocol that defines what status watches (``MONITOR`` in its estimands module), by name."""
    from parlai_acute.registry import PROTOCOLS

    found = {}
    for name, p in PROTOCOLS.items():
        monitor = getattr(p.estimands_module(), "MONITOR", None) if p.estimands else None
        if monitor is not None:
            found[name] = monitor
    return found


def monitor(protocol: str):
    """The protocol's :class:`~parlai_acute.stats.estimand.Monitor`, or a one-line error naming those with one."""
    from parlai_acute.registry import protocol as lookup

    found = monitors()
    try:
        name = lookup(protocol).name
    except UserError:
        name = protocol
    if name not in found:
        raise UserError(f"protocol must be one of {', '.join(found)}, got {protocol!r}", param="protocol")
    return found[name]


def detect_protocol(df: pd.DataFrame) -> str:
    """The protocol whose tidy table ``df`` is, from its columns."""
    found = monitors()
    for protocol, m in found.items():
        if m.signature in df.columns:
            return protocol
    raise UserError("the table is none of " + ", ".join(f"{p}'s (column {m.signature!r})" for p, m in found.items())
                    + "; pass one of those")


def observations(df: pd.DataFrame, protocol: str, settings: dict | None = None) -> pd.DataFrame:
    """The protocol's observations of its estimands (after its exclusions and caps), from the
    protocol's own estimands module: the one definition every surface shares. ``settings``: the
    protocol's analysis settings its ``observe`` takes (ACUTE: ``min_reason_chars``,
    ``max_per_worker``), so status keeps the rows analyze keeps with the same settings."""
    import inspect

    from parlai_acute.registry import protocol as lookup

    observe = lookup(protocol).estimands_module("observe").observe
    settings = dict(settings or {})
    accepted = inspect.signature(observe).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        unknown = sorted(set(settings) - set(accepted))
        if unknown:
            raise UserError(f"the {protocol} protocol has no setting {', '.join(unknown)} for its status; leave it "
                            f"out of settings", param="settings")
    return observe(df, **settings)


def streams(df: pd.DataFrame, protocol: str, settings: dict | None = None) -> list[dict]:
    """One stream per watched comparison: the protocol's estimate (pooled, as ``analyze`` gives
    it) and the per-cluster means in the order the clusters finished, on [0, 1] (a difference d
    in [-1, 1] as (d + 1) / 2), which the confidence sequences need."""
    return streams_of(observations(df, protocol, settings), protocol)


def streams_of(obs: pd.DataFrame, protocol: str) -> list[dict]:
    """:func:`streams` from the protocol's observations (``top_k`` has them already)."""
    spec = monitor(protocol)
    unit = obs.attrs.get("unit") or spec.unit  # the unit the analysis reads from the design, where it does
    facets = [f for f in obs.attrs.get("facets", ()) if f in obs.columns]
    facet_name, note = obs.attrs.get("facet_name", "conversation"), obs.attrs.get("facet_note", "")
    split = obs.attrs.get("split_facet")
    obs = obs[obs["measure"].isin(list(spec.watch))]
    if obs.empty:
        return []
    # columns once as arrays, each comparison's rows by position: status and top k read hundreds of
    # comparisons per look, and a pandas frame per comparison cost most of that
    value, cluster = obs["value"].to_numpy(float), obs["cluster"].to_numpy()
    stamp = obs["timestamp"].to_numpy(float) if "timestamp" in obs.columns else np.arange(len(obs), dtype=float)
    model_a, model_b = obs["model_a"].to_numpy(), obs["model_b"].to_numpy()
    facet_columns = [obs[f].to_numpy() for f in facets]
    rows_of = obs.groupby(["group", "comparison", "measure"], sort=True).indices
    out = []
    for group, comparison, measure in sorted(rows_of):
        rows = rows_of[(group, comparison, measure)]
        m0 = spec.watch[measure]
        difference = m0 is not None and m0 == 0.0
        values = (value[rows] + 1) / 2 if difference else value[rows]
        stream = cluster_stream(pd.DataFrame({"_v": values, "cluster": cluster[rows], "timestamp": stamp[rows]}),
                                "_v", "cluster", "timestamp")
        item = {"protocol": protocol, "group": group or measure, "comparison": comparison, "measure": measure,
                "model_a": model_a[rows[0]], "model_b": model_b[rows[0]], "m0": m0,
                "difference": difference, "unit": unit, "facet_note": note, "facets_declared": bool(facets),
                "estimate": float(np.nanmean(value[rows])), "observations": int(len(rows)), "stream": stream}
        # a second sampled facet some level of which serves several of the comparison's observations
        codes = [pd.factorize(column[rows])[0] for column in facet_columns] if m0 is not None else []
        levels = [int(c.max()) + 1 if len(c) else 0 for c in codes]
        if split and m0 is None:  # rates whose items' labels cross workers with contexts
            item["split_rows"] = obs.iloc[rows][["item", "cluster", "timestamp"]]
        if any(g < len(rows) for g in levels):
            rank = pd.Index(stream["cluster"].to_numpy()).get_indexer(cluster[rows])
            item["crossed"] = {"values": values, "rank": rank, "facets": codes, "name": facet_name,
                               "levels": min(levels)}
        out.append(item)
    return out


def _crossed(s: dict, one: dict, alpha: float, m0: float, budget: int) -> dict:
    """A comparison whose conversations (the protocol's second facet) are reused: decided by the
    two-facet sequence of :func:`parlai_acute.stats.sequential.crossed_sequence` over the worker and
    both sides' conversations, looked at after each of the :func:`crossed_looks` cluster counts
    (running intersection). ``one``: the one-facet betting result, kept as ``one_facet``. Too few
    levels of a facet: undecided, and the note says how many are needed for a verdict about the
    models."""
    c, stream = s["crossed"], s["stream"]
    clusters = len(stream)
    looks, need, dec = _two_facet(s, alpha, m0)
    keep = {k: one[k] for k in ("estimate", "lower", "upper", "decided", "decided_at_judgments", "procedure")}
    out = {**one, "one_facet": keep, "levels": c["levels"], "facet": c["name"], "more": None,
           "decided_at_judgments": None, "note": "",
           "procedure": f"two-facet {CROSSED_PROCEDURE}, over {s['unit']}s and {c['name']}s"}
    out["estimate"] = float(np.mean(c["values"]))  # the pooled mean: the protocol's estimate, the sequence's centre
    if dec is None:
        out |= {"lower": 0.0, "upper": 1.0, "decided": "undecided"}
        few = c["levels"] < need
        out["note"] = (f"{c['levels']} {c['name']}s per model: a verdict about the models needs at least {need} "
                       f"(the sequence over {s['unit']}s alone, about these {c['name']}s, is one_facet)" if few else
                       f"{clusters} {s['unit']}s: a verdict needs at least {need}" if clusters < need else
                       f"every {s['unit']} and {c['name']} has the same mean, so no interval follows yet")
        return out
    first, two = int(dec["first"][0]), str(dec["decided"][0])
    out |= {"lower": float(dec["lower"][0]), "upper": float(dec["upper"][0]), "two_facet_decided": two}
    if _agreed(one["decided"], dec) != "undecided":
        at = int(stream["judgments_so_far"].iloc[int(looks[first]) - 1])
        out |= {"decided": two, "decided_at_judgments": max(at, one["decided_at_judgments"] or 0)}
        return out
    out["decided"] = "undecided"
    if two != "undecided":
        out["note"] = (f"the two-facet sequence excludes no difference; the stop waits for the sequence over "
                       f"{s['unit']}s (valid at any size) to agree")
        return out
    if one["decided"] != "undecided":
        out["note"] = (f"decided for these {c['name']}s only (one_facet); not yet for the models")
    estimate = out["estimate"]
    near = estimate - out["lower"] if estimate > m0 else out["upper"] - estimate
    out["more"] = judgments_needed(estimate, near, clusters, len(c["values"]) / clusters, m0, alpha, budget)
    out["note"] = "; ".join(filter(None, [out["note"], f"more assumes new {c['name']}s keep coming as {s['unit']}s "
                                          f"do; with these {c['levels']} {c['name']}s per model the interval stops "
                                          f"shrinking"]))
    return out


def _two_facet(s: dict, alpha: float, m0: float) -> tuple[np.ndarray, int, dict | None]:
    """The looks, the fewest levels a verdict needs, and the two-facet sequence's decision of a
    comparison whose second facet is reused (None: it says nothing yet, too few levels or clusters)."""
    from parlai_acute.stats.inference import min_clusters

    c = s["crossed"]
    need = min_clusters(alpha)
    looks = crossed_looks(len(s["stream"]), need)
    seq = crossed_sequence(c["values"], c["rank"], c["facets"], looks, alpha, need)
    if not len(looks) or not seq["informative"][0].any():
        return looks, need, None
    return looks, need, crossed_decide(seq, m0)


def _agreed(one_facet: str, dec: dict | None) -> str:
    """Decided when both sequences exclude no difference on the same side: the two-facet one makes
    it a claim about the models; the betting one keeps the guarantee at small sizes, where the
    sandwich is still rough."""
    two = "undecided" if dec is None else str(dec["decided"][0])
    return two if two != "undecided" and one_facet == two else "undecided"


def decide_stream(s: dict, alpha: float, grid: int = GRID, budget: int = 1_000_000) -> dict:
    """One comparison with a null, decided at ``alpha``: the betting sequence over its unit, and where
    a second facet is reused (``s["crossed"]``) the two-facet sequence beside it (:func:`_crossed`).
    What status, the stop rule and top k all decide a comparison by."""
    m0 = 0.5 if s["difference"] else s["m0"]
    result = decide(s["stream"], alpha, m0, grid, budget)
    result["procedure"] = f"betting confidence sequence over {s['unit']}s"
    if "crossed" in s:  # two sampled facets: the one-facet sequence stays, named, beside the two-facet one
        result = _crossed(s, result, alpha, m0, budget)
    return result


def _split_pair(row: dict, s: dict, t: dict, arrays: dict) -> dict:
    """A pair of SSA rates whose items' labels cross workers with contexts: the difference's
    two-facet sequence (:func:`parlai_acute.stats.sequential.split_sequence`: the analysis' split
    variance, CR2 on contexts, inside the crossed time-uniform boundary) at the pair's level, looked
    at after each of the :func:`crossed_looks` context counts (contexts in the order they completed),
    decided when it and the disjoint rates' sequences (``one_facet``, workers fixed) agree, as
    :func:`_crossed` decides ACUTE pairs. Too few contexts or workers: undecided, and the note says
    how many a verdict about the models needs."""
    from parlai_acute.stats.inference import min_clusters
    from parlai_acute.stats.sequential import split_sequence

    if row["estimate"] is None:
        return row
    alpha = row["alpha"]
    need = min_clusters(alpha)
    both = pd.concat([s["split_rows"], t["split_rows"]], ignore_index=True)
    order = cluster_stream(both.assign(_v=0.0), "_v", "cluster", "timestamp")
    rank = pd.Index(order["cluster"].to_numpy()).get_indexer(both["cluster"].to_numpy())
    at = pd.Index(arrays["item"]).get_indexer(both["item"].astype(str).to_numpy())
    q = arrays["measures"].index(s["measure"])
    position = np.full(len(arrays["item"]), -1)
    position[at] = np.arange(len(at))
    mine = position[arrays["label_item"]] >= 0
    label_item = position[arrays["label_item"][mine]]
    is_b = np.arange(len(both)) >= len(s["split_rows"])  # t: the later name, B
    clusters = len(order)
    looks = crossed_looks(clusters, need)
    seq = split_sequence(rank, is_b, arrays["values"][at, q], arrays["context"][at], label_item,
                         arrays["worker"][mine], arrays["votes"][mine, q], arrays["pivots"][mine, q], looks, alpha, need)
    workers = int(len(np.unique(arrays["worker"][mine])))
    keep = {k: row[k] for k in ("estimate", "lower", "upper", "decided")}
    keep["procedure"] = row["procedure"] = ("two rates' betting confidence sequences over contexts, disjoint "
                                            "(workers fixed)")
    out = {**row, "one_facet": keep, "levels": workers, "facet": "worker",
           "levels_text": f"{clusters} contexts x {workers} workers", "more": None, "note": "",
           "procedure": f"two-facet {SPLIT_PROCEDURE}, over contexts and workers"}
    if not len(looks) or not seq["informative"][0].any():
        out |= {"lower": -1.0, "upper": 1.0, "decided": "undecided"}
        few = min(clusters, workers)
        facet = "workers" if workers <= clusters else "contexts"
        out["note"] = (f"{few} {facet}: a verdict about the models needs at least {need} (the disjoint rates over "
                       f"contexts, about these workers, are one_facet)" if few < need else
                       "every context and worker has the same difference, so no interval follows yet")
        return out
    dec = crossed_decide(seq, 0.0)
    two = str(dec["decided"][0])
    out |= {"lower": float(dec["lower"][0]), "upper": float(dec["upper"][0]), "two_facet_decided": two}
    if two != "undecided" and row["decided"] == two:
        return out | {"decided": two}
    out["decided"] = "undecided"
    out["note"] = ("the two-facet sequence excludes no difference; the stop waits for the rates' sequences over "
                   "contexts to be disjoint" if two != "undecided" else
                   "decided for these workers only (one_facet); not yet for the models"
                   if row["decided"] != "undecided" else "")
    return out


def _split_rate(row: dict, s: dict, arrays: dict) -> dict:
    """One model's SSA rate where its items' labels cross workers with contexts: the interval of
    :func:`parlai_acute.stats.sequential.split_sequence` of its mean (``single``: the analysis'
    split variance of one model's share) at the rate's level, the running intersection over the
    :func:`crossed_looks` context counts; the sequence over contexts stays as ``one_facet``. Too few
    contexts or workers: [0, 1], and the note says how many."""
    from parlai_acute.stats.inference import min_clusters
    from parlai_acute.stats.sequential import split_sequence

    if row["estimate"] is None or "split_rows" not in s:
        return row
    alpha, rows = row["alpha"], s["split_rows"]
    need = min_clusters(alpha)
    rank = pd.Index(s["stream"]["cluster"].to_numpy()).get_indexer(rows["cluster"].to_numpy())
    at = pd.Index(arrays["item"]).get_indexer(rows["item"].astype(str).to_numpy())
    q = arrays["measures"].index(s["measure"])
    position = np.full(len(arrays["item"]), -1)
    position[at] = np.arange(len(at))
    mine = position[arrays["label_item"]] >= 0
    clusters = len(s["stream"])
    looks = crossed_looks(clusters, need)
    seq = split_sequence(rank, np.ones(len(rows), bool), arrays["values"][at, q], arrays["context"][at],
                         position[arrays["label_item"][mine]], arrays["worker"][mine], arrays["votes"][mine, q],
                         arrays["pivots"][mine, q], looks, alpha, need, single=True)
    workers = int(len(np.unique(arrays["worker"][mine])))
    keep = {k: row[k] for k in ("estimate", "lower", "upper", "decided", "procedure")}
    out = {**row, "one_facet": keep, "levels": workers, "facet": "worker",
           "levels_text": f"{clusters} contexts x {workers} workers",
           "procedure": f"two-facet {SPLIT_PROCEDURE.replace('the difference', 'the rate')}, over contexts and "
                        f"workers"}
    if not len(looks) or not seq["informative"][0].any():
        few, facet = (workers, "workers") if workers <= clusters else (clusters, "contexts")
        return out | {"lower": 0.0, "upper": 1.0,
                      "note": (f"{few} {facet}: an interval about the models needs at least {need}" if few < need else
                               "every context and worker has the same value, so no interval follows yet")}
    dec = crossed_decide(seq, -1.0)  # no null: only the running intersection
    return out | {"lower": float(dec["lower"][0]), "upper": float(dec["upper"][0])}


def _centred(row: dict, s: dict) -> dict:
    """The protocol's estimate beside the sequence's centre (the mean of per-cluster means), both
    named; they are equal when every cluster holds one observation of the comparison."""
    centre = row.get("estimate")
    row["sequence_centre"] = centre
    row["estimate"] = s["estimate"]
    row["estimate_name"] = f"{s['measure']} (pooled, as analyze)"
    row["centre_name"] = (f"mean of per-{s['unit']} means (the sequence's centre)" if "one_facet" not in row else
                          "pooled mean (the two-facet sequence's centre)")
    row["same_centre"] = centre is not None and abs(centre - s["estimate"]) < 1e-9
    return row


def status(df: pd.DataFrame, protocol: str | None = None, alpha: float = 0.05, budget: int = 1_000_000,
           grid: int = GRID, settings: dict | None = None) -> dict:
    """Every comparison's anytime-valid state. Returns ``{"protocol", "alpha", "per_comparison_alpha",
    "rows": [...]}``; each row has the comparison (named and oriented as the protocol's estimand,
    with ``model_a`` < ``model_b``), ``estimate`` (the protocol's estimate, what ``analyze``
    prints), ``sequence_centre`` (the mean of per-cluster means the confidence sequence is centred
    on; equal to the estimate when each cluster holds one observation), lower, upper (the
    confidence sequence at the per-comparison level), decided, more (judgments likely still needed;
    None when decided or when no decision is in sight within ``budget``), clusters, judgments.

    ACUTE win rates are decided against 1/2, per-turn pick rate differences against 0. SSA rates
    have no null; two models' rates are decided apart when their sequences (each at half the
    comparison's level) are disjoint, listed as extra rows ``"B vs A"`` (B minus A).

    ``settings``: the protocol's exclusion settings, as analyze takes them (ACUTE:
    ``min_reason_chars=0`` for data collected without reasons, ``max_per_worker="none"``);
    recorded in the result.
    """
    if not 0 < alpha < 1:
        raise UserError(f"alpha {alpha} must be strictly between 0 and 1; 0.05 is usual", param="alpha")
    protocol = protocol or detect_protocol(df)
    spec = monitor(protocol)
    found = streams(df, protocol, settings)
    if any(m0 is None for m0 in spec.watch.values()):  # rates with no null: pairs decided apart
        pairs = [(s, t) for s, t in itertools.combinations(found, 2) if s["group"] == t["group"]]
        count = max(len(pairs), 1)
        each = alpha / count
        rows = [_centred(_rate_row(s, each / 2, grid), s) for s in found]
        by = {(r["group"], r["comparison"]): r for r in rows}
        rows += [_pair_row(by[(s["group"], s["comparison"])], by[(t["group"], t["comparison"])]) for s, t in pairs]
        if any("split_rows" in s for s in found):  # workers x contexts crossed: pairs decided for the models
            from parlai_acute.registry import protocol as lookup

            arrays = lookup(protocol).estimands_module().crossed_labels(df)
            for i, (s, t) in enumerate(pairs, start=len(rows) - len(pairs)):
                rows[i] = _split_pair(rows[i], s, t, arrays)
            # each model's own rate too (after the pairs, whose one_facet reads the rates' one-facet sequences)
            rows[:len(found)] = [_split_rate(r, s, arrays) for r, s in zip(rows[:len(found)], found)]
    else:
        count = max(len(found), 1)
        each = alpha / count
        rows = []
        for s in found:
            result = decide_stream(s, each, grid, budget)
            if s["difference"] and result["estimate"] is not None:  # back from (d + 1) / 2 to d in [-1, 1]
                result |= {k: 2 * result[k] - 1 for k in ("estimate", "lower", "upper")} | {"m0": 0.0}
            row = {k: s[k] for k in ("protocol", "group", "comparison", "measure", "unit", "model_a", "model_b")}
            rows.append(_centred(row | result, s))
    units = sorted({s["unit"] for s in found}) or [spec.unit]
    facet = next((s["facet_note"] for s in found if s.get("facet_note")), "")
    crossed = [s for s in found if "crossed" in s]
    over = " and ".join(u + "s" for u in units)
    design = {"facets": [spec.unit], "two_facet": 0}
    if crossed:
        name = crossed[0]["crossed"]["name"]
        facet += (f"; {len(crossed)} of {len(found)} comparison(s) reuse {name}s: their intervals treat {over} and "
                  f"{name}s both as sampled (two-facet {CROSSED_PROCEDURE.split(':')[0]}), the sequence over {over} "
                  f"alone (these {name}s fixed) shown beside them")
        design = {"facets": [spec.unit, name], "two_facet": len(crossed)}
    elif any(r.get("levels_text") for r in rows):  # SSA: workers x contexts crossed
        split = [r for r in rows if r.get("levels_text") and r.get("model_b")]
        crossing = facet.split(":")[0]  # "N of M workers label items of several contexts or conversations"
        facet = (f"{crossing}: workers x contexts crossed; every rate's and model pair's interval and decision treat "
                 f"contexts and workers both as sampled (two-facet {SPLIT_PROCEDURE.split(':')[0]}, the analysis' "
                 f"split variance), the sequences over contexts alone (these workers fixed; a pair: the two rates' "
                 f"disjoint) shown beside them")
        design = {"facets": [spec.unit, "worker"], "two_facet": len(split)}
    elif facet and any(s["facets_declared"] for s in found):
        facet += ("; within each comparison every conversation serves one judgment, so the worker is the one sampled "
                  "facet there")
    design["procedure"] = sorted({r["procedure"] for r in rows if r.get("procedure")})  # what decided the rows
    design["note"] = facet  # the facets read, and any sampled facet these sequences still hold fixed
    note = "" if found or not len(df) else (
        f"none of the {len(df)} rows passes the protocol's exclusions with these settings; analyze says which rule "
        f"removed them (released data collected without reasons, or with many judgments per worker, need the "
        f"protocol's settings for that)")
    return {"protocol": protocol, "alpha": alpha, "comparisons": count, "per_comparison_alpha": each,
            "judgments": int(len(df)), "settings": dict(settings or {}), "note": note, "rows": rows,
            "units": f"intervals run over {over}" + (f"; {facet}" if facet else ""), "design": design}


def top_k(df: pd.DataFrame, k: int, alpha: float = 0.05, models: list[str] | None = None, grid: int = GRID,
          budget: int = 1_000_000, details: bool = True, protocol: str | None = None,
          settings: dict | None = None) -> dict:
    """Is the set of the top ``k`` models decided, per question, from an ACUTE judgments table?

    Every model pair gets the anytime-valid test of :func:`status` (confidence sequences over
    workers; where the pair's conversations are reused, decided only when the two-facet sequence
    over workers and conversations agrees, :func:`decide_stream`) at alpha / (all pairs of all
    questions): pairs not judged yet count in the
    correction, so the level never depends on what has been collected. The top k is decided
    when k models are each decided ahead of every other model by direct comparisons
    (:func:`parlai_acute.stats.ranksets.top_k`; no assumption that preferences are
    transitive); the guarantee holds at every look. ``models``: the full list (default: those
    in the table). Per question: ``decided``, ``top`` (the decided set, else the current
    Bradley-Terry top k), rank-sets (meaningful when the models have a true order), and
    ``undecided``: the pairs across the current boundary still open, with (``details``) their
    estimate, interval and the judgments they likely still need. Only those pairs' intervals
    are computed: the decisions alone are cheap (435 pairs of 30 models in about a second).
    ``settings``: the protocol's exclusion settings (as :func:`status`).
    """
    if not 0 < alpha < 1:
        raise UserError(f"alpha {alpha} must be strictly between 0 and 1; 0.05 is usual", param="alpha")
    from parlai_acute.registry import protocol as lookup

    protocol = protocol or detect_protocol(df)
    pairwise = [name for name, e in lookup(protocol).estimands_module().ESTIMANDS.items() if e.pairwise]
    if not pairwise:
        raise UserError(f"the best models are ranked by win rates, and {protocol} has none; leave k out", param="k")
    # value 1: model_b (the later name) won, 1/2 a tie, as the estimand reads; a table with ties also holds
    # its tie rates, which are not win rates
    every = observations(df, protocol, settings)
    obs = every[every["measure"].isin(pairwise)]
    work = pd.DataFrame({"question": obs["group"], "first": obs["model_a"], "second": obs["model_b"],
                         "value": obs["value"], "worker": obs["cluster"], "timestamp": obs["timestamp"]})
    questions = sorted(set(work["question"])) or ["(no judgments)"]
    names = sorted(models) if models else sorted(set(work["first"]) | set(work["second"]))
    if not 1 <= k < len(names):
        raise UserError(f"k={k} needs 1 <= k < number of models ({len(names)}: {', '.join(names) or 'none yet'})",
                        param="k")
    index = {m: i for i, m in enumerate(names)}
    pairs = len(names) * (len(names) - 1) // 2
    each = alpha / (pairs * len(questions))
    # pairs whose conversations are reused: decided as status decides them (both facets sampled), once asked
    reused = {(s["group"], s["model_a"], s["model_b"]): s for s in streams_of(every, protocol)
              if "crossed" in s and s["measure"] in pairwise} if every.attrs.get("facets") else {}
    out = []
    for question in questions:
        part = work[work["question"] == question]
        ahead = np.zeros((len(names), len(names)), bool)
        wins = np.zeros_like(ahead, dtype=float)
        if len(part):  # one stream of (pair, worker) clusters in the order they finished, split by pair
            worker, workers = pd.factorize(part["worker"])
            pair = part["first"].map(index).to_numpy() * len(names) + part["second"].map(index).to_numpy()
            stream = cluster_stream(part.assign(_key=pair * len(workers) + worker), "value", "_key", "timestamp")
            code = stream["cluster"].to_numpy() // len(workers)
            order = np.argsort(code, kind="stable")  # by pair, each in finishing order
            means, sizes = stream["mean"].to_numpy(float)[order], stream["judgments"].to_numpy()[order]
            codes, starts = np.unique(code[order], return_index=True)
            for c, x, n in zip(codes, np.split(means, starts[1:]), np.split(sizes, starts[1:])):
                i, j = divmod(int(c), len(names))  # i: model_a, j: model_b; x: model_b's share per worker
                _, decided, _ = first_crossing(x, n, each)
                if decided != "undecided" and (question, names[i], names[j]) in reused:  # also for the models?
                    decided = _agreed(decided, _two_facet(reused[(question, names[i], names[j])], each, 0.5)[2])
                ahead[j, i], ahead[i, j] = decided == "above", decided == "below"
                wins[j, i], wins[i, j] = float(x @ n), float(n.sum() - x @ n)
        state = ranksets.top_k(ahead, k)
        lower, upper = ranksets.rank_sets(ahead)
        decided = bool(state["decided"])
        if decided:
            top = state["top"]
        else:
            top = np.zeros(len(names), bool)
            top[np.argsort(-fit_counts(wins), kind="stable")[:k]] = True
        undecided = []
        for i in np.flatnonzero(top):
            for j in np.flatnonzero(~top):
                if ahead[i, j]:
                    continue
                a, b = (i, j) if i < j else (j, i)  # the estimand's order: b's win rate over a
                row = {"pair": f"{names[b]} vs {names[a]}", "models": [names[i], names[j]],
                       "decided": ("above" if ahead[b, a] else "below") if ahead[j, i] else "undecided"}
                if details and (question, names[a], names[b]) in reused:  # the two-facet interval, as status
                    full = decide_stream(reused[(question, names[a], names[b])], each, grid, budget)
                    row |= {key: full[key] for key in ("estimate", "lower", "upper", "more", "judgments", "note")}
                    row |= {"sequence_centre": full["estimate"], "procedure": full["procedure"],
                            "one_facet": full["one_facet"]}
                elif details:
                    rows = part[(part["first"] == names[a]) & (part["second"] == names[b])]
                    full = decide(cluster_stream(rows, "value", "worker", "timestamp"), each, 0.5, grid, budget)
                    row |= {key: full[key] for key in ("estimate", "lower", "upper", "more", "judgments")}
                    row["sequence_centre"] = full["estimate"]
                    row["estimate"] = float(rows["value"].mean()) if len(rows) else None
                undecided.append(row)
        out.append({"question": question, "decided": decided, "top": [names[i] for i in np.flatnonzero(top)],
                    "rank_sets": {m: [int(lower[i]), int(upper[i])] for i, m in enumerate(names)},
                    "undecided": undecided, "judgments": int(len(part))})
    method = (f"direct pairwise decisions by confidence sequences over workers, Bonferroni over all pairs "
              f"({pairs * len(questions)} pair{'' if pairs * len(questions) == 1 else 's'})")
    facets = ""
    if reused:
        method += (f"; a pair whose conversations are reused is decided only when the two-facet {CROSSED_PROCEDURE}, "
                   f"over workers and conversations, agrees (as status)")
        facets = (f"{len(reused)} judged pair(s) reuse conversations: their decisions treat workers and conversations "
                  f"both as sampled, so the top k is a claim about the models")
    elif every.attrs.get("facet_note"):
        facets = ("conversations are reused, but within each pair every conversation serves one judgment, so the "
                  "worker is the one sampled facet there")
    return {"k": k, "alpha": alpha, "per_pair_alpha": each, "pairs": pairs * len(questions), "models": names,
            "decided": all(q["decided"] for q in out), "questions": out, "method": method, "facets": facets,
            "design": {"facets": ["worker", "conversation"] if reused else ["worker"], "two_facet": len(reused)}}


def top_k_lines(result: dict) -> list[str]:
    """The top-k verdict as text, one block per question."""
    lines = [f"top {result['k']} of {len(result['models'])} models ({', '.join(result['models'])}; a model not judged "
             f"yet is not counted): alpha {result['alpha']:g} over all {result['pairs']} pair(s) "
             f"({result['per_pair_alpha']:.3g} each); decided when each of the k is decided ahead of every model "
             f"outside by its own confidence sequence" + (f"; {result['facets']}" if result.get("facets") else "")]
    for q in result["questions"]:
        still_open = sum(u["decided"] == "undecided" for u in q["undecided"])  # the rest: decided the other way
        verdict = "DECIDED" if q["decided"] else f"undecided, {still_open} pair(s) across the boundary open"
        lines.append(f"[{q['question']}] top {result['k']}: {', '.join(q['top'])}"
                     f"{'' if q['decided'] else ' (current estimate)'}  {verdict}")
        for u in q["undecided"]:
            more = ("no judgments yet" if u["estimate"] is None else f"~{u['more']} more judgments" if u["more"]
                    else "no decision in sight" if u["decided"] == "undecided" else "decided the other way")
            if (u.get("one_facet") or {}).get("decided", "undecided") != "undecided" and u["decided"] == "undecided":
                more += "; decided for these conversations only, not yet for the models"
            lines.append(f"    {u['pair']:<32} {_pct(u['estimate'])} [{_pct(u['lower'])}, {_pct(u['upper'])}]  "
                         f"{u['judgments']} judgments, {more}")
        sets = "  ".join(f"{m} {lo}-{hi}" if lo != hi else f"{m} {lo}"
                         for m, (lo, hi) in sorted(q["rank_sets"].items(), key=lambda kv: (kv[1], kv[0])))
        lines.append(f"    rank-sets (if the models have a true order): {sets}")
    return lines


def _rate_row(s: dict, alpha: float, grid: int) -> dict:
    x = s["stream"]["mean"].to_numpy(float)
    base = {k: s[k] for k in ("protocol", "group", "comparison", "measure", "unit", "model_a", "model_b")}
    base |= {"clusters": int(x.size), "judgments": int(s["stream"]["judgments"].sum()), "alpha": alpha,
             "decided": "rate (no null)", "more": None, "decided_at_judgments": None, "m0": None,
             "procedure": f"betting confidence sequence over {s['unit']}s"}
    if not x.size:
        return base | {"estimate": None, "lower": None, "upper": None, "note": "no labels yet"}
    cs = confidence_sequence(x, alpha, grid=grid)
    return base | {"estimate": float(x.mean()), "lower": float(cs["lower"][-1]), "upper": float(cs["upper"][-1]),
                   "note": ""}


def _pair_row(a: dict, b: dict) -> dict:
    """Two models' rates (``a`` the earlier name): B minus A, decided apart when their sequences
    are disjoint (a valid test of equal rates at the sum of their levels, at every look)."""
    row = {"protocol": a["protocol"], "group": a["group"], "comparison": f"{b['comparison']} vs {a['comparison']}",
           "measure": f"{a['measure']} difference", "unit": a["unit"], "model_a": a["comparison"],
           "model_b": b["comparison"], "clusters": a["clusters"] + b["clusters"],
           "judgments": a["judgments"] + b["judgments"], "alpha": a["alpha"] * 2, "m0": 0.0, "more": None,
           "decided_at_judgments": None, "note": "decided when the two rates' sequences are disjoint",
           "rates_apart": True}
    if a["estimate"] is None or b["estimate"] is None:
        return row | {"estimate": None, "sequence_centre": None, "lower": None, "upper": None, "decided": "undecided"}
    lower, upper = b["lower"] - a["upper"], b["upper"] - a["lower"]
    decided = "above" if lower > 0 else "below" if upper < 0 else "undecided"
    return row | {"estimate": b["estimate"] - a["estimate"], "lower": lower, "upper": upper, "decided": decided,
                  "sequence_centre": b["sequence_centre"] - a["sequence_centre"],
                  "same_centre": bool(a.get("same_centre") and b.get("same_centre")),
                  "estimate_name": f"{a['measure']} difference (pooled, as analyze)",
                  "centre_name": a.get("centre_name", "")}


def _pct(value) -> str:
    return "   n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:6.1f}"


def status_lines(result: dict) -> list[str]:
    """The status as text, one comparison a line, then the legend."""
    lines = [f"{result['protocol']}: {result['judgments']} rows, {result['comparisons']} comparison(s); "
             f"intervals are confidence sequences valid at every look (alpha {result['alpha']:g} over all, "
             f"{result['per_comparison_alpha']:.3g} each)"]
    if result.get("units"):
        lines.append(f"unit: {result['units']}")
    if result.get("note"):
        lines.append(f"NOTE: {result['note']}")
    if result.get("settings"):
        lines.append("settings: " + ", ".join(f"{k}={v!r}" for k, v in result["settings"].items()) +
                     " (the rows analyze keeps with the same settings)")
    group = None
    for row in result["rows"]:
        if row["group"] != group:
            group = row["group"]
            lines.append(f"[{group}]")
        verdict = {"above": f"DECIDED: {row['model_b']} ahead",
                   "below": f"DECIDED: {row['model_a']} ahead"}.get(row["decided"], row["decided"])
        if row.get("rates_apart") and row["decided"] in ("above", "below"):
            verdict = "DECIDED: rates differ"
        if row["decided"] == "undecided":
            verdict += (f", ~{row['more']} more judgments" if row["more"] else ", no decision in sight")
        if row["decided_at_judgments"]:
            verdict += f" (at {row['decided_at_judgments']} judgments)"
        centre = "" if row.get("same_centre", True) or row.get("sequence_centre") is None else (
            f" (sequence centred on {_pct(row['sequence_centre']).strip()}, the {row['centre_name']})")
        lines.append(f"  {row['comparison']:<32} {row['measure']:<28} {_pct(row['estimate'])} "
                     f"[{_pct(row['lower'])}, {_pct(row['upper'])}]{centre}  {row['clusters']} {row['unit']}s, "
                     f"{row['judgments']} judgments  {verdict}")
        one = row.get("one_facet")
        if one:  # two sampled facets: the interval above treats both as random; the one-facet sequence beside it
            levels = row.get("levels_text") or f"{row['levels']} {row['facet']}s per model"
            lines.append(f"    two facets ({levels}); over {row['unit']}s alone, "
                         f"these {row['facet']}s fixed: [{_pct(one['lower']).strip()}, {_pct(one['upper']).strip()}] "
                         f"{one['decided']}" + (f"; {row['note']}" if row.get("note") else ""))
    lines.append("estimate: the protocol's, as analyze reports it (pooled); interval: the confidence sequence, "
                 "centred on the mean of per-cluster means (said where the two differ)")
    lines.append("more: judgments still to collect before the interval would exclude no difference, if the "
                 "estimate held (a projection, not a promise)")
    return lines
