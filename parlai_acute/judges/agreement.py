"""How far a judge agrees with people, per protocol, with the human-human agreement as the ceiling.

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

import hashlib

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from parlai_acute.errors import UserError
from parlai_acute.stats import rater_agreement as ra

PROTOCOLS = ("acute", "per-turn", "ssa")


def _agreement_block(human: pd.DataFrame, judge: pd.DataFrame, resamples: int, seed: int, confidence: float) -> dict:
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


def _per_model(out: dict, human: pd.DataFrame, judge: pd.DataFrame, score: str, words: str,
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


def _proportion(k: int, n: int, confidence: float) -> tuple:
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="exact")
    return k / n, float(ci.low), float(ci.high)


# ----------------------------------------------------------------------------- ACUTE

def acute_labels(df: pd.DataFrame) -> pd.DataFrame:
    """(item, rater, label): item = pair of conversations under one question; label 0/1 = which of the
    two conversations won.

    The two conversations of an item have no names shared with other items, so which one
    is "0" is arbitrary; a fixed rule (e.g. the sorted ids of
    :func:`parlai_acute.stats.agreement.item_labels`) can line up with the better model and
    skew the label margins, and kappa with them. Each item's orientation is therefore
    flipped by a hash of its id: margins are balanced in expectation, and kappa's chance
    agreement is that of a two-way choice (it then approaches Bennett's S = 2p - 1).
    """
    from parlai_acute.stats.agreement import item_labels

    labels = item_labels(df)
    items = (labels["pair_id"] + "#" + labels["question_key"]).to_numpy()
    flip = np.array([hashlib.sha256(str(i).encode()).digest()[0] & 1 for i in items])
    label = labels["label"].to_numpy()
    return pd.DataFrame({"item": items, "rater": df["worker"].to_numpy(),
                         "label": np.where(label == 2, 2, label ^ flip)})  # 2: a tie, never flipped


def _judge_item_labels(labels: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One label per item; items the judge labelled both ways or as a tie (the tie rule) are left out
    and counted."""
    distinct = labels.groupby("item")["label"].nunique()
    ties = set(distinct[distinct > 1].index) | set(labels.loc[labels["label"] == 2, "item"])
    kept = labels[~labels["item"].isin(ties)].drop_duplicates("item")
    return kept, len(ties)


def acute_agreement(human: pd.DataFrame, judge: pd.DataFrame, resamples: int = 1000, seed: int = 0,
                    confidence: float = 0.95) -> dict:
    from parlai_acute.acute.analysis import AnalysisConfig, apply_exclusions
    from parlai_acute.stats.bradley_terry import bradley_terry
    from parlai_acute.stats.winrates import matchups, models_of

    no_cap = AnalysisConfig(bootstrap=0, seed=seed, max_per_worker=max(1, len(human)))
    human_kept = apply_exclusions(human, no_cap)[0] if len(human) else human
    judge = judge[~judge["is_onboarding"].astype(bool)]
    if human_kept.empty or judge.empty:
        raise UserError("no ACUTE judgments to compare after quality control (human) / without gold pairs (judge); "
                        "check both files")
    judge_names = sorted(judge["worker"].unique())
    hl = acute_labels(human_kept)
    jl, ties = _judge_item_labels(acute_labels(judge))
    out = {"protocol": "acute", "judge": judge_names, "human_judgments": int(len(human_kept)),
           "human_workers": int(human_kept["worker"].nunique()), "judge_items": int(len(jl)), "judge_ties_left_out": ties,
           **_agreement_block(hl, jl, resamples, seed, confidence), "questions": []}
    rows = []
    for key in sorted(set(human_kept["question_key"]) & set(judge["question_key"])):
        h, j = human_kept[human_kept["question_key"] == key], judge[judge["question_key"] == key]
        models = sorted(set(models_of(h)) | set(models_of(j)))  # a tie's models too
        mh = matchups(h, models).set_index(["model_a", "model_b"])
        mj = matchups(j, models).set_index(["model_a", "model_b"])
        for pair in sorted(set(mh.index) & set(mj.index)):
            hr, hlow, hhigh = _proportion(mh.loc[pair, "wins_b"], mh.loc[pair, "n"], confidence)
            jr, jlow, jhigh = _proportion(mj.loc[pair, "wins_b"], mj.loc[pair, "n"], confidence)
            rows.append({"question_key": key, "model_a": pair[0], "model_b": pair[1],
                         "human_n": int(mh.loc[pair, "n"]), "human_winrate_b": hr, "human_ci_low": hlow,
                         "human_ci_high": hhigh, "judge_n": int(mj.loc[pair, "n"]), "judge_winrate_b": jr,
                         "judge_ci_low": jlow, "judge_ci_high": jhigh, "difference": jr - hr,
                         "same_winner": bool(np.sign(hr - 0.5) == np.sign(jr - 0.5))})
        ranking = {}
        try:
            bh = bradley_terry(h, bootstrap=0)
            bj = bradley_terry(j, bootstrap=0)
            ranking = ra.rank_correlation(dict(zip(bh["model"], bh["strength"])), dict(zip(bj["model"], bj["strength"])))
            ranking["scores"] = "Bradley-Terry strengths"
        except UserError as exc:
            ranking = {"error": str(exc)}
        out["questions"].append({"question_key": key, "ranking": ranking})
    table = pd.DataFrame(rows)
    out["matchups"] = {"n": len(table),
                       "mean_abs_difference": float(table["difference"].abs().mean()) if len(table) else float("nan"),
                       "same_winner": int(table["same_winner"].sum()) if len(table) else 0,
                       "interval": f"exact (Clopper-Pearson) {int(confidence * 100)}% per win rate"}
    return {"summary": out, "matchups": table}


# ----------------------------------------------------------------------------- per-turn

def perturn_labels(df: pd.DataFrame) -> pd.DataFrame:
    """SOBA: item = (dialogue, turn), label = the picked model. SATA/SM: item = (dialogue, turn, model),
    label = picked. Turns with an incomplete candidate are left out, as the per-turn analyses do."""
    incomplete = df.groupby(["dialogue", "turn"])["incomplete"].transform("any")
    df = df[~incomplete]
    soba = df[(df["protocol"] == "soba") & df["picked"]]
    rest = df[df["protocol"] != "soba"]
    parts = [pd.DataFrame({"item": soba["dialogue"].astype(str) + "#" + soba["turn"].astype(str),
                           "rater": soba["worker"], "label": soba["model"]}),
             pd.DataFrame({"item": rest["dialogue"].astype(str) + "#" + rest["turn"].astype(str) + "#" + rest["model"],
                           "rater": rest["worker"], "label": rest["picked"].map({True: "picked", False: "not picked"})})]
    return pd.concat(parts, ignore_index=True)


def pick_rates(df: pd.DataFrame, confidence: float) -> pd.DataFrame:
    shown = df[~df["incomplete"]]
    rows = []
    for model, group in shown.groupby("model", sort=True):
        rate, low, high = _proportion(int(group["picked"].sum()), len(group), confidence)
        rows.append({"model": model, "n": len(group), "pick_rate": rate, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=["model", "n", "pick_rate", "ci_low", "ci_high"])


def perturn_agreement(human: pd.DataFrame, judge: pd.DataFrame, resamples: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> dict:
    if human.empty or judge.empty:
        raise UserError("no per-turn rows to compare; check both files")
    hl, jl = perturn_labels(human), perturn_labels(judge)
    jl = jl.drop_duplicates("item")
    out = {"protocol": "per-turn", "judge": sorted(judge["worker"].unique()), "human_rows": int(len(human)),
           "human_workers": int(human["worker"].nunique()), "judge_items": int(jl["item"].nunique()),
           **_agreement_block(hl, jl, resamples, seed, confidence)}
    table = _per_model(out, pick_rates(human, confidence), pick_rates(judge, confidence), "pick_rate", "pick rate",
                       f"exact (Clopper-Pearson) {int(confidence * 100)}% per pick rate")
    return {"summary": out, "matchups": table}


# ----------------------------------------------------------------------------- SSA

SSA_JOINT = {(False, False): "not sensible", (True, False): "sensible, not specific", (True, True): "sensible and specific"}


def ssa_labels(df: pd.DataFrame, question: str) -> pd.DataFrame:
    """(item, rater, label) of one SSA question: ``sensible``, ``specific`` (false for a reply that does
    not make sense, as the labels table holds it: Meena's specificity is over all replies) or ``ssa``
    (the two answers together: three categories)."""
    if question == "ssa":
        label = [SSA_JOINT[(bool(a), bool(b))] for a, b in zip(df["sensible"], df["specific"])]
    else:
        label = df[question].map({True: "yes", False: "no"}).to_numpy()
    return pd.DataFrame({"item": df["item"].to_numpy(), "rater": df["worker"].to_numpy(), "label": label})


def ssa_rates(df: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """Sensibleness, specificity and SSA per model (over labels), with exact intervals."""
    rows = []
    for model, group in df.groupby("model", sort=True):
        row = {"model": model, "n": len(group)}
        for name, k in (("sensibleness", group["sensible"].sum()), ("specificity", group["specific"].sum())):
            row[name], row[f"{name}_low"], row[f"{name}_high"] = _proportion(int(k), len(group), confidence)
        row["ssa"] = (row["sensibleness"] + row["specificity"]) / 2
        rows.append(row)
    return pd.DataFrame(rows)


def ssa_agreement(human: pd.DataFrame, judge: pd.DataFrame, resamples: int = 1000, seed: int = 0,
                  confidence: float = 0.95) -> dict:
    """Top-level blocks: the joint label (three categories); ``questions``: sensible and specific apart."""
    if human.empty or judge.empty:
        raise UserError("no SSA labels to compare; check both files")
    shared = set(human["item"]) & set(judge["item"])
    if not shared:
        raise UserError("the human and judge SSA labels share no item; judge the same items file people labelled")
    jl = {q: ssa_labels(judge, q).drop_duplicates("item") for q in ("ssa", "sensible", "specific")}
    out = {"protocol": "ssa", "judge": sorted(judge["worker"].unique()), "human_labels": int(len(human)),
           "human_workers": int(human["worker"].nunique()), "judge_items": int(judge["item"].nunique()),
           "shared_items": len(shared), "label": "joint: not sensible / sensible, not specific / sensible and specific",
           **_agreement_block(ssa_labels(human, "ssa"), jl["ssa"], resamples, seed, confidence),
           "questions": [{"question": q, **_agreement_block(ssa_labels(human, q), jl[q], resamples, seed, confidence)}
                         for q in ("sensible", "specific")]}
    table = _per_model(out, ssa_rates(human, confidence), ssa_rates(judge, confidence), "ssa", "SSA",
                       f"exact (Clopper-Pearson) {int(confidence * 100)}% per rate, over labels (labels of one "
                       f"worker are not independent: read them as a screen)")
    return {"summary": out, "matchups": table}
