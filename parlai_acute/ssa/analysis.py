"""Sensibleness, specificity and SSA per model, with intervals that respect the design.

From a labels table (:mod:`parlai_acute.ssa.labels`):

* **majority labels** per item, as in Meena (5 labels per item, majority vote): an item is
  sensible when *more than half* of its labels say so, specific likewise. **Ties** (an even
  number of labels split evenly) count as *no*: a reply has to convince a majority of
  its workers. Ties are counted and reported, so a run with 2 or 4 labels per item shows
  how much the rule matters. Because a label that is not sensible is never specific, an
  item with a specific majority also has a sensible majority.
* **sensibleness** and **specificity** of a model: the share of its items with a sensible
  (specific) majority; **SSA** is their average. The label-level shares (every label
  counted) are given beside them.
* **intervals**: an exact Clopper-Pearson interval for sensibleness and specificity that
  treats items as independent, and a percentile **cluster bootstrap** for all three
  measures. The bootstrap resamples clusters: a whole *conversation* for interactive and
  log items (its replies share a chat and a worker), otherwise the *context* (``context_id``:
  every model's reply to one context moves together, so differences between models are
  paired), otherwise the item. A bootstrap interval is never zero-width: when every resample
  agrees (e.g. all items sensible) it is reported as missing and the exact interval stands.
* **pairwise comparisons**: for every pair of models and each measure, the difference and
  the **mark**: a cluster-aware randomisation test (:mod:`parlai_acute.stats.inference`) over
  conversations (interactive and log items: the models of whole conversations permuted),
  contexts (static items: each context's difference sign-flipped) or, with ``unit="worker"``,
  workers (each worker's own difference sign-flipped), with its inverted interval; beside it,
  for sensibleness and specificity, Fisher's exact test on the item counts (items
  independent). Each family of p-values is Holm-corrected over the pairs (statsmodels).
  Too few clusters for a calibrated test: no mark, and a "FEW ..." note says how many more.
* **workers x contexts** (issue 23): in static SSA a worker labels replies to many contexts, so
  the test over contexts holds *these* workers fixed, and a worker's taste for one model runs
  through all their labels. Where the table shows a worker across several contexts (unit
  ``auto``), the mark and interval treat both as sampled
  (:func:`parlai_acute.stats.inference.difference_split_tests`: the majorities' residuals over
  contexts with CR2, their linear part in each label over workers, a t on the number of contexts
  that carry the context variance, at most min(contexts, workers) - 1 df; measured 3.55-4.75 % at
  a nominal 5 %, coverage 95.25-96.45 % with the models equal and 95.0-96.8 % at a weak and a
  strong effect, at 8 to 60 levels, where putting each reply's whole residual in its workers'
  cells fired 7-12 %, and a t on min(contexts, workers) - 1 df covered 90.65 % at the strong
  effect and 8 levels), the test over
  contexts stays as ``context_pvalue``, fewer than 6 workers or contexts give no mark with the
  sentence of what is needed, and :attr:`SSAResult.design` says what was read and why.
* **agreement** among workers on items labelled at least twice: percent agreement (share
  of agreeing pairs of labels) and Krippendorff's alpha (nominal) with a bootstrap interval
  over items, for each question.
* **workers**: labels, rates and agreement with the item majority, to spot careless ones.

Everything is a pure function of the table and :class:`SSAConfig`; results record both.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.result import Result
from parlai_acute.stats import agreement as agree
from parlai_acute.stats import inference
from parlai_acute.stats.intervals import clopper_pearson, percentile_interval
from parlai_acute.stats.paired import fisher_exact
from parlai_acute.stats.resample import resample_weights
from parlai_acute.stats.settings import Settings
from parlai_acute.stats.multitest import holm

MEASURES = ("sensibleness", "specificity", "ssa")
UNITS = ("auto", "conversation", "context", "worker")
TIE_RULE = "a tie (exactly half of an item's labels) counts as no"


@dataclass
class SSAConfig(Settings):
    """Everything that changes the results; recorded in every output."""

    min_workers: int = 5
    unit: str = "auto"  # cluster of the marks: auto (conversation, else context), conversation, context or worker
    permutations: int = 10_000  # sign patterns / arrangements of the cluster-aware tests

    def __post_init__(self):
        super().__post_init__()
        if self.unit not in UNITS:
            raise UserError(f"unit must be one of {', '.join(UNITS)}, got {self.unit!r}", param="unit")
        if self.permutations < 100:
            raise UserError(f"permutations must be at least 100, got {self.permutations}", param="permutations")

    def interval_names(self) -> dict:
        level = f"{100 * self.confidence:g}%"
        return {"exact": f"{level} Clopper-Pearson (items independent)",
                "bootstrap": f"{level} percentile cluster bootstrap ({self.bootstrap} resamples, seed {self.seed}; "
                             f"clusters: conversations, else contexts, else items)"}


# ---------------------------------------------------------------- items

def cluster_of(items: pd.DataFrame) -> pd.Series:
    """The resampling cluster of each item: its conversation, else its context, else itself."""
    conv, ctx = items["conversation"].astype(str), items["context_id"].astype(str)
    return pd.Series(np.where(conv != "", "conversation:" + conv,
                              np.where(ctx != "", "context:" + ctx, "item:" + items["item"].astype(str))),
                     index=items.index)


def majority_labels(df: pd.DataFrame) -> pd.DataFrame:
    """One row per item: its labels, yes-votes per question, majority verdicts and ties."""
    if df.empty:
        raise UserError("no labels to analyse; the labels table has no rows")
    grouped = df.groupby("item", sort=True)
    first = grouped[["model", "source", "context_id", "conversation", "turn", "context", "reply"]].first()
    votes = grouped.agg(labels=("worker", "size"), sensible_votes=("sensible", "sum"),
                        specific_votes=("specific", "sum"))
    items = first.join(votes).reset_index()
    n = items["labels"].to_numpy()
    for question, votes_col in (("sensible", "sensible_votes"), ("specific", "specific_votes")):
        yes = items[votes_col].to_numpy()
        items[question] = 2 * yes > n
        items[f"{question}_tie"] = 2 * yes == n
    items["cluster"] = cluster_of(items)
    return items


# ---------------------------------------------------------------- per model

def _rates(sums: np.ndarray) -> np.ndarray:
    """(..., models, 3) sums [items, sensible, specific] -> (..., models, 3) rates [sens, spec, ssa]."""
    with np.errstate(invalid="ignore", divide="ignore"):
        sens = sums[..., 1] / sums[..., 0]
        spec = sums[..., 2] / sums[..., 0]
    return np.stack([sens, spec, (sens + spec) / 2], axis=-1)


def bootstrap_rates(items: pd.DataFrame, models: list[str], resamples: int, seed: int) -> np.ndarray | None:
    """(resamples, models, 3) bootstrap rates; clusters drawn with replacement, all models at once."""
    if resamples <= 0:
        return None
    cluster = pd.factorize(items["cluster"])[0]
    model = pd.Index(models).get_indexer(items["model"])
    g, m = int(cluster.max()) + 1, len(models)
    sums = np.zeros((g, m, 3))
    np.add.at(sums, (cluster, model, 0), 1.0)
    np.add.at(sums, (cluster, model, 1), items["sensible"].to_numpy(float))
    np.add.at(sums, (cluster, model, 2), items["specific"].to_numpy(float))
    out = np.empty((resamples, m, 3))
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, 20_000_000 // max(g, 1)))
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        weights = resample_weights(g, b, rng).astype(float)
        out[start:start + b] = _rates((weights @ sums.reshape(g, m * 3)).reshape(b, m, 3))
    return out


def model_table(df: pd.DataFrame, items: pd.DataFrame, boot: np.ndarray | None, models: list[str],
                config: SSAConfig) -> pd.DataFrame:
    rows = []
    labels = df.groupby("model")
    for j, model in enumerate(models):
        mine = items[items["model"] == model]
        n = len(mine)
        k_sens, k_spec = int(mine["sensible"].sum()), int(mine["specific"].sum())
        sens, spec = k_sens / n, k_spec / n
        lab = labels.get_group(model)
        row = {"model": model, "items": n, "labels": len(lab), "workers": int(lab["worker"].nunique()),
               "clusters": int(mine["cluster"].nunique()),
               "conversations": int(mine.loc[mine["conversation"] != "", "conversation"].nunique()),
               "sensibleness": sens, "specificity": spec, "ssa": (sens + spec) / 2,
               "sensible_items": k_sens, "specific_items": k_spec,
               "sensible_ties": int(mine["sensible_tie"].sum()), "specific_ties": int(mine["specific_tie"].sum()),
               "label_sensibleness": float(lab["sensible"].mean()), "label_specificity": float(lab["specific"].mean())}
        row["sensibleness_exact_low"], row["sensibleness_exact_high"] = clopper_pearson(k_sens, n, config.confidence)
        row["specificity_exact_low"], row["specificity_exact_high"] = clopper_pearson(k_spec, n, config.confidence)
        for q, measure in enumerate(MEASURES):
            low = high = float("nan")
            if boot is not None:
                lo, hi = percentile_interval(boot[:, j, q][:, None], config.confidence)
                low, high = float(lo[0]), float(hi[0])
            row[f"{measure}_boot_low"], row[f"{measure}_boot_high"] = low, high
        row["few_workers"] = row["workers"] < config.min_workers
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["ssa", "model"], ascending=[False, True], kind="stable").reset_index(drop=True)


def _unit_of(items: pd.DataFrame, config: SSAConfig) -> str:
    """The cluster of the marks: interactive and log items move with their conversation,
    static items with their context (every model's reply to it), unless asked otherwise."""
    if config.unit != "auto":
        return config.unit
    return "conversation" if (items["conversation"].astype(str) != "").all() else "context"


def _item_values(items: pd.DataFrame) -> np.ndarray:
    """(items, 3): sensible, specific and their average (the item's SSA) as numbers."""
    sens, spec = items["sensible"].to_numpy(float), items["specific"].to_numpy(float)
    return np.column_stack([sens, spec, (sens + spec) / 2])


def cluster_tests(df: pd.DataFrame, items: pd.DataFrame, a: str, b: str, unit: str,
                  config: SSAConfig) -> list[inference.ClusterTest]:
    """The cluster-aware test of b - a for each measure.

    ``conversation``/``context``: when each cluster holds replies of one model only
    (interactive SSA) the models of whole clusters are permuted; when clusters hold both
    (static contexts) each cluster's mean difference is sign-flipped, over the clusters
    that hold both. ``worker``: each label counts, each worker's mean label of b minus of
    a is sign-flipped over the workers who labelled both (static labelling, where one
    worker's taste runs through all their labels)."""
    kwargs = dict(unit=unit, alpha=config.alpha, confidence=config.confidence, seed=config.seed,
                  n_resamples=config.permutations)
    if unit == "worker":
        rows = df[df["model"].isin([a, b])]
        key = rows["worker"].astype(str).to_numpy()
    else:
        rows = items[items["model"].isin([a, b])]
        key = (rows["conversation"] if unit == "conversation" else rows["context_id"]).astype(str).to_numpy()
        key = np.where(key != "", key, "item:" + rows["item"].astype(str).to_numpy())
    values = _item_values(rows)
    codes, names = pd.factorize(key)
    is_b = (rows["model"] == b).to_numpy()
    g = len(names)
    count_a = np.bincount(codes[~is_b], minlength=g).astype(float)
    count_b = np.bincount(codes[is_b], minlength=g).astype(float)
    if unit != "worker" and not ((count_a > 0) & (count_b > 0)).any():
        return [inference.two_sample_cluster_test(values[:, q], np.where(is_b, "b", "a"), codes, **kwargs)
                for q in range(len(MEASURES))]
    both = (count_a > 0) & (count_b > 0)
    diffs = np.column_stack([
        np.bincount(codes[is_b], weights=values[is_b, q], minlength=g)[both] / count_b[both]
        - np.bincount(codes[~is_b], weights=values[~is_b, q], minlength=g)[both] / count_a[both]
        for q in range(len(MEASURES))]) if both.any() else np.full((1, len(MEASURES)), np.nan)
    return inference.paired_cluster_tests(diffs, np.flatnonzero(both) if both.any() else [0], **kwargs)


def workers_cross_contexts(df: pd.DataFrame) -> bool:
    """True when some worker labelled replies to more than one static context: workers and contexts
    are then crossed, and a worker's taste runs through many contexts (each context's labels are
    not independent of the others')."""
    static = df[(df["context_id"].astype(str) != "") & (df["conversation"].astype(str) == "")]
    if static.empty:
        return False
    return bool((static.groupby("worker")["context_id"].nunique() > 1).any())


def crossed_arrays(df: pd.DataFrame, items: pd.DataFrame) -> dict:
    """The integer arrays :func:`crossed_tests` needs, built once for every pair: each item's model,
    context and values; each label's item, worker and linear part (vote times its model's share of
    pivotal labels, per question; SSA their mean), and its votes and pivots per question (sensible,
    specific), from which status rescales the linear parts at each look of its two-facet sequence."""
    model, _ = pd.factorize(items["model"])
    label_item = pd.Index(items["item"]).get_indexer(df["item"])
    n_labels = items["labels"].to_numpy()[label_item]
    parts, votes, pivots = [], [], []
    for question in ("sensible", "specific"):
        vote = df[question].to_numpy(float)
        others = items[f"{question}_votes"].to_numpy(float)[label_item] - vote
        votes.append(vote)
        pivots.append(inference.pivotal(others, n_labels))
        parts.append(inference.scaled_votes(model[label_item], vote, pivots[-1]))
    parts.append((parts[0] + parts[1]) / 2)
    context = items["context_id"].astype(str).to_numpy()  # a reply without a context is its own cluster
    context = np.where(context != "", context, "item:" + items["item"].astype(str).to_numpy())
    return {"names": items["model"].to_numpy(), "model": model, "context": pd.factorize(context)[0],
            "values": _item_values(items), "label_item": label_item,
            "worker": pd.factorize(df["worker"].astype(str))[0], "parts": np.column_stack(parts),
            "votes": np.column_stack(votes), "pivots": np.column_stack(pivots)}


def crossed_tests(arrays: dict, a: str, b: str, config: SSAConfig,
                  one_facet: list[inference.ClusterTest]) -> list[inference.ClusterTest]:
    """The headline test of b - a for each measure when workers and contexts are crossed: both
    sampled (:func:`parlai_acute.stats.inference.difference_split_tests`: the item majorities'
    residuals over contexts with CR2, their linear part in each label over workers, a t on the
    contexts that carry the variance, at most min(contexts, workers) - 1 df; ``arrays`` from
    :func:`crossed_arrays`). Fewer than
    :func:`~parlai_acute.stats.inference.min_clusters` levels of either facet: no test, and the
    reason says what the test over contexts shows and how many are needed (``one_facet``: the
    tests over contexts, per measure)."""
    names = arrays["names"]
    keep = np.flatnonzero((names == a) | (names == b))
    position = np.full(len(names), -1)
    position[keep] = np.arange(len(keep))
    label_item = position[arrays["label_item"]]
    mine = label_item >= 0
    label_item = label_item[mine]
    is_b = names[keep] == b
    m, n_labels = len(MEASURES), len(label_item)
    res = inference.difference_split_tests(
        np.zeros(len(keep), np.int64), is_b, arrays["values"][keep], arrays["context"][keep], label_item,
        arrays["worker"][mine], arrays["parts"][mine], 1, config.confidence)
    res = {k: v[0] if k != "levels" else v for k, v in res.items()}
    g_c, g_w = int(res["levels"][0, 0]), int(res["levels"][1, 0])
    need = max(inference.min_clusters(config.alpha), inference.min_clusters(1 - config.confidence))
    out = []
    for q in range(m):
        df = float(res["df"][q]) if np.isfinite(res["df"][q]) else float(min(g_c, g_w) - 1)
        method = (f"two-way cluster-robust t over workers and contexts (CR2 on contexts, item majorities split into "
                  f"their labels' linear parts, t on {df:.3g} df: the contexts that carry the variance, at most "
                  f"min(contexts, workers) - 1 = {min(g_c, g_w) - 1})")
        base = dict(estimate=float(res["estimate"][q]), method=method, unit="worker x context",
                    n_clusters=min(g_c, g_w), n_judgments=n_labels, confidence=config.confidence,
                    interval_method="t interval")
        short = min(g_c, g_w) < need
        if short:
            facet, g = ("workers", g_w) if g_w <= g_c else ("contexts", g_c)
            p_one = one_facet[q].p_value
            shown = "no p-value" if p_one is None else f"p = {p_one:.3g}"
            reason = (f"{g} {facet}: the difference holds for these {facet} (test over contexts, {shown}); at least "
                      f"{need} {facet} are needed for a verdict about the models")
            out.append(inference.ClusterTest(p_value=None, low=None, high=None, reason=reason, clusters_needed=need,
                                             **base))
        elif not np.isfinite(res["p"][q]):
            out.append(inference.ClusterTest(
                p_value=1.0 if base["estimate"] == 0 else None, low=None, high=None, clusters_needed=None,
                reason="every context and worker has the same difference, so no test or interval follows", **base))
        else:
            out.append(inference.ClusterTest(p_value=float(res["p"][q]), low=float(res["low"][q]),
                                             high=float(res["high"][q]), reason=None, clusters_needed=None, **base))
    return out


def design_text(df: pd.DataFrame, items: pd.DataFrame, config: SSAConfig) -> str:
    """One sentence for the terminal, the report and run.json: which facets the marks treat as
    sampled, and why (what :func:`pair_table` read from the table)."""
    unit = _unit_of(items, config)
    if config.unit != "auto":
        return f"clustered by {unit} as asked"
    if unit == "conversation":
        return ("every reply belongs to a conversation, so conversations are the sampled unit: marks from the "
                "randomisation test over conversations")
    if workers_cross_contexts(df):
        static = df[df["context_id"].astype(str) != ""]
        return (f"workers x contexts crossed ({static['worker'].nunique()} workers labelled replies to "
                f"{static['context_id'].nunique()} contexts, a worker across several contexts): both sampled, so marks "
                f"and intervals come from the two-way cluster-robust t over workers and contexts (CR2 on contexts, "
                f"each item majority split into its labels' linear parts over workers, t on the contexts that carry the "
                f"variance, at most min(contexts, workers) - 1 df); the sign-flip test over contexts, a verdict about these workers, is the secondary column "
                f"context_pvalue")
    return ("each worker labelled replies to one context, so workers are nested in contexts: marks from the "
            "sign-flip test over contexts")


def pair_table(df: pd.DataFrame, items: pd.DataFrame, models: list[str], table: pd.DataFrame,
               config: SSAConfig) -> pd.DataFrame:
    """Every pair (a, b), a before b in ``models``: difference b - a per measure, the
    cluster-aware test behind the mark (:func:`cluster_tests`) and, for sensibleness and
    specificity, Fisher's exact test on the item counts (items independent)."""
    by_model = table.set_index("model")
    unit = _unit_of(items, config)
    crossed = config.unit == "auto" and unit == "context" and workers_cross_contexts(df)
    arrays = crossed_arrays(df, items) if crossed else None
    rows = []
    for a, b in itertools.combinations(models, 2):
        tests = cluster_tests(df, items, a, b, unit, config)
        one_facet = tests
        if crossed:
            tests = crossed_tests(arrays, a, b, config, one_facet)
        for measure, test, one in zip(MEASURES, tests, one_facet):
            row = {"model_a": a, "model_b": b, "measure": measure, "value_a": by_model.at[a, measure],
                   "value_b": by_model.at[b, measure], "diff": by_model.at[b, measure] - by_model.at[a, measure],
                   "unit": test.unit, "clusters": test.n_clusters, "cluster_estimate": test.estimate,
                   # a difference of rates lies in [-1, 1]: the inverted interval is clipped to it
                   "cluster_low": np.nan if test.low is None else max(-1.0, test.low),
                   "cluster_high": np.nan if test.high is None else min(1.0, test.high),
                   "cluster_pvalue": np.nan if test.p_value is None else test.p_value,
                   "cluster_note": (test.reason or "") if crossed else inference.shortfall(test) or (test.reason or ""), "cluster_method": test.method,
                   "clusters_needed": test.clusters_needed,
                   "context_pvalue": np.nan if one.p_value is None else one.p_value,
                   "context_low": np.nan if one.low is None else max(-1.0, one.low),
                   "context_high": np.nan if one.high is None else min(1.0, one.high)}
            if not crossed:  # the one-facet test is the headline: no secondary column
                row["context_pvalue"] = row["context_low"] = row["context_high"] = np.nan
            if measure == "ssa":
                row["fisher_pvalue"] = float("nan")
            else:
                count = "sensible_items" if measure == "sensibleness" else "specific_items"
                row["fisher_pvalue"] = fisher_exact(int(by_model.at[a, count]), int(by_model.at[a, "items"]),
                                                    int(by_model.at[b, count]), int(by_model.at[b, "items"]))
            rows.append(row)
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS[:-3])
    for test in ("cluster", "fisher"):
        pairs[f"{test}_p_holm"] = np.nan
        for measure, group in pairs.groupby("measure"):
            pairs.loc[group.index, f"{test}_p_holm"] = holm(group[f"{test}_pvalue"].to_numpy(float))
    pairs["mark"] = [inference.mark(p, config.alpha) for p in pairs["cluster_p_holm"]]
    return pairs[PAIR_COLUMNS]


PAIR_COLUMNS = ["model_a", "model_b", "measure", "value_a", "value_b", "diff", "unit", "clusters",
                "cluster_estimate", "cluster_low",
                "cluster_high", "cluster_pvalue", "cluster_note", "cluster_method", "clusters_needed",
                "context_pvalue", "context_low", "context_high",
                "fisher_pvalue", "fisher_p_holm", "cluster_p_holm", "mark"]
#: The test columns in words (report and exports).
PAIR_HEADERS = {"cluster_estimate": "difference tested", "cluster_low": "low", "cluster_high": "high", "cluster_pvalue": "p (cluster-aware)",
                "cluster_p_holm": "Holm p (cluster-aware)", "cluster_note": "note",
                "fisher_pvalue": "p (Fisher exact, items independent)",
                "context_pvalue": "p (sign-flip over contexts, these workers)",
                "fisher_p_holm": "Holm p (Fisher exact, items independent)"}


# ---------------------------------------------------------------- agreement and workers

def vote_counts(items: pd.DataFrame, question: str) -> pd.DataFrame:
    """Items labelled at least twice: columns 0 and 1 = labels saying no / yes."""
    many = items[items["labels"] >= 2]
    yes = many[f"{question}_votes"].to_numpy()
    return pd.DataFrame({0: many["labels"].to_numpy() - yes, 1: yes}, index=many["item"].to_numpy())


def agreement_table(items: pd.DataFrame, config: SSAConfig) -> pd.DataFrame:
    rows = []
    for question in ("sensible", "specific"):
        counts = vote_counts(items, question)
        a = agree.agreement_of_counts(counts, config.bootstrap, config.seed, config.confidence)
        rows.append({"question": question, "items": a["items"], "labels": int(counts.to_numpy().sum()),
                     "percent_agreement": a["percent_agreement"], "krippendorff_alpha": a["krippendorff_alpha"],
                     "alpha_low": a["alpha_ci_low"], "alpha_high": a["alpha_ci_high"], "note": a["note"]})
    return pd.DataFrame(rows)


def worker_table(df: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Per worker: labels, own rates, and how often each label matches the item's majority
    (items with at least 3 labels, where one label cannot decide the majority alone)."""
    majority = items.set_index("item")[["sensible", "specific", "labels"]]
    joined = df[["worker", "item", "sensible", "specific"]].join(majority, on="item", rsuffix="_majority")
    decided = joined["labels"] >= 3
    joined["agree_sensible"] = np.where(decided, joined["sensible"] == joined["sensible_majority"], np.nan)
    joined["agree_specific"] = np.where(decided, joined["specific"] == joined["specific_majority"], np.nan)
    table = joined.groupby("worker").agg(labels=("item", "size"), sensible_rate=("sensible", "mean"),
                                         specific_rate=("specific", "mean"),
                                         agree_sensible=("agree_sensible", "mean"),
                                         agree_specific=("agree_specific", "mean"))
    return table.reset_index().sort_values(["labels", "worker"], ascending=[False, True], kind="stable")


# ---------------------------------------------------------------- the whole analysis

@dataclass
class SSAResult(Result):
    """The analysis of a labels table; ``summary()``, ``meta()``, ``tables()`` and ``warnings()`` as
    every protocol's result (:class:`parlai_acute.result.Result`); ``notes`` are its warnings."""

    protocol: ClassVar[str] = "ssa"
    config: SSAConfig
    labels: pd.DataFrame
    items: pd.DataFrame
    models: pd.DataFrame
    pairs: pd.DataFrame
    agreement: pd.DataFrame
    workers: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    design: str = ""  # which facets the marks treat as sampled, and why (design_text)

    def provenance(self) -> dict:
        """What was labelled (labels, items, workers, models, sources), the tie rule and the intervals."""
        return {"labels": len(self.labels), "items": len(self.items), "workers": int(self.labels["worker"].nunique()),
                "models": self.models["model"].tolist(), "sources": sorted(self.labels["source"].unique()),
                "normalised_specific": int(self.labels.attrs.get("normalised_specific", 0)),
                "tie_rule": TIE_RULE, "intervals": self.config.interval_names(), "design": self.design}

    def own_tables(self) -> dict[str, pd.DataFrame]:
        return {"models": self.models, "pairs": self.pairs, "items": self.items, "agreement": self.agreement,
                "workers": self.workers}

    def warnings(self) -> list[str]:
        return list(self.notes)


def analyze(df: pd.DataFrame, config: SSAConfig | None = None) -> SSAResult:
    """The whole SSA analysis of a labels table (see the module docstring)."""
    config = config or SSAConfig()
    items = majority_labels(df)
    models = sorted(items["model"].unique())
    boot = bootstrap_rates(items, models, config.bootstrap, config.seed)
    table = model_table(df, items, boot, models, config)
    pairs = pair_table(df, items, models, table, config)
    notes = []
    per_item = items["labels"]
    if per_item.max() < 3:
        notes.append(f"items have at most {per_item.max()} label(s): majorities rest on one or two workers "
                     f"(Meena used 5 per item)")
    ties = int(items["sensible_tie"].sum() + items["specific_tie"].sum())
    if ties:
        notes.append(f"{ties} majority vote(s) were ties; {TIE_RULE}")
    needed = pd.to_numeric(pairs["clusters_needed"], errors="coerce")
    short = pairs[needed.notna() & (pairs["clusters"] < needed)]
    for p in short.drop_duplicates(["model_a", "model_b"]).itertuples(index=False):
        if p.unit == "worker x context":
            notes.append(f"FEW WORKERS OR CONTEXTS: {p.model_b} vs {p.model_a}: {p.cluster_note}; no mark")
            continue
        notes.append(f"FEW {p.unit.upper()}S: {p.model_b} vs {p.model_a} rests on {p.clusters} {p.unit}"
                     f"{'s' if p.clusters != 1 else ''}; replies of one {p.unit} are not independent, so no mark can "
                     f"be given ({p.cluster_note})")
    few = table[table["few_workers"]]["model"].tolist()
    if few:
        notes.append(f"labels of {', '.join(few)} come from fewer than {config.min_workers} workers: "
                     f"their results rest on few people")
    if df.attrs.get("normalised_specific"):
        notes.append(f"{df.attrs['normalised_specific']} label(s) said specific but not sensible; "
                     f"counted as not specific")
    return SSAResult(config, df, items, table, pairs, agreement_table(items, config), worker_table(df, items), notes,
                     design_text(df, items, config))
