"""How far a judge agrees with people, with the human-human agreement as the ceiling: the parts
every protocol shares. Each protocol's ``agreement`` lives in its ``judge`` module
(:func:`parlai_acute.acute.judge.agreement`, :func:`parlai_acute.per_turn.judge.agreement`,
:func:`parlai_acute.ssa.judge.agreement`; :func:`measure` finds it) and says what an item and a
label are; this layer knows no protocol.

Both sides are the protocol's own tidy tables (ACUTE judgments; per-turn choices; SSA labels), the
judge's marked by its ``worker`` name. For each protocol: the labels of each item
(:mod:`parlai_acute.stats.rater_agreement`), judge-vs-human and human-vs-human agreement
(on all items, and on the items both can be measured on: the ceiling comparison),
agreement of the systems' scores (ACUTE: each matchup's win rate; per-turn: each model's
pick rate) and Kendall's tau of the system rankings.

People's ACUTE judgments pass the analysis' own quality control first
(:func:`parlai_acute.acute.analysis.apply_exclusions`: failed onboarding, gold pairs, no
reasons, A/A pairs; no per-worker cap, which serves win rates, not agreement); the judge's
onboarding rows are left out (its gold score is in its own summary).
"""
from __future__ import annotations

import pandas as pd
from scipy.stats import binomtest

from parlai_acute import registry

from parlai_acute.errors import UserError
from parlai_acute.stats import rater_agreement as ra

def agreement_block(human: pd.DataFrame, judge: pd.DataFrame, resamples: int, seed: int, confidence: float) -> dict:
    """Judge-vs-human agreement on (item, rater, label) rows, and on the items two or more people
    labelled, the judge-vs-human and human-vs-human agreement side by side (the ceiling)."""
    jh = ra.judge_human_pairs(human, judge)
    raters = human.groupby("item")["rater"].nunique()
    ceiling_items = set(raters[raters >= 2].index) & set(judge["item"])
    hh = ra.human_pairs(human[human["item"].isin(ceiling_items)])
    return {
        "judge_vs_human": ra.summary(jh, resamples, seed, confidence),
        "on_items_with_two_or_more_humans": {
            "judge_vs_human": ra.summary(jh[jh["item"].isin(ceiling_items)], resamples, seed, confidence),
            "human_vs_human": ra.summary(hh, resamples, seed, confidence, sides=("a person", "the other person"))},
    }


def per_model(out: dict, human: pd.DataFrame, judge: pd.DataFrame, score: str, words: str,
               interval: str) -> pd.DataFrame:
    """People's and the judge's ``score`` per model side by side with their difference; adds the
    rank correlation and the mean absolute difference to the summary ``out``."""
    table = human.merge(judge, on="model", suffixes=("_human", "_judge"))
    table["difference"] = table[f"{score}_judge"] - table[f"{score}_human"]
    out["ranking"] = ra.rank_correlation(dict(zip(human["model"], human[score])), dict(zip(judge["model"], judge[score])))
    out["ranking"]["scores"] = f"{words} per model"
    out["models"] = {"n": len(table), "interval": interval,
                     "mean_abs_difference": float(table["difference"].abs().mean()) if len(table) else float("nan")}
    return table


def proportion(k: int, n: int, confidence: float) -> tuple:
    """k / n with its exact (Clopper-Pearson) interval; NaN for no observations."""
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="exact")
    return k / n, float(ci.low), float(ci.high)


def measure(protocol: str):
    """The protocol's ``agreement(human, judge, resamples, seed, confidence)``: defined in its
    ``judge`` module (acute, per-turn, ssa), since what an item and a label are is the protocol's;
    this module holds only what they share."""
    found = registry.protocol(protocol)
    if found.judge is None:
        judged = ", ".join(p.name for p in registry.PROTOCOLS.values() if p.judge)
        raise UserError(f"the {found.name} protocol has no judge, so no judge agreement; use one of {judged}",
                        param="protocol")
    return found.get("agreement")

