"""Per-turn evaluation analysis: exclusions and flags, then statistics per design.

A *design* is a (setting, protocol) pair, e.g. MM with SATA-User; a *group* is one model
set run under it (PM with a baseline against three models has three groups). For each
group the turns become a (turns, models) 0/1 matrix of picks, and:

* models: pick rate ("win rate": share of turns the model's reply was picked) with an exact
  Clopper-Pearson interval (turns independent) and a cluster-bootstrap interval (whole
  dialogues, or workers, resampled), and the design effect (bootstrap variance / binomial);
* pairs: both / a only / b only / neither (the paper's Table 2: tie-win, wins, tie-loss); the
  **mark**: a sign-flip test over whole dialogues (or workers) of the difference in pick rates
  with its inverted interval (:mod:`parlai_acute.stats.inference`), Holm-corrected within the
  design (PM: across its pairs; MM: within the model set); and, as secondary columns that assume
  independent turns, the exact test -- binomial on the turns where exactly one of the two was
  picked for SOBA, exact McNemar for SATA -- Holm-corrected the same way;
* omnibus (MM): permutation of the models within each dialogue (the mark), with chi-squared
  (MM-SOBA) or Cochran's Q (MM-SATA) as secondary;
* positions: how often each position was picked, with the same omnibus test over positions.

SM groups have one model each; the design compares them pairwise (a permutation of the model
of whole dialogues for the mark; Fisher exact and the two-proportion z test secondary). Fewer
dialogues than :func:`~parlai_acute.stats.inference.min_clusters` give no mark and a "FEW
DIALOGUES" warning (:meth:`AnalysisResult.warnings`). When several designs ran on the same
models, :meth:`AnalysisResult.settings_table` puts them side by side (sensitivity, consistency).

Turn exclusions (first rule that applies, recorded in ``excluded_because``):
``incomplete turn`` always (a model failed, so the turn does not compare all models); the
quality flags -- ``same position`` (a worker whose single picks were always at one position,
over at least ``same_position_min_turns`` turns), ``fast decision`` (faster than
``min_decision_seconds``), ``short message`` (fewer than ``min_message_words`` words),
``repeated message`` (the worker sent the same message before) -- are always reported and
exclude turns only when named in ``exclude``.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats as sstats

from parlai_acute.errors import UserError
from parlai_acute.result import Result
from parlai_acute.stats import inference, paired
from parlai_acute.stats.intervals import clopper_pearson, exact_intervals, percentile_interval
from parlai_acute.stats.resample import cluster_bootstrap, cluster_totals
from parlai_acute.stats.settings import Settings
from parlai_acute.table_files import exclusions
from parlai_acute.stats.multitest import holm
from parlai_acute.stats.winrates import grid_from_matchups

INCOMPLETE = "incomplete turn"
FLAG_RULES = {"same_position": "same position", "fast_decision": "fast decision",
              "short_message": "short message", "repeated_message": "repeated message"}
RULES = [INCOMPLETE] + list(FLAG_RULES.values())
SATA = ("sata_random", "sata_user")
_KEYS = ["dialogue", "turn"]


@dataclass
class AnalysisConfig(Settings):
    """Everything that changes the results; recorded in every output."""

    cluster: str = "auto"  # the sampled unit: "auto" (read from the table: resolve_cluster), "dialogue" or "worker"
    min_clusters: int = 5  # fewer dialogues (workers) than this: no bootstrap interval of a pick rate
    permutations: int = 10_000  # sign patterns / arrangements of the cluster-aware tests (exact when fewer exist)
    min_decision_seconds: float = 2.0
    min_message_words: int = 3
    same_position_min_turns: int = 10
    exclude: list[str] = field(default_factory=list)  # flags that exclude turns (keys of FLAG_RULES)

    def __post_init__(self):
        super().__post_init__()
        if self.cluster not in ("auto", "dialogue", "worker"):
            raise UserError(f"cluster must be 'auto', 'dialogue' or 'worker', got {self.cluster!r}", param="cluster")
        unknown = [name for name in self.exclude if name not in FLAG_RULES]
        if unknown:
            raise UserError(f"exclude: unknown flag(s) {', '.join(unknown)}; choose from {', '.join(FLAG_RULES)}",
                            param="exclude")
        if self.permutations < 100:
            raise UserError(f"permutations must be at least 100, got {self.permutations}", param="permutations")
        if self.min_clusters < 2:
            raise UserError(f"min_clusters must be at least 2, got {self.min_clusters}", param="min_clusters")
        if self.min_decision_seconds < 0 or self.min_message_words < 0 or self.same_position_min_turns < 1:
            raise UserError("min_decision_seconds and min_message_words must be >= 0 and "
                            "same_position_min_turns >= 1",
                            param=("min_decision_seconds", "min_message_words", "same_position_min_turns"))


def resolve_cluster(kept: pd.DataFrame, config: AnalysisConfig) -> tuple[AnalysisConfig, str]:
    """(config with a concrete ``cluster``, the sentence saying which unit and why).

    ``cluster="auto"`` reads the design from the table. A per-turn dialogue is one worker's, so
    dialogues are nested in workers; when workers repeat across dialogues, both are sampled and a
    worker's taste runs through all of their dialogues: a test over dialogues treats that taste as
    independent draws (21 % false marks for 10 workers x 4 dialogues, worker sd 1, dialogue sd 0.6;
    docs/inference.md), while a test over workers carries both the worker's and the dialogues'
    variation (the dialogues are inside the worker's total), so the worker is the unit. When every
    worker did one dialogue the two coincide and the dialogue is the unit."""
    if config.cluster != "auto":
        return config, f"clustered by {config.cluster} as asked"
    # rows whose worker is not recorded (the live stop rule's, as judged) say nothing about repeats
    known = kept[kept["worker"].fillna("").astype(str) != ""] if len(kept) else kept
    per_worker = known.groupby("worker", sort=False)["dialogue"].nunique() if len(known) else pd.Series(dtype=int)
    repeat = per_worker[per_worker > 1]
    if len(repeat):
        why = (f"{len(repeat)} of {len(per_worker)} workers did more than one dialogue (up to {int(repeat.max())}): "
               f"dialogues are nested in workers, so the worker is the sampled unit of every test and interval "
               f"(a test over dialogues would treat one worker's taste as independent draws)")
        return dataclasses.replace(config, cluster="worker"), why
    return (dataclasses.replace(config, cluster="dialogue"),
            "every worker did one dialogue: the dialogue (and its worker) is the sampled unit")


def design_label(setting: str, protocol: str) -> str:
    return "sm" if setting == "sm" else f"{setting}-{protocol}"


# ---------------------------------------------------------------- turns, flags and exclusions

def turn_index(df: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per (dialogue, turn) with what the flags need, and each row's turn number."""
    codes = df.groupby(_KEYS, sort=False).ngroup().to_numpy()
    single = df["picked"].to_numpy() & (df.groupby(codes)["picked"].transform("sum").to_numpy() == 1)
    per = pd.DataFrame({"code": codes, "incomplete": df["incomplete"].to_numpy(),
                        "shown": ~df["incomplete"].to_numpy(), "picked": df["picked"].to_numpy(),
                        "single_position": np.where(single, df["position"].astype(float).to_numpy(), np.nan)})
    agg = per.groupby("code").agg(incomplete=("incomplete", "any"), shown=("shown", "sum"),
                                  picked=("picked", "sum"), single_position=("single_position", "max"))
    first = pd.Series(np.arange(len(df))).groupby(codes).min().to_numpy()
    head = df.iloc[first]
    turns = pd.DataFrame({
        "dialogue": head["dialogue"].to_numpy(), "turn": head["turn"].to_numpy(), "worker": head["worker"].to_numpy(),
        "setting": head["setting"].to_numpy(), "protocol": head["protocol"].to_numpy(),
        "model_set": head["model_set"].to_numpy(), "decision_seconds": head["decision_seconds"].to_numpy(),
        "worker_message": head["worker_message"].to_numpy(), "timestamp": head["timestamp"].to_numpy(),
        "incomplete": agg["incomplete"].to_numpy() | (agg["shown"].to_numpy() == 0),
        "shown": agg["shown"].to_numpy(), "picked": agg["picked"].to_numpy(),
        "single_position": agg["single_position"].to_numpy()})
    return turns, codes


def flag_turns(turns: pd.DataFrame, config: AnalysisConfig) -> pd.DataFrame:
    """Boolean flag columns (keys of :data:`FLAG_RULES`) for each turn of :func:`turn_index`."""
    flags = pd.DataFrame(index=turns.index)
    flags["fast_decision"] = turns["decision_seconds"].to_numpy() < config.min_decision_seconds
    message = pd.Series(turns["worker_message"]).fillna("").astype(str)
    words = message.str.split().str.len()
    flags["short_message"] = ((message.str.strip() != "") & (words < config.min_message_words)).to_numpy()
    norm = message.str.lower().str.split().str.join(" ")
    order = turns.assign(_norm=norm, _i=np.arange(len(turns))).sort_values(
        ["timestamp", "dialogue", "turn"], na_position="last", kind="stable")
    repeated = order.duplicated(["worker", "_norm"]) & (order["_norm"] != "")
    flags["repeated_message"] = repeated.sort_index().to_numpy()
    singles = turns[turns["single_position"].notna() & (turns["shown"] > 1)]
    by_worker = singles.groupby("worker")["single_position"]
    always = (by_worker.nunique() == 1) & (by_worker.size() >= config.same_position_min_turns)
    flags["same_position"] = turns["worker"].isin(set(always[always].index)).to_numpy()
    return flags[list(FLAG_RULES)]


def apply_exclusions(df: pd.DataFrame, config: AnalysisConfig):
    """(kept rows, excluded rows with ``excluded_because``, turn table with flags)."""
    df = df.reset_index(drop=True)
    turns, codes = turn_index(df)
    flags = flag_turns(turns, config)
    because = np.full(len(turns), "", dtype=object)
    because[turns["incomplete"].to_numpy()] = INCOMPLETE
    for name in config.exclude:
        because[(because == "") & flags[name].to_numpy()] = FLAG_RULES[name]
    turns = pd.concat([turns, flags], axis=1)
    turns["excluded_because"] = because
    row_because = because[codes]
    kept = df[row_because == ""].reset_index(drop=True)
    excluded = df[row_because != ""].assign(excluded_because=row_because[row_because != ""]).reset_index(drop=True)
    return kept, excluded, turns


# ---------------------------------------------------------------- one group (one model set)

@dataclass
class GroupResult:
    setting: str
    protocol: str
    model_set: str
    models: list[str]
    turns: int
    dialogues: int
    workers: int
    models_table: pd.DataFrame
    pairs: pd.DataFrame
    omnibus: dict
    positions: pd.DataFrame
    position_test: dict
    boot_means: np.ndarray = dataclasses.field(repr=False, default=None)
    turn_values: np.ndarray = dataclasses.field(repr=False, default=None)  # SM: each turn's pick (0/1)
    turn_clusters: np.ndarray = dataclasses.field(repr=False, default=None)  # SM: each turn's dialogue (worker)

    @property
    def design(self) -> str:
        return design_label(self.setting, self.protocol)


def choice_matrix(rows: pd.DataFrame, models: list[str], cluster: str):
    """(picks (T, k) bool, positions (T, k) float, cluster code per turn) of a group's rows."""
    turn_codes, _ = pd.factorize(pd.MultiIndex.from_arrays([rows["dialogue"], rows["turn"]]), sort=True)
    model_codes = pd.Categorical(rows["model"], categories=models).codes
    t = int(turn_codes.max()) + 1 if len(rows) else 0
    picks = np.zeros((t, len(models)), dtype=bool)
    picks[turn_codes, model_codes] = rows["picked"].to_numpy()
    positions = np.full((t, len(models)), np.nan)
    positions[turn_codes, model_codes] = rows["position"].astype(float).to_numpy()
    owner = np.empty(t, dtype=object)
    owner[turn_codes] = rows[cluster].to_numpy()
    return picks, positions, pd.factorize(owner)[0]


def _model_table(models, picks, boot, config) -> pd.DataFrame:
    t = len(picks)
    rows = []
    low, high = percentile_interval(boot, config.confidence) if boot is not None else (None, None)
    for j, model in enumerate(models):
        k = int(picks[:, j].sum())
        rate = k / t if t else float("nan")
        ci = clopper_pearson(k, t, config.confidence)
        boot_var = float(np.nanvar(boot[:, j], ddof=1)) if boot is not None and len(boot) > 1 else float("nan")
        binom_var = rate * (1 - rate) / t if t else float("nan")
        degenerate = boot is None or not high[j] > low[j]  # all resamples agree: no honest interval
        rows.append({"model": model, "turns": t, "picked": k, "rate": rate, "ci_low": ci[0], "ci_high": ci[1],
                     "boot_low": float("nan") if degenerate else float(low[j]),
                     "boot_high": float("nan") if degenerate else float(high[j]),
                     "design_effect": boot_var / binom_var if binom_var and binom_var > 0 else float("nan")})
    return pd.DataFrame(rows)


PAIR_COLUMNS = ["model_a", "model_b", "turns", "both", "a_only", "b_only", "neither", "win_a", "win_b", "tie_win",
                "tie_loss", "rate_a", "rate_b", "diff", "clusters", "cluster_low", "cluster_high", "cluster_pvalue",
                "cluster_p_holm", "mark", "cluster_note", "cluster_method", "test", "pvalue", "p_holm"]
#: The headline (cluster-aware) columns and the secondary per-turn exact test, in words.
PAIR_HEADERS = {"cluster_low": "low", "cluster_high": "high", "cluster_pvalue": "p (cluster-aware)",
                "cluster_p_holm": "Holm p (cluster-aware)", "cluster_note": "note",
                "test": "secondary test (exact, judgments independent)",
                "pvalue": "exact p (judgments independent)", "p_holm": "exact Holm p (judgments independent)"}


def _cluster_columns(test: inference.ClusterTest) -> dict:
    """The cluster-aware test of one comparison as table columns (NaN where none is given)."""
    nan = float("nan")
    note = inference.shortfall(test) or (test.reason or "")
    # a difference of pick rates lies in [-1, 1]: the inverted interval is clipped to it (rounding
    # in the inversion can step a hair outside)
    return {"clusters": test.n_clusters, "cluster_low": nan if test.low is None else max(-1.0, test.low),
            "cluster_high": nan if test.high is None else min(1.0, test.high),
            "cluster_pvalue": nan if test.p_value is None else test.p_value, "cluster_note": note,
            "cluster_method": test.method, "clusters_needed": test.clusters_needed}


def _pairs(models, picks, clusters, protocol, config) -> pd.DataFrame:
    t = len(picks)
    rows = []
    combos = list(itertools.combinations(range(len(models)), 2))
    diffs = np.stack([picks[:, j].astype(float) - picks[:, i] for i, j in combos], axis=1) if combos else None
    tests = (inference.paired_cluster_tests(diffs, clusters, unit=config.cluster, alpha=config.alpha,
                                            confidence=config.confidence, seed=config.seed,
                                            n_resamples=config.permutations) if combos and t else [])
    for (i, j), test in zip(combos, tests):
        counts = paired.paired_counts(picks[:, i], picks[:, j])
        if protocol == "soba":
            name, p = "binomial", paired.binomial_test(counts["b_only"], counts["a_only"] + counts["b_only"])
        else:
            name, p = "mcnemar_exact", paired.mcnemar_exact(counts)
        rate_a, rate_b = (picks[:, i].mean(), picks[:, j].mean()) if t else (np.nan, np.nan)
        rows.append({"model_a": models[i], "model_b": models[j], "turns": t, **counts,
                     "win_a": counts["a_only"] / t, "win_b": counts["b_only"] / t, "tie_win": counts["both"] / t,
                     "tie_loss": counts["neither"] / t, "rate_a": rate_a, "rate_b": rate_b, "diff": rate_b - rate_a,
                     "test": name, "pvalue": p, **_cluster_columns(test)})
    return pd.DataFrame(rows, columns=[c for c in PAIR_COLUMNS if c not in ("p_holm", "cluster_p_holm", "mark")]
                        + ["clusters_needed"])


def correct(pairs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Holm across the rows of a family of comparisons (cluster-aware and per-turn p-values);
    the mark comes from the cluster-aware Holm p-value at ``alpha``."""
    pairs = pairs.copy()
    for raw, adjusted in (("pvalue", "p_holm"), ("cluster_pvalue", "cluster_p_holm")):
        pairs[adjusted] = holm(pairs[raw].to_numpy(dtype=float))
    pairs["mark"] = [inference.mark(p, alpha) for p in pairs["cluster_p_holm"]]
    return pairs[[c for c in PAIR_COLUMNS if c in pairs] + [c for c in pairs if c not in PAIR_COLUMNS]]


def position_bias(picks: np.ndarray, positions: np.ndarray, protocol: str) -> tuple[pd.DataFrame, dict]:
    """Picks per page position, and the omnibus test over positions (as over models)."""
    k = picks.shape[1]
    if k < 2 or np.isnan(positions).all():
        return pd.DataFrame(columns=["position", "shown", "picked", "rate"]), {"test": None, "statistic": None,
                                                                              "df": None, "pvalue": None}
    by_position = np.zeros_like(picks)
    rows_, cols_ = np.nonzero(~np.isnan(positions))
    by_position[rows_, positions[rows_, cols_].astype(int)] = picks[rows_, cols_]
    shown = np.array([(positions == p).sum() for p in range(k)])
    picked = by_position.sum(axis=0)
    table = pd.DataFrame({"position": np.arange(k), "shown": shown, "picked": picked,
                          "rate": np.divide(picked, shown, out=np.full(k, np.nan), where=shown > 0)})
    if protocol == "soba":
        test = {"test": "chisquare", **paired.chisquare_uniform(picked)}
    else:
        test = {"test": "cochran_q", **paired.cochran_q(by_position)}
    return table, test


def analyze_group(rows: pd.DataFrame, config: AnalysisConfig, rng: np.random.Generator) -> GroupResult:
    setting, protocol, model_set = rows["setting"].iloc[0], rows["protocol"].iloc[0], rows["model_set"].iloc[0]
    models = model_set.split("|")
    picks, positions, clusters = choice_matrix(rows, models, config.cluster)
    boot = None
    # resampling one or a few dialogues says nothing about others: no interval rather than a false one
    if config.bootstrap > 0 and len(picks) and int(clusters.max()) + 1 >= config.min_clusters:
        sums, counts = cluster_totals(picks, clusters)
        boot = cluster_bootstrap(sums, counts, config.bootstrap, rng)
    pairs = _pairs(models, picks, clusters, protocol, config)
    if setting == "mm":
        omnibus = ({"test": "chisquare", **paired.chisquare_uniform(picks.sum(axis=0))} if protocol == "soba"
                   else {"test": "cochran_q", **paired.cochran_q(picks)})
        test = inference.omnibus_cluster_test(picks.astype(float), clusters, unit=config.cluster, alpha=config.alpha,
                                              seed=config.seed, n_resamples=config.permutations)
        omnibus.update(cluster_pvalue=test.p_value, cluster_method=test.method, mark=inference.mark(test, config.alpha),
                       clusters=test.n_clusters, cluster_note=inference.shortfall(test) or "",
                       clusters_needed=test.clusters_needed)
    elif setting == "pm":
        first = pairs.iloc[0]
        omnibus = {"test": first["test"], "statistic": None, "df": None, "pvalue": float(first["pvalue"]),
                   "cluster_pvalue": first["cluster_pvalue"], "cluster_method": first["cluster_method"],
                   "mark": inference.mark(first["cluster_pvalue"], config.alpha), "clusters": int(first["clusters"]),
                   "cluster_note": first["cluster_note"], "clusters_needed": first["clusters_needed"]}
    else:
        omnibus = {"test": None, "statistic": None, "df": None, "pvalue": None}
    table, position_test = position_bias(picks, positions, protocol)
    return GroupResult(setting=setting, protocol=protocol, model_set=model_set, models=models, turns=len(picks),
                       dialogues=int(rows["dialogue"].nunique()), workers=int(rows["worker"].nunique()),
                       models_table=_model_table(models, picks, boot, config), pairs=pairs, omnibus=omnibus,
                       positions=table, position_test=position_test, boot_means=boot,
                       turn_values=picks[:, 0].astype(float) if setting == "sm" else None,
                       turn_clusters=_cluster_labels(rows, config.cluster) if setting == "sm" else None)


def _cluster_labels(rows: pd.DataFrame, cluster: str) -> np.ndarray:
    """The cluster (dialogue or worker) of each turn, in :func:`choice_matrix` turn order."""
    turns = rows.drop_duplicates(["dialogue", "turn"]).sort_values(["dialogue", "turn"])
    return turns[cluster].astype(str).to_numpy()


# ---------------------------------------------------------------- designs

SM_COLUMNS = ["model_a", "model_b", "turns_a", "picked_a", "turns_b", "picked_b", "rate_a", "rate_b", "diff",
              "clusters", "cluster_low", "cluster_high", "cluster_pvalue", "cluster_note", "cluster_method",
              "clusters_needed", "fisher_pvalue", "z_pvalue", "pvalue", "test"]


def sm_comparisons(groups: list[GroupResult], config: AnalysisConfig) -> pd.DataFrame:
    """Every pair of single-model runs: the two-sample permutation test of whole dialogues
    (the mark), and Fisher exact and the two-proportion z test (turns independent)."""
    rows = []
    ordered = sorted(groups, key=lambda g: g.models[0])
    for ga, gb in itertools.combinations(ordered, 2):
        a, b = ga.models_table.iloc[0], gb.models_table.iloc[0]
        fisher = paired.fisher_exact(int(a.picked), int(a.turns), int(b.picked), int(b.turns))
        values = np.concatenate([ga.turn_values, gb.turn_values])
        labels = np.repeat(["a", "b"], [len(ga.turn_values), len(gb.turn_values)])
        clusters = np.concatenate([np.char.add("a:", ga.turn_clusters.astype(str)),
                                   np.char.add("b:", gb.turn_clusters.astype(str))])
        test = inference.two_sample_cluster_test(values, labels, clusters, unit=config.cluster, alpha=config.alpha,
                                                 confidence=config.confidence, seed=config.seed,
                                                 n_resamples=config.permutations)
        rows.append({"model_a": a.model, "model_b": b.model, "turns_a": int(a.turns), "picked_a": int(a.picked),
                     "turns_b": int(b.turns), "picked_b": int(b.picked), "rate_a": a.rate, "rate_b": b.rate,
                     "diff": b.rate - a.rate, "fisher_pvalue": fisher,
                     "z_pvalue": paired.two_proportion_z(int(a.picked), int(a.turns), int(b.picked), int(b.turns)),
                     "pvalue": fisher, "test": "fisher_exact", **_cluster_columns(test)})
    return correct(pd.DataFrame(rows, columns=SM_COLUMNS), config.alpha)


@dataclass
class DesignResult:
    setting: str
    protocol: str
    groups: list[GroupResult]
    comparisons: pd.DataFrame  # the design's family of pairwise comparisons, Holm-corrected

    @property
    def label(self) -> str:
        return design_label(self.setting, self.protocol)

    def rates(self) -> pd.Series:
        """Each model's pick rate pooled over the design's groups."""
        table = pd.concat([g.models_table for g in self.groups])
        sums = table.groupby("model")[["picked", "turns"]].sum()
        return sums["picked"] / sums["turns"]


def analyze_design(rows: pd.DataFrame, config: AnalysisConfig, rng: np.random.Generator) -> DesignResult:
    groups = [analyze_group(part, config, rng) for _, part in rows.groupby("model_set", sort=True)]
    setting, protocol = groups[0].setting, groups[0].protocol
    if setting == "sm":
        comparisons = sm_comparisons(groups, config)
    elif setting == "pm":  # the family is every pair of the design: one per group
        comparisons = correct(pd.concat([g.pairs.assign(model_set=g.model_set) for g in groups], ignore_index=True),
                              config.alpha)
        for i, g in enumerate(groups):
            g.pairs = comparisons.iloc[[i]].reset_index(drop=True)
    else:
        for g in groups:
            g.pairs = correct(g.pairs.assign(model_set=g.model_set), config.alpha)
        comparisons = pd.concat([g.pairs for g in groups], ignore_index=True)
    return DesignResult(setting=setting, protocol=protocol, groups=groups, comparisons=comparisons)


# ---------------------------------------------------------------- the whole run

@dataclass
class AnalysisResult(Result):
    """The analysis of a turns table; ``summary()``, ``meta()``, ``tables()`` and ``warnings()`` as
    every protocol's result (:class:`parlai_acute.result.Result`)."""

    protocol: ClassVar[str] = "per-turn"
    config: AnalysisConfig
    kept: pd.DataFrame
    excluded: pd.DataFrame
    turns: pd.DataFrame  # one row per turn: flags and excluded_because
    designs: list[DesignResult] = field(default_factory=list)
    design: str = ""  # the unit the tests cluster on, and why (resolve_cluster)

    def provenance(self) -> dict:
        """How the design was read: the unit the marks resample (dialogue, or worker when workers repeat)."""
        return {"design": self.design}

    def own_tables(self) -> dict[str, pd.DataFrame]:
        comparisons = [d.comparisons.assign(design=d.label) for d in self.designs]
        # each cell names its model set (grid reads it from the pairs) and carries its exact interval
        grids = [grid(d.comparisons, self.config.confidence).assign(design=d.label) for d in self.designs
                 if d.setting != "sm" and len(d.comparisons)]
        tables = {"turns": self.kept, "excluded": self.excluded, "flags": self.flags(), "workers": self.workers(),
                  "models": self.group_frame("models_table"),
                  "pairs": pd.concat(comparisons, ignore_index=True) if comparisons else pd.DataFrame(),
                  "winrate_grid": pd.concat(grids, ignore_index=True) if grids else pd.DataFrame(),
                  "positions": self.group_frame("positions")}
        if len(self.designs) > 1:
            tables.update(settings=self.settings_table(), sensitivity=self.sensitivity(),
                          consistency=self.consistency())
        return tables

    def group_frame(self, attribute: str) -> pd.DataFrame:
        """One table of every model set's ``attribute`` table, with its design and model set first."""
        parts = [getattr(g, attribute).assign(design=d.label, model_set=g.model_set)
                 for d in self.designs for g in d.groups]
        table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        front = ["design", "model_set"]
        return table[front + [c for c in table.columns if c not in front]]

    def warnings(self) -> list[str]:
        """One sentence per model set resting on few dialogues (workers): fewer than a
        calibrated cluster-aware test needs (no mark can be given) or than ``min_clusters``."""
        unit = self.config.cluster
        marks = inference.min_clusters(self.config.alpha)
        need = max(marks, self.config.min_clusters)
        out = []
        for d in self.designs:
            for g in d.groups:
                count = g.dialogues if unit == "dialogue" else g.workers
                if count < need:
                    rates = (f", bootstrap intervals of pick rates {self.config.min_clusters}"
                             if self.config.min_clusters != marks else "")
                    out.append(f"FEW {unit.upper()}S: {d.label} model set {g.model_set} rests on {count} "
                               f"{unit}{'s' if count != 1 else ''}; turns of one {unit} are not independent, so "
                               f"a calibrated mark needs at least {marks}{rates} ({need - count} more)")
        return out

    def exclusion_summary(self) -> list[dict]:
        return exclusions(self.turns, RULES, "turns")

    def flag_summary(self) -> list[dict]:
        return [{"flag": name, "turns": int(self.turns[name].sum()),
                 "workers": int(self.turns.loc[self.turns[name], "worker"].nunique()),
                 "excluded": name in self.config.exclude} for name in FLAG_RULES]

    def flags(self) -> pd.DataFrame:
        """Turns with at least one flag (whether excluded or not)."""
        names = list(FLAG_RULES)
        flagged = self.turns[self.turns[names].any(axis=1)]
        return flagged[["dialogue", "turn", "worker", "model_set", "decision_seconds", "worker_message"] + names
                       + ["excluded_because"]].reset_index(drop=True)

    def workers(self) -> pd.DataFrame:
        """Per worker: dialogues, turns kept and excluded, picks per turn, position habits, timing, flags."""
        t = self.turns
        g = t.groupby("worker")
        table = pd.DataFrame({
            "dialogues": g["dialogue"].nunique(), "turns": g.size(),
            "kept": g["excluded_because"].apply(lambda s: int((s == "").sum())),
            "picks_per_turn": g["picked"].mean(),
            "modal_position_share": g["single_position"].agg(
                lambda s: s.value_counts(normalize=True).iloc[0] if s.notna().any() else np.nan),
            "median_decision_seconds": g["decision_seconds"].median(),
        })
        for name in FLAG_RULES:
            table[name] = g[name].sum().astype(int)
        table["flags"] = [";".join(n for n in FLAG_RULES if table.loc[w, n] > 0) for w in table.index]
        return table.reset_index().sort_values(["kept", "worker"], ascending=[False, True]).reset_index(drop=True)

    def settings_table(self) -> pd.DataFrame:
        """Model x design pick rates (and ranks) when two or more designs ran; empty otherwise."""
        if len(self.designs) < 2:
            return pd.DataFrame()
        rates = pd.DataFrame({d.label: d.rates() for d in self.designs})
        ranks = rates.rank(ascending=False, method="min").add_suffix(" rank")
        return pd.concat([rates, ranks], axis=1).rename_axis("model").reset_index()

    def sensitivity(self) -> pd.DataFrame:
        """Per design: comparisons, share marked significant (cluster-aware, Holm), the count the
        per-turn exact tests would give, mean |difference in pick rates|."""
        rows = []
        for d in self.designs:
            c = d.comparisons
            n = len(c)
            rows.append({"design": d.label, "comparisons": n, "turns": sum(g.turns for g in d.groups),
                         "significant": int((c["cluster_p_holm"] < self.config.alpha).sum()),
                         "share_significant": float((c["cluster_p_holm"] < self.config.alpha).mean()) if n else np.nan,
                         "significant_exact_independent": int((c["p_holm"] < self.config.alpha).sum()),
                         "mean_abs_diff": float(c["diff"].abs().mean()) if n else np.nan})
        return pd.DataFrame(rows)

    def consistency(self) -> pd.DataFrame:
        """Per pair of designs: Kendall's tau of the model rankings and agreement of pairwise signs."""
        rows = []
        for a, b in itertools.combinations(self.designs, 2):
            ra, rb = a.rates(), b.rates()
            common = sorted(set(ra.index) & set(rb.index))
            tau = (float(sstats.kendalltau(ra[common], rb[common]).statistic) if len(common) >= 2 else np.nan)
            signs_a = {(r.model_a, r.model_b): np.sign(r.diff) for r in a.comparisons.itertuples()}
            signs_b = {(r.model_a, r.model_b): np.sign(r.diff) for r in b.comparisons.itertuples()}
            shared = sorted(set(signs_a) & set(signs_b))
            agree = float(np.mean([signs_a[p] == signs_b[p] for p in shared])) if shared else np.nan
            rows.append({"design_a": a.label, "design_b": b.label, "common_models": len(common),
                         "kendall_tau": tau, "shared_pairs": len(shared), "sign_agreement": agree})
        return pd.DataFrame(rows, columns=["design_a", "design_b", "common_models", "kendall_tau", "shared_pairs",
                                           "sign_agreement"])


def analyze(df: pd.DataFrame, config: AnalysisConfig | None = None) -> AnalysisResult:
    """Exclusions, then every design's statistics (see the module docstring)."""
    config = config or AnalysisConfig()
    if df.empty:
        raise UserError("there are no turns to analyze; check the run has finished turns")
    kept, excluded, turns = apply_exclusions(df, config)
    if kept.empty:
        counts = excluded.drop_duplicates(_KEYS)["excluded_because"].value_counts().to_dict()
        raise UserError(f"all {len(turns)} turns were excluded ({counts}); inspect the flags or drop exclude",
                        param="exclude")
    config, design = resolve_cluster(kept, config)
    result = AnalysisResult(config=config, kept=kept, excluded=excluded, turns=turns, design=design)
    rng = np.random.default_rng(config.seed)
    for _, rows in kept.groupby(["setting", "protocol"], sort=True):
        result.designs.append(analyze_design(rows, config, rng))
    return result


# ---------------------------------------------------------------- outputs

def grid(pairs: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """ACUTE-style long grid of a family of per-turn pairs: cell (row, col) = share of the turns
    where exactly one of the two was picked that went to ``col``, with its exact (Clopper-Pearson,
    turns independent) interval (``ci_low``/``ci_high``, the same numbers the report's heatmap
    shows) and the model set each cell's pair was shown in (``model_set``: "a|b" in PM)."""
    table = pd.DataFrame({"model_a": pairs["model_a"], "model_b": pairs["model_b"],
                          "n": pairs["a_only"] + pairs["b_only"], "wins_a": pairs["a_only"],
                          "wins_b": pairs["b_only"], "pvalue": pairs["cluster_pvalue"],
                          "p_holm": pairs["cluster_p_holm"], "mark": pairs["mark"],
                          "model_set": pairs["model_set"]})
    table = table[table["n"] > 0]
    low, high = exact_intervals(table["wins_b"], table["n"], confidence)
    table = table.assign(ci_low=low, ci_high=high)  # the share won by model_b; flipped for model_a's row
    cells = grid_from_matchups(table)
    return cells.assign(model_set=[s for s in table["model_set"] for _ in range(2)])
