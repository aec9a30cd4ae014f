"""ConvAI2 end-of-chat analysis: Likert means, calibrated scores, persona detection.

Per question and model:

* **raw mean** of the scores with a t interval (dialogues independent) and a percentile
  bootstrap interval that resamples whole *workers* (one worker's ratings share their
  harshness, so they are not independent);
* **calibrated score** (Kulikov et al. 2018, :mod:`parlai_acute.stats.calibration`):
  posterior mean and standard deviation of the model's quality after removing annotator
  bias, with a normal credible interval (mean +- z sd). ``variances="fixed"`` uses
  sigma_b = sigma_e = 1 as the paper; ``"estimate"`` plugs in REML estimates (empirical
  Bayes). ``gibbs`` > 0 also runs the Gibbs sampler and records how far it lands;
* **persona detection**: share of dialogues in which the worker picked the model's persona,
  with an exact (Clopper-Pearson) interval;
* **differences between models** (:func:`differences`), the marks: the unit is the worker
  (one worker's ratings share that worker's harshness). Where workers rated both models of
  a pair, each such worker's mean difference (b - a: their harshness cancels) goes into the
  sign-flip test over workers of :mod:`parlai_acute.stats.inference`; where no worker rated
  both, the permutation test of the model of whole workers. Intervals invert the same
  test; Holm across the pairs of a question at ``alpha``; too few workers: no mark, and
  how many are needed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

import parlai_acute
from parlai_acute.errors import UserError
from parlai_acute.stats.calibration import calibrate, estimate_variances, gibbs
from parlai_acute.stats.intervals import clopper_pearson, percentile_interval
from parlai_acute.stats.resample import cluster_sums, resample_weights
from parlai_acute.stats.settings import Settings


@dataclass
class ConvAI2Config(Settings):
    variances: str = "fixed"      # "fixed": sigma_b = sigma_e = 1 (Kulikov et al.); "estimate": REML
    sigma_b: float = 1.0
    sigma_e: float = 1.0
    gibbs: int = 0                # Gibbs iterations for the check (0: none)

    def __post_init__(self):
        if self.variances not in ("fixed", "estimate"):
            raise UserError(f"variances must be 'fixed' or 'estimate', got {self.variances!r}", param="variances")
        super().__post_init__()
        if self.gibbs < 0:
            raise UserError(f"gibbs must be 0 or more, got {self.gibbs}", param="gibbs")
        if self.sigma_b <= 0 or self.sigma_e <= 0:
            raise UserError(f"sigma_b and sigma_e must be positive, got {self.sigma_b} and {self.sigma_e}",
                            param=("sigma_b", "sigma_e"))

    def interval_names(self) -> dict:
        level = f"{100 * self.confidence:g}%"
        return {"t": f"{level} t interval (dialogues independent)",
                "workers": f"{level} percentile bootstrap resampling workers ({self.bootstrap} resamples, seed "
                           f"{self.seed})",
                "calibrated": f"{level} normal posterior interval (mean +- z x posterior sd)",
                "persona": f"{level} Clopper-Pearson (exact)",
                "differences": f"{level} inverted test over workers (sign-flip of each worker's mean difference, or "
                               f"permutation of whole workers' model)"}


def question_table(rows: pd.DataFrame, config: ConvAI2Config, rng: np.random.Generator) -> tuple[pd.DataFrame, dict]:
    """Raw and calibrated scores of every model on one question; and calibration details."""
    models = sorted(rows["model"].unique())
    model = pd.Index(models).get_indexer(rows["model"])
    annotator, workers = pd.factorize(rows["worker"], sort=True)
    y = rows["score"].to_numpy(float)
    if config.variances == "estimate":
        sigma_b, sigma_e = estimate_variances(y, model, annotator)
    else:
        sigma_b, sigma_e = config.sigma_b, config.sigma_e
    cal = calibrate(y, model, annotator, sigma_b, sigma_e, models=len(models), annotators=len(workers))
    z = stats.norm.ppf(0.5 + config.confidence / 2)
    boot = None
    if config.bootstrap:
        weights = resample_weights(len(workers), config.bootstrap, rng).astype(float)
        totals = cluster_sums(weights, annotator, model, y, len(models))
        counts = cluster_sums(weights, annotator, model, np.ones_like(y), len(models))
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = totals / counts
        boot_low, boot_high = percentile_interval(boot, config.confidence)
    out = []
    for j, name in enumerate(models):
        scores = y[model == j]
        n = len(scores)
        mean, sd = float(scores.mean()), float(scores.std(ddof=1)) if n > 1 else float("nan")
        if n > 1 and sd > 0:
            t_low, t_high = stats.t.interval(config.confidence, n - 1, loc=mean, scale=sd / np.sqrt(n))
        else:
            t_low = t_high = float("nan")
        out.append({"model": name, "ratings": n, "workers": int(pd.unique(annotator[model == j]).size),
                    "mean": mean, "sd": sd, "t_low": float(t_low), "t_high": float(t_high),
                    "boot_low": float(boot_low[j]) if boot is not None else float("nan"),
                    "boot_high": float(boot_high[j]) if boot is not None else float("nan"),
                    "calibrated": float(cal.quality[j]), "calibrated_sd": float(cal.quality_sd[j]),
                    "calibrated_low": float(cal.quality[j] - z * cal.quality_sd[j]),
                    "calibrated_high": float(cal.quality[j] + z * cal.quality_sd[j])})
    table = pd.DataFrame(out)
    table["raw_rank"] = table["mean"].rank(ascending=False, method="min").astype(int)
    table["calibrated_rank"] = table["calibrated"].rank(ascending=False, method="min").astype(int)
    details = {"sigma_b": sigma_b, "sigma_e": sigma_e, "variances": config.variances,
               "annotator_bias": dict(zip(workers.astype(str), cal.bias.tolist()))}
    if config.gibbs:
        check = gibbs(y, model, annotator, sigma_b, sigma_e, iterations=config.gibbs, burn_in=config.gibbs // 4,
                      seed=config.seed, models=len(models), annotators=len(workers))
        table["gibbs"] = check["quality"]
        details["gibbs"] = {k: v for k, v in check.items() if k not in ("quality", "quality_sd")}
        details["gibbs"]["max_abs_difference"] = float(np.nanmax(np.abs(check["quality"] - cal.quality)))
    return table.sort_values(["calibrated", "model"], ascending=[False, True]).reset_index(drop=True), details


def persona_table(df: pd.DataFrame, config: ConvAI2Config) -> pd.DataFrame:
    per_dialogue = df.dropna(subset=["persona_choice_correct"]).groupby("dialogue").agg(
        model=("model", "first"), correct=("persona_choice_correct", "first"))
    rows = []
    for model, group in per_dialogue.groupby("model"):
        k, n = int(group["correct"].sum()), len(group)
        low, high = clopper_pearson(k, n, config.confidence)
        rows.append({"model": model, "dialogues": n, "correct": k, "rate": k / n, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=["model", "dialogues", "correct", "rate", "ci_low", "ci_high"])


DIFFERENCE_COLUMNS = ["question", "model_a", "model_b", "mean_a", "mean_b", "difference", "ci_low", "ci_high",
                      "pvalue", "p_holm", "mark", "workers", "workers_needed", "test", "reason"]


def differences(rows: pd.DataFrame, config: ConvAI2Config, question: str = "") -> pd.DataFrame:
    """Every pair of models on one question: mean b - mean a, tested over workers (module docstring)."""
    from parlai_acute.stats.inference import paired_cluster_test, two_sample_cluster_test

    models = sorted(rows["model"].unique())
    means = rows.groupby(["worker", "model"])["score"].mean().unstack("model")
    out = []
    for i, a in enumerate(models):
        for b in models[i + 1:]:
            both = means[[a, b]].dropna()
            kwargs = dict(unit="worker", alpha=config.alpha, confidence=config.confidence, seed=config.seed)
            if len(both):
                test = paired_cluster_test((both[b] - both[a]).to_numpy(), both.index.to_numpy(), **kwargs)
                test_name = test.method + " (each worker's mean difference)"
            else:
                pair = rows[rows["model"].isin([a, b])]
                test = two_sample_cluster_test(pair["score"].to_numpy(), pair["model"].to_numpy(),
                                               pair["worker"].to_numpy(), **kwargs)
                test_name = test.method
            mean_a = float(rows.loc[rows["model"] == a, "score"].mean())
            mean_b = float(rows.loc[rows["model"] == b, "score"].mean())
            out.append({"question": question, "model_a": a, "model_b": b, "mean_a": mean_a, "mean_b": mean_b,
                        "difference": test.estimate, "ci_low": np.nan if test.low is None else test.low,
                        "ci_high": np.nan if test.high is None else test.high,
                        "pvalue": np.nan if test.p_value is None else test.p_value, "workers": test.n_clusters,
                        "workers_needed": test.clusters_needed or 0, "test": test_name, "reason": test.reason or ""})
    table = pd.DataFrame(out, columns=[c for c in DIFFERENCE_COLUMNS if c not in ("p_holm", "mark")])
    from parlai_acute.stats.multitest import holm
    from parlai_acute.stats.winrates import significance_mark

    table.insert(table.columns.get_loc("pvalue") + 1, "p_holm", holm(table["pvalue"].to_numpy()))
    table.insert(table.columns.get_loc("p_holm") + 1, "mark",
                 [significance_mark(p, config.alpha) for p in table["p_holm"]])
    return table


@dataclass
class ConvAI2Result:
    config: ConvAI2Config
    ratings: pd.DataFrame
    likert: pd.DataFrame          # one row per (question, model)
    persona: pd.DataFrame
    calibration: dict             # question -> details
    differences: pd.DataFrame = None  # pairs of models per question, tested over workers

    def annotators(self) -> pd.DataFrame:
        rows = [{"question": q, "worker": w, "bias": b}
                for q, d in self.calibration.items() for w, b in d["annotator_bias"].items()]
        return pd.DataFrame(rows, columns=["question", "worker", "bias"])


def analyze(df: pd.DataFrame, config: ConvAI2Config | None = None) -> ConvAI2Result:
    config = config or ConvAI2Config()
    rng = np.random.default_rng(config.seed)
    tables, details, pairs = [], {}, []
    for question, rows in df.groupby("question", sort=True):
        table, details[question] = question_table(rows, config, rng)
        tables.append(table.assign(question=question))
        pairs.append(differences(rows, config, question))
    likert = pd.concat(tables, ignore_index=True)
    likert = likert[["question"] + [c for c in likert.columns if c != "question"]]
    return ConvAI2Result(config, df, likert, persona_table(df, config), details,
                         pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame(columns=DIFFERENCE_COLUMNS))


def run_record(config: ConvAI2Config) -> dict:
    return {"analysis": "convai2", "version": parlai_acute.__version__, "seed": config.seed,
            "configuration": dataclasses.asdict(config),
            "model": "score = quality[model] + bias[worker] + noise; bias ~ N(0, sigma_b^2), noise ~ N(0, "
                     "sigma_e^2), flat prior on quality (Kulikov et al. 2018)"}
