"""What ACUTE-Eval measures, defined once: the win rate of one model over another, per question.

Every surface that reports an ACUTE number -- ``acute analyze``, ``status``, the live stop rule,
``ppi``, ``judge acute --analyze``, the reports and the Python API -- takes it from here, so they
print the same value under the same name in the same direction:

* **quantity**: for models A and B (A the earlier name alphabetically) under one question, the
  share of the pair's kept judgments won by B, printed ``"B vs A"`` -- the paper's table read as
  "column beats row"; where the task offered a tie (or "both are bad"), a tie counts as half a
  win for each model (observations carry 1/2), so every surface handles ties through this one
  definition; the tie rate and the both-bad rate are then estimands of their own;
* **estimator**: pooled over judgments (wins / judgments of the pair). Under the protocol's
  default cap of one judgment per worker, model pair and question every worker contributes one
  judgment per pair, so this is also the mean of the workers' own shares; with a larger cap the
  two differ, and a surface that needs the per-worker mean (the confidence sequences of
  ``status``) prints both, named;
* **unit**: the worker (a worker's taste runs through their judgments): the headline interval and
  mark come from the sign-flip test over workers of :mod:`parlai_acute.stats.winrates`;
* **exclusions and cap**: :func:`parlai_acute.acute.analysis.apply_exclusions`, in its order, with
  the cap of :func:`config_for`.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from parlai_acute.acute.analysis import AnalysisConfig, AnalysisResult, apply_exclusions
from parlai_acute.acute.judgments import _TEXT, BOTH_BAD, COLUMNS, TIES, WIN
from parlai_acute.stats.estimand import Estimand, Monitor, complete, headline_table, point_estimates

__all__ = ["WIN_RATE", "TIE_RATE", "BOTH_BAD_RATE", "TIE_VALUE", "ESTIMANDS", "MONITOR", "config_for", "kept",
           "observations", "observe", "estimates", "headline", "label"]

WIN_RATE = Estimand(
    measure="win rate",
    quantity="share of the pair's judgments won by the model named first, a tie (or 'both bad') counting half a "
             "win for each model, pairs named 'B vs A' with B the later name alphabetically (the paper's table: "
             "column beats row)",
    estimator="pooled over kept judgments ((wins + ties / 2) / judgments)",
    unit="worker",
    low=0.0, high=1.0,
    exclusions="workers who failed onboarding, onboarding pairs, workers who never gave a reason, the same model on "
               "both sides, judgments over the per-worker cap (default: one per model pair and question; a model "
               "judge's verdicts are not capped)",
    pairwise=True)
TIE_RATE = Estimand(
    measure="tie rate",
    quantity="share of the pair's judgments with no winner (a tie, 'both bad' included), pairs named 'B vs A' as "
             "the win rate; reported when the table holds a tie (a task that offered them)",
    estimator="pooled over kept judgments (ties / judgments)",
    unit="worker", low=0.0, high=1.0, exclusions=WIN_RATE.exclusions)
BOTH_BAD_RATE = Estimand(
    measure="both-bad rate",
    quantity="share of the pair's judgments that found both conversations bad (a kind of tie), pairs named "
             "'B vs A'; reported when the table holds a 'both bad' judgment",
    estimator="pooled over kept judgments (both bad / judgments)",
    unit="worker", low=0.0, high=1.0, exclusions=WIN_RATE.exclusions)
ESTIMANDS = {e.measure: e for e in (WIN_RATE, TIE_RATE, BOTH_BAD_RATE)}
#: the value of one judgment in the win rate of the model named first: won 1, tie 1/2, lost 0
TIE_VALUE = 0.5
#: what ``status`` and the live stop rule watch: every win rate (a tie half a win) against 1/2, over workers
MONITOR = Monitor(watch={WIN_RATE.measure: 0.5}, signature="winner", unit="worker")


def label(a: str, b: str) -> str:
    """The one name of the comparison of models ``a`` < ``b``: ``"b vs a"``, B's win rate."""
    return f"{b} vs {a}"


def config_for(table: pd.DataFrame, config: AnalysisConfig | None = None, judges: list | None = None,
               **options) -> AnalysisConfig:
    """The analysis configuration with the protocol's per-worker cap settled, in this order: as
    given (``max_per_worker``); as the run was launched (``table.attrs["per_worker_cap"]``, set by
    :func:`parlai_acute.api.load_table` from the Mephisto run); none for a model judge's verdicts
    (``judges``: its run summaries -- a judge is not a sampled worker, it answers each item by its
    own rule); else the paper's default (one judgment per model pair and question)."""
    config = config if config is not None else AnalysisConfig(**options)
    if config.max_per_worker is not None:
        config.cap_source = config.cap_source or "max_per_worker"
    elif "per_worker_cap" in table.attrs:
        cap, where = table.attrs["per_worker_cap"]
        config.max_per_worker = cap
        config.cap_source = f"as launched, {where}" if cap else f"default: model pairs x questions ({where})"
    elif judges:
        config.max_per_worker = max(1, len(table))
        config.cap_source = "none: a model judge's verdicts (the judge is not a sampled worker)"
    return config


def kept(table: pd.DataFrame, config: AnalysisConfig | None = None, judges: list | None = None,
         **options) -> pd.DataFrame:
    """The judgments the protocol keeps (exclusions and cap as :func:`config_for` settles them;
    ``options``: :class:`AnalysisConfig` fields when no ``config`` is given, e.g.
    ``min_reason_chars=0``). Rows without reasons (the live stop rule's, as judged) are not
    judged on reasons."""
    config = config_for(table, config, judges, **options)
    if "reason" not in table.columns:
        config = dataclasses.replace(config, min_reason_chars=0)
    return apply_exclusions(complete(table, COLUMNS, _TEXT, ["is_onboarding"]), config)[0]


def _outcomes(df: pd.DataFrame) -> np.ndarray:
    """Each judgment's outcome (rows as judged may lack the column: wins)."""
    if "outcome" not in df.columns:
        return np.full(len(df), WIN, dtype=object)
    outcome = df["outcome"].fillna("").to_numpy(dtype=object)
    return np.where(outcome == "", WIN, outcome)


def observations(kept_judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per kept judgment and estimand, oriented as the estimand: the win rate's ``value``
    is 1 when the model named first in ``comparison`` (the later name alphabetically) won,
    :data:`TIE_VALUE` (1/2) for a tie or 'both bad', 0 when it lost; with any tie in the table
    also the tie rate's (1: a tie) and, with any 'both bad', the both-bad rate's. ``item``: the
    pair of conversations under the question (what a judge answers too); ``cluster``: the worker;
    with the conversations' columns, ``conversation_a`` / ``conversation_b``: each model's conversation
    (its dialogue id: unique within a comparison; named in ``attrs["facets"]``, the facets status
    treats as sampled beside the worker)."""
    df = kept_judgments[kept_judgments["model_left"] != kept_judgments["model_right"]]
    left, right = df["model_left"].to_numpy(str), df["model_right"].to_numpy(str)
    a, b = np.where(left < right, left, right), np.where(left < right, right, left)
    question = df["question_key"].astype(str).to_numpy(str)
    outcome = _outcomes(df)
    tie = np.isin(outcome, TIES)
    base = pd.DataFrame({
        "group": question, "comparison": np.char.add(np.char.add(b, " vs "), a), "measure": WIN_RATE.measure,
        "model_a": a, "model_b": b,
        "value": np.where(tie, TIE_VALUE, (df["winner"].to_numpy(str) == b).astype(float)),
        "cluster": df["worker"].astype(str).to_numpy(),
        "item": np.char.add(np.char.add(df["pair_id"].astype(str).to_numpy(str), "#"), question),
        "timestamp": pd.to_numeric(df["timestamp"], errors="coerce").to_numpy(float)})
    if conversations_known(df):  # the second sampled facet: each side's conversation
        left_is_a = left == a
        # a model's conversation: within one comparison the model is fixed, so its dialogue id names it
        dl, dr = df["dialogue_left"].to_numpy(object), df["dialogue_right"].to_numpy(object)
        base["conversation_a"] = np.where(left_is_a, dl, dr)
        base["conversation_b"] = np.where(left_is_a, dr, dl)
    out = base
    if tie.any():
        parts = [base, base.assign(measure=TIE_RATE.measure, value=tie.astype(float))]
        if (outcome == BOTH_BAD).any():
            parts.append(base.assign(measure=BOTH_BAD_RATE.measure, value=(outcome == BOTH_BAD).astype(float)))
        out = pd.concat(parts, ignore_index=True)
    out.attrs["facet_note"] = reuse_note(df)
    if "conversation_a" in base.columns:  # what status and the stop rule treat as sampled besides the worker
        out.attrs["facets"] = ("conversation_a", "conversation_b")
        out.attrs["facet_name"] = "conversation"
    return out


def conversations_known(df: pd.DataFrame) -> bool:
    """Does every judgment name both conversations? (A table without them -- the live stop rule's
    rows before issue 23, a released data set without ids -- gets blank ids from ``complete``,
    which are not one conversation reused.)"""
    sides = ["dialogue_left", "dialogue_right"]
    if not set(sides) <= set(df.columns) or not len(df):
        return False
    ids = df[sides]
    return bool((ids.notna() & (ids.astype(str) != "")).all().all())


def reuse_note(df: pd.DataFrame) -> str:
    """'' or the sentence saying that conversations serve several judgments: a second sampled facet,
    which the analysis' headline and status' two-facet sequences treat as random beside the worker."""
    if not conversations_known(df):
        return ""
    sides = pd.concat([df["model_left"].astype(str) + "\x1f" + df["dialogue_left"].astype(str),
                       df["model_right"].astype(str) + "\x1f" + df["dialogue_right"].astype(str)])
    counts = sides.value_counts()
    if (counts <= 1).all():
        return ""
    return (f"conversations are reused ({len(counts)} conversations serve {len(df)} judgments, up to "
            f"{int(counts.max())} each)")


def estimates(table: pd.DataFrame, config: AnalysisConfig | None = None, judges: list | None = None,
              judge: bool = False) -> pd.DataFrame:
    """The protocol's estimate of every comparison of a judgments table (no interval: cheap)."""
    return point_estimates(observe(table, config, judges, judge))


def headline(result: AnalysisResult) -> pd.DataFrame:
    """The analysis' reported estimates with their headline intervals (the test over workers), in the
    estimands table's shape: what every surface that shows an interval prints."""
    rows = []
    both_bad = bool((_outcomes(result.kept) == BOTH_BAD).any())
    for q in result.questions:
        interval = f"{100 * result.config.confidence:g}% inverted sign-flip test over workers"
        for m in q.matchups.itertuples(index=False):
            rows.append({"group": q.question_key, "comparison": label(m.model_a, m.model_b),
                         "measure": WIN_RATE.measure, "estimate": float(m.winrate_b), "n": int(m.n),
                         "clusters": int(m.workers), "low": float(m.ci_low), "high": float(m.ci_high),
                         "interval": interval, "why_no_interval": m.reason or ("" if m.ci_low == m.ci_low else
                                                                             "too few workers for an interval")})
        if q.outcomes is not None:
            shares = [(TIE_RATE, "tie_rate")] + ([(BOTH_BAD_RATE, "both_bad_rate")] if both_bad else [])
            for o in q.outcomes.to_dict("records"):
                for estimand, share in shares:
                    rows.append({"group": q.question_key, "comparison": label(o["model_a"], o["model_b"]),
                                 "measure": estimand.measure, "estimate": float(o[share]), "n": int(o["n"]),
                                 "clusters": int(o["workers"]), "low": float(o[f"{share}_low"]),
                                 "high": float(o[f"{share}_high"]), "interval": o[f"{share}_interval"],
                                 "why_no_interval": ""})
    return headline_table(rows)


def observe(table: pd.DataFrame, config: AnalysisConfig | None = None, judges: list | None = None,
            judge: bool = False, min_reason_chars: int | None = None, max_per_worker: int | str | None = None
            ) -> pd.DataFrame:
    """The observations of a judgments table after the protocol's exclusions and cap (``judge``:
    the table is a model judge's, whose verdicts are not capped). ``min_reason_chars`` and
    ``max_per_worker`` (without ``config``): the two switchable rules as analyze takes them
    (``status`` of released data: 0 and "none")."""
    options = {name: value for name, value in (("min_reason_chars", min_reason_chars),
                                               ("max_per_worker", max_per_worker)) if value is not None}
    if config is not None and options:
        config = dataclasses.replace(config, **options)
    return observations(kept(table, config, judges or ([{"judge": "model"}] if judge else None), **options))
