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
* **pairwise comparisons**: for every pair of models and each measure, the difference, its
  bootstrap interval and two-sided bootstrap p-value (clusters resampled jointly), and for
  sensibleness and specificity Fisher's exact test on the item counts (items independent);
  each family of p-values is Holm-corrected over the pairs (statsmodels).
* **agreement** among workers on items labelled at least twice: percent agreement (share
  of agreeing pairs of labels) and Krippendorff's alpha (nominal) with a bootstrap interval
  over items, for each question.
* **workers**: labels, rates and agreement with the item majority, to spot careless ones.

Everything is a pure function of the table and :class:`SSAConfig`; results record both.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import parlai_acute
from parlai_acute.errors import UserError
from parlai_acute.stats import agreement as agree
from parlai_acute.stats.paired import bootstrap_pvalue, clopper_pearson, fisher_exact
from parlai_acute.stats.resample import percentile_interval, resample_weights
from parlai_acute.stats.winrates import holm, significance_mark

MEASURES = ("sensibleness", "specificity", "ssa")
TIE_RULE = "a tie (exactly half of an item's labels) counts as no"


@dataclass
class SSAConfig:
    """Everything that changes the results; recorded in every output."""

    bootstrap: int = 1000
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05
    min_workers: int = 5
    source: str = ""

    def __post_init__(self):
        if self.bootstrap < 0:
            raise UserError(f"--bootstrap must be 0 or more, got {self.bootstrap}")
        if not 0 < self.confidence < 1:
            raise UserError(f"--confidence must be between 0 and 1, got {self.confidence}")
        if not 0 < self.alpha < 1:
            raise UserError(f"--alpha must be between 0 and 1, got {self.alpha}")

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


def pair_table(items: pd.DataFrame, boot: np.ndarray | None, models: list[str], table: pd.DataFrame,
               config: SSAConfig) -> pd.DataFrame:
    """Every pair (a, b), a before b in ``models``: difference b - a per measure and its tests."""
    by_model = table.set_index("model")
    rows = []
    for (i, a), (j, b) in itertools.combinations(enumerate(models), 2):
        for q, measure in enumerate(MEASURES):
            diff = by_model.at[b, measure] - by_model.at[a, measure]
            row = {"model_a": a, "model_b": b, "measure": measure, "value_a": by_model.at[a, measure],
                   "value_b": by_model.at[b, measure], "diff": diff}
            if boot is not None:
                samples = boot[:, j, q] - boot[:, i, q]
                lo, hi = percentile_interval(samples[:, None], config.confidence)
                row["boot_low"], row["boot_high"] = float(lo[0]), float(hi[0])
                row["boot_pvalue"] = float(bootstrap_pvalue(diff, samples[:, None])[0])
            else:
                row["boot_low"] = row["boot_high"] = row["boot_pvalue"] = float("nan")
            if measure == "ssa":
                row["fisher_pvalue"] = float("nan")
            else:
                count = "sensible_items" if measure == "sensibleness" else "specific_items"
                row["fisher_pvalue"] = fisher_exact(int(by_model.at[a, count]), int(by_model.at[a, "items"]),
                                                    int(by_model.at[b, count]), int(by_model.at[b, "items"]))
            rows.append(row)
    pairs = pd.DataFrame(rows, columns=["model_a", "model_b", "measure", "value_a", "value_b", "diff", "boot_low",
                                        "boot_high", "boot_pvalue", "fisher_pvalue"])
    for test in ("boot", "fisher"):
        pairs[f"{test}_p_holm"] = np.nan
        for measure, group in pairs.groupby("measure"):
            p = group[f"{test}_pvalue"].to_numpy(float)
            ok = np.isfinite(p)
            if ok.any():
                adjusted = np.full(len(p), np.nan)
                adjusted[ok] = holm(p[ok])
                pairs.loc[group.index, f"{test}_p_holm"] = adjusted
    main = pairs["boot_p_holm"].where(pairs["measure"] == "ssa", pairs["fisher_p_holm"])
    main = main.where(main.notna(), pairs["boot_p_holm"])
    pairs["mark"] = [significance_mark(p) if p == p else "" for p in main]
    return pairs


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
        alpha = agree.krippendorff_alpha(None, counts) if len(counts) else float("nan")
        low, high = (agree.alpha_interval(counts, config.bootstrap, config.seed, config.confidence)
                     if np.isfinite(alpha) else (float("nan"), float("nan")))
        note = ""
        if len(counts) == 0:
            note = "no item was labelled more than once"
        elif not np.isfinite(alpha):
            note = "every label of the repeated items was the same, so alpha is undefined"
        elif not np.isfinite(low):
            note = "too few repeated items for an interval"
        rows.append({"question": question, "items": len(counts), "labels": int(counts.to_numpy().sum()),
                     "percent_agreement": agree.percent_agreement(None, counts) if len(counts) else float("nan"),
                     "krippendorff_alpha": alpha, "alpha_low": low, "alpha_high": high, "note": note})
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
class SSAResult:
    config: SSAConfig
    labels: pd.DataFrame
    items: pd.DataFrame
    models: pd.DataFrame
    pairs: pd.DataFrame
    agreement: pd.DataFrame
    workers: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        return {"labels": len(self.labels), "items": len(self.items), "workers": int(self.labels["worker"].nunique()),
                "models": self.models["model"].tolist(), "sources": sorted(self.labels["source"].unique()),
                "normalised_specific": int(self.labels.attrs.get("normalised_specific", 0)),
                "tie_rule": TIE_RULE, "intervals": self.config.interval_names()}


def analyze(df: pd.DataFrame, config: SSAConfig | None = None) -> SSAResult:
    """The whole SSA analysis of a labels table (see the module docstring)."""
    config = config or SSAConfig()
    items = majority_labels(df)
    models = sorted(items["model"].unique())
    boot = bootstrap_rates(items, models, config.bootstrap, config.seed)
    table = model_table(df, items, boot, models, config)
    pairs = pair_table(items, boot, models, table, config)
    notes = []
    per_item = items["labels"]
    if per_item.max() < 3:
        notes.append(f"items have at most {per_item.max()} label(s): majorities rest on one or two workers "
                     f"(Meena used 5 per item)")
    ties = int(items["sensible_tie"].sum() + items["specific_tie"].sum())
    if ties:
        notes.append(f"{ties} majority vote(s) were ties; {TIE_RULE}")
    few = table[table["few_workers"]]["model"].tolist()
    if few:
        notes.append(f"labels of {', '.join(few)} come from fewer than {config.min_workers} workers: "
                     f"their results rest on few people")
    if df.attrs.get("normalised_specific"):
        notes.append(f"{df.attrs['normalised_specific']} label(s) said specific but not sensible; "
                     f"counted as not specific")
    return SSAResult(config, df, items, table, pairs, agreement_table(items, config), worker_table(df, items), notes)


def run_record(config: SSAConfig) -> dict:
    return {"analysis": "ssa", "version": parlai_acute.__version__, "seed": config.seed,
            "configuration": dataclasses.asdict(config), "tie_rule": TIE_RULE}
