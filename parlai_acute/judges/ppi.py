"""People's results corrected by a model judge's, for any protocol with estimands.

The people-only column is the protocol's own result -- its estimate and headline interval, as
``analyze`` prints them (:meth:`parlai_acute.registry.Protocol.estimands_module`) -- and the
prediction-powered column (:func:`parlai_acute.stats.ppi.ppi_mean`) estimates the same named
quantity with the judge's answers on more items. Both use the estimand's observations, so the
direction ("B vs A": B's share) and the exclusions are the protocol's; a model judge is not
capped as a worker is.

PPI works on items (a pair of conversations under a question, a turn's candidate, a reply):
people's answers to one item are averaged first. Where every item has one answer -- the usual
design -- the item mean is the protocol's pooled estimate; where some have several, the PPI
estimate weighs items equally and the row says so.

No row shows what cannot be true: intervals are clipped to the estimand's range (the true value
lies in it, so coverage is kept), an interval of zero width or none at all is said in words, and
a judge that adds nothing leaves the people's result as it is.

Workers who answer many items (issue 23). The items are the unit of PPI, but one worker's taste
runs through all the items they answered, so the people's term of the variance treats every
sampled facet the table shows as random:

* each people's item has one unit (the protocol's cluster: the worker for ACUTE-Eval, the worker
  or dialogue for per-turn) and units repeat across items: cluster-robust over those units, a t on
  G - 1 df (:func:`parlai_acute.stats.ppi.ppi_mean_clustered`);
* items carry the answers of several workers who also answer other items (static SSA replies
  labelled by 5 workers each; ACUTE pairs judged by several workers): items (SSA: their contexts)
  and workers both random, the two-way cluster-robust variance with CR3 and a t on
  min(levels) - 1 df (:func:`parlai_acute.stats.ppi.ppi_mean_crossed`; an SSA majority through its
  labels' linear parts, :func:`parlai_acute.ssa.estimands.label_rows`);
* ACUTE pairs whose conversations serve several items (people's or judge's): items, workers and
  each side's conversations all random (the ACUTE analysis' facets), with the judge-only items in
  the same variance, since they share the conversations -- whether each pair has one worker or
  several;
* the Bradley-Terry ranking (:func:`ppi_ranking`): the people's gradient term over items and
  workers, and where conversations serve several items over the conversations too, the judge-only
  items in the same meat (they share those conversations).

Fewer levels of a facet than :func:`~parlai_acute.stats.inference.min_clusters` give no interval
with the judge, and the note says so in words. The judge-only term keeps its item variance where
no conversation is shared: the judge is one fixed function, so no worker's taste enters it, and
its items are its only sampled facet. Every
row's note names the units its interval ran over (terminal, report, results.json, ppi.csv).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.stats.ppi import (bradley_terry_rank_sets, judge_tracks_people, plan, ppi_bradley_terry, ppi_mean,
                                   ppi_mean_clustered, ppi_mean_crossed)

__all__ = ["ppi_table", "ppi_ranking", "plan_row", "ROW_COLUMNS", "RANKING_COLUMNS"]

ROW_COLUMNS = ["group", "comparison", "measure", "people_estimate", "people_lower", "people_upper", "people_interval",
               "people_items", "items_with_both", "judge_only_items", "estimate", "lower", "upper", "se", "lambda",
               "effective_n", "judge_people_correlation", "judge_people_p", "units", "note"]
RANKING_COLUMNS = ["question", "model", "lambda", "strength", "lower", "upper", "people_strength", "people_lower",
                   "people_upper", "rank_lower", "rank_upper", "people_rank_lower", "people_rank_upper", "units",
                   "note"]
_KEYS = ["group", "comparison", "measure"]


def _observe(protocol, table: pd.DataFrame, judge: bool) -> pd.DataFrame:
    return protocol.estimands_module("observe").observe(table, judge=judge)


def item_means(observations: pd.DataFrame) -> pd.Series:
    """Each item's mean answer, indexed by (group, comparison, measure, item)."""
    return observations.groupby(_KEYS + ["item"], sort=True)["value"].mean()


def _finite(value) -> bool:
    return value is not None and isinstance(value, (int, float, np.floating)) and math.isfinite(value)


def ppi_table(people: pd.DataFrame, judge: pd.DataFrame, protocol: str, alpha: float = 0.05,
              bootstrap: int = 1000, seed: int = 0) -> pd.DataFrame:
    """One row per estimand of the people's table (:data:`ROW_COLUMNS`): the protocol's result
    (``people_*``, from its analysis at confidence 1 - ``alpha``) and the prediction-powered one
    beside it, with the judge's worth in items answered by people."""
    from parlai_acute import api
    from parlai_acute.registry import protocol as lookup

    p = lookup(protocol)
    module = p.estimands_module("observe")
    result = api.analyze(p.name, people, warn=False, confidence=1 - alpha, bootstrap=bootstrap, seed=seed)
    head = result.summary()  # the protocol's headline, as analyze reports it
    h_obs, j_obs = _observe(p, people, judge=False), _observe(p, judge, judge=True)
    # estimands observed item by item (a rate, a share, a per-turn difference); a difference of two
    # pooled rates has no items of its own to correct
    head = head[head["measure"].isin(set(h_obs["measure"]))]
    if j_obs.empty:
        raise UserError("the judge's table has no rows this protocol keeps; check judge_table (the judge's answers "
                        "to the people's items and more)")
    hp, jp = item_means(h_obs), item_means(j_obs)
    repeated = h_obs.groupby(_KEYS + ["item"]).size()
    units = h_obs.groupby(_KEYS + ["item"])["cluster"].agg(["first", "nunique"])
    rows = []
    for r in head.itertuples(index=False):
        key = (r.group, r.comparison, r.measure)
        estimand = module.ESTIMANDS[r.measure]
        h = hp.loc[key] if key in hp.index.droplevel(3) else pd.Series(dtype=float)
        j = jp.loc[key] if key in jp.index.droplevel(3) else pd.Series(dtype=float)
        both, only = h.index[h.index.isin(j.index)], j.index[~j.index.isin(h.index)]
        people_ok = _finite(r.low) and _finite(r.high) and r.high > r.low
        row = {"group": r.group, "comparison": r.comparison, "measure": r.measure, "people_estimate": r.estimate,
               "people_lower": r.low if people_ok else None, "people_upper": r.high if people_ok else None,
               "people_interval": r.interval if people_ok else f"none: {r.why_no_interval or 'too few clusters'}",
               "people_items": int(h.size), "items_with_both": int(both.size), "judge_only_items": int(only.size),
               "estimate": None, "lower": None, "upper": None, "se": None, "lambda": None, "effective_n": None,
               "judge_people_correlation": None, "judge_people_p": None, "units": ""}
        if both.size < 2 or only.size < 2:
            row["note"] = ("the judge answered too few of the people's items" if both.size < 2 else
                           "the judge answered fewer than 2 items beyond the people's") + ": the people's result only"
            rows.append(row)
            continue
        y, f, fu = h.loc[both].to_numpy(), j.loc[both].to_numpy(), j.loc[only].to_numpy()
        tracks = judge_tracks_people(y, f, alpha)
        lam = None if tracks["tracks"] else 0.0
        mine = units.loc[key].loc[both]
        nested = bool((mine["nunique"] == 1).all())
        repeat = mine["first"].nunique() < len(mine)  # some unit (worker) answered several items
        labels = _labels(module, people, h_obs, key, both)
        conv = None
        if labels is not None and "slope" not in labels:  # pairs of conversations (ACUTE): reused ones are sampled
            sides = h_obs.loc[(h_obs["group"] == key[0]) & (h_obs["comparison"] == key[1]), ["model_b", "model_a"]]
            if len(sides):
                frame = pd.DataFrame({"item": np.concatenate([labels["item"].to_numpy(), np.asarray(only)]),
                                      "model_b": sides["model_b"].iloc[0], "model_a": sides["model_a"].iloc[0]})
                conv = _conversations(pd.concat([people, judge], ignore_index=True), key[0], frame)
            if conv is not None:
                served = pd.DataFrame({"item": frame["item"].to_numpy(), "b": conv[0], "a": conv[1]}).drop_duplicates()
                if not (served["b"].duplicated().any() or served["a"].duplicated().any()):
                    conv = None  # every conversation in one item: the item is its unit already
        crossed = labels is not None and (conv is not None or (
            labels.groupby("item")["worker"].nunique().gt(1).any()
            and labels.groupby("worker")["item"].nunique().gt(1).any()))
        if crossed:  # several workers per item, workers across items: items (contexts) and workers sampled
            position = pd.Series(np.arange(both.size), index=both)
            label_item = position.loc[labels["item"]].to_numpy()
            # the context of an item: its protocol unit unless that unit is the worker itself (ACUTE)
            context = (np.asarray(both) if "slope" not in labels else mine["first"].to_numpy())
            count = len(labels)
            res = ppi_mean_crossed(y, f, fu, context, label_item, labels["worker"].to_numpy(),
                                   labels["vote"].to_numpy(), labels["slope"].to_numpy() if "slope" in labels
                                   else None, alpha, lam, conversations=None if conv is None else (
                                       conv[1][:count], conv[0][:count], conv[1][count:], conv[0][count:]))
        elif nested and repeat:
            res = ppi_mean_clustered(y, f, fu, mine["first"].to_numpy(), alpha, lam)
        else:
            res = ppi_mean(y, f, fu, alpha, lam=lam)
        row |= {"lambda": res["lambda"], "judge_people_correlation": tracks["r"], "judge_people_p": tracks["p"]}
        if res["lambda"] < 0.01:  # the judge adds nothing: the result is the people's, as it is
            row |= {"estimate": r.estimate, "lower": row["people_lower"], "upper": row["people_upper"],
                    "effective_n": int(both.size), "lambda": 0.0}
            row["units"] = "the people's analysis (people_interval)"
            row["note"] = "the judge added nothing: " + (tracks["why"] if not tracks["tracks"] else
                                                         "its weight tuned to 0") + "; the result is the people's"
            rows.append(row)
            continue
        unit = module.MONITOR.unit if hasattr(module, "MONITOR") else "unit"
        notes = []
        why = res.get("why", "")
        if why:  # too few levels of a sampled facet: an estimate, no interval, and the reason in words
            row |= {"estimate": float(np.clip(res["estimate"], estimand.low, estimand.high))}
            notes.append(f"no interval with the judge: {why}")
        else:
            low, high = max(res["lower"], estimand.low), min(res["upper"], estimand.high)
            row |= {"estimate": float(np.clip(res["estimate"], estimand.low, estimand.high)), "se": res["se"]}
            if high > low:
                row |= {"lower": low, "upper": high}
            else:
                notes.append("no interval: the answers on the items people and the judge both answered do not vary")
            if _finite(res["effective_n"]):
                row["effective_n"] = float(res["effective_n"])
        facet = "items" if not crossed or "slope" not in labels else f"{unit} units"
        row["units"] = (f"{res['contexts']} {facet} x {res['workers']} workers" + (
            f" x conversations (at least {res['conversations']} per model)" if crossed and conv is not None else "")
            if crossed else
                        f"{res['clusters']} {unit}s" if nested and repeat else f"{both.size} items (independent)")
        if crossed and not why and conv is not None:
            notes.append(f"interval over {res['contexts']} {facet}, {res['workers']} workers and the conversations "
                         f"(at least {res['conversations']} per model; the judge's items, which share them, in the "
                         f"same variance) at once (all sampled: multiway cluster-robust, CR3, t on {res['df']} df)")
        elif crossed and not why:
            notes.append(f"interval over {res['contexts']} {facet} and {res['workers']} workers at once (both "
                         f"sampled: two-way cluster-robust, CR3, t on {res['df']} df) and the judge's items")
        elif nested and repeat and not why:
            notes.append(f"interval over {res['clusters']} {unit}s (each {unit}'s items together, t on "
                         f"{res['clusters'] - 1} df) and the judge's items")
        if not crossed and unit != "worker" and "worker" in people.columns and people["worker"].duplicated().any():
            notes.append(f"workers answered several items: this interval runs over {unit}s and holds the workers "
                         f"fixed")
        if (repeated.loc[key] > 1).any() if key in repeated.index.droplevel(3) else False:
            notes.append("some items have several people's answers: the prediction-powered estimate weighs items "
                         "equally, the people's pools answers")
        row["note"] = "; ".join(notes)
        rows.append(row)
    return pd.DataFrame(rows, columns=ROW_COLUMNS)


def _labels(module, people: pd.DataFrame, observations: pd.DataFrame, key: tuple, items) -> pd.DataFrame | None:
    """The people's answers behind the items ``items`` of estimand ``key``, one row per answer:
    item, worker, vote, and (majorities: SSA) slope -- the share of the answers that decide their
    item's majority. None where the answers do not name their workers."""
    if hasattr(module, "label_rows"):  # items are majorities of labels (SSA)
        if "worker" not in people.columns:
            return None
        rows = module.label_rows(people)
        rows = rows[(rows["measure"] == key[2]) & rows["item"].isin(items)]
        return rows.assign(slope=float(rows["pivotal"].mean()) if len(rows) else 0.0)
    # items are means of the observations (ACUTE: the judgments of a pair, each by its worker)
    mine = observations[(observations["group"] == key[0]) & (observations["comparison"] == key[1])
                        & (observations["measure"] == key[2]) & observations["item"].isin(items)]
    return pd.DataFrame({"item": mine["item"].to_numpy(), "worker": mine["cluster"].astype(str).to_numpy(),
                         "vote": mine["value"].to_numpy(float)})


def _conversations(tables: pd.DataFrame, group: str, items: pd.DataFrame) -> tuple | None:
    """Each item's first and second model's conversation (model + dialogue id), in the order of
    ``items`` (columns item = pair_id#group, model_b: the first model, model_a), from the judgments
    tables; None where the tables do not name the conversations."""
    if not {"pair_id", "dialogue_left", "dialogue_right"} <= set(tables.columns) or items.empty:
        return None
    sides = pd.concat([pd.DataFrame({"pair_id": tables["pair_id"].astype(str),
                                     "model": tables[f"model_{side}"].astype(str),
                                     "conversation": tables[f"model_{side}"].astype(str) + "\x1f"
                                     + tables[f"dialogue_{side}"].astype(str)}) for side in ("left", "right")])
    lookup = sides.drop_duplicates(["pair_id", "model"]).set_index(["pair_id", "model"])["conversation"]
    pair = items["item"].astype(str).str.slice(0, -len(group) - 1).to_numpy()
    out = []
    for column in ("model_b", "model_a"):
        index = pd.MultiIndex.from_arrays([pair, items[column].astype(str).to_numpy()])
        found = lookup.reindex(index)
        if found.isna().any():
            return None
        out.append(found.to_numpy(str))
    return tuple(out)


def plan_row(people: pd.DataFrame, judge: pd.DataFrame, protocol: str, row: dict, delta: float, alpha: float,
             judge_per_human: float) -> dict:
    """A study's plan from the items both answered (a pilot): people's answers needed to detect
    ``delta`` with and without the judge (:func:`parlai_acute.stats.ppi.plan`)."""
    from parlai_acute.registry import protocol as lookup

    p = lookup(protocol)
    key = (row["group"], row["comparison"], row["measure"])
    hp, jp = item_means(_observe(p, people, judge=False)), item_means(_observe(p, judge, judge=True))
    h = hp.loc[key] if key in hp.index.droplevel(3) else pd.Series(dtype=float)
    j = jp.loc[key] if key in jp.index.droplevel(3) else pd.Series(dtype=float)
    both = h.index[h.index.isin(j.index)]
    return plan(h.loc[both].to_numpy(), j.loc[both].to_numpy(), delta, alpha, 0.8, judge_per_human)


def ppi_ranking(people: pd.DataFrame, judge: pd.DataFrame, protocol: str, alpha: float = 0.05) -> pd.DataFrame:
    """Bradley-Terry strengths per group (ACUTE: question) of a pairwise estimand (a win rate),
    people-only and prediction-powered, with each model's rank-set both ways (:data:`RANKING_COLUMNS`).
    Empty (with its columns) when the protocol has no win rate or too few items for a ranking."""
    from parlai_acute.registry import protocol as lookup

    p = lookup(protocol)
    module = p.estimands_module("observe")
    pairwise = [name for name, e in module.ESTIMANDS.items() if getattr(e, "pairwise", False)]
    if not pairwise:
        return pd.DataFrame(columns=RANKING_COLUMNS)
    h_obs, j_obs = _observe(p, people, judge=False), _observe(p, judge, judge=True)
    h_obs, j_obs = h_obs[h_obs["measure"].isin(pairwise)], j_obs[j_obs["measure"].isin(pairwise)]
    rows = []
    for group in sorted(set(h_obs["group"])):
        # items oriented as the estimand: value 1 when model_b (named first) won
        h = h_obs[h_obs["group"] == group].groupby(["item", "model_a", "model_b"])["value"].mean().reset_index()
        j = j_obs[j_obs["group"] == group].groupby(["item", "model_a", "model_b"])["value"].mean().reset_index()
        # the models the people compared: a model only the judge saw has no people's strength to correct
        names = sorted(set(h["model_a"]) | set(h["model_b"]))
        index = {m: i for i, m in enumerate(names)}
        both = h.merge(j, on=["item", "model_a", "model_b"], suffixes=("_people", "_judge"))
        only = j[~j["item"].isin(h["item"]) & j["model_a"].isin(names) & j["model_b"].isin(names)]
        if len(both) < 2 or len(only) < 2 or len(names) < 2:
            continue
        tracks = judge_tracks_people(both["value_people"], both["value_judge"], alpha)
        # the people's judgments behind the items: where workers repeat across items, the people's
        # gradient term is clustered over items and workers at once
        mine = h_obs[(h_obs["group"] == group) & h_obs["item"].isin(both["item"])]
        answers = None
        conv = _conversations(pd.concat([people, judge], ignore_index=True), group,
                              pd.concat([mine[["item", "model_b", "model_a"]], only[["item", "model_b", "model_a"]]]))
        reused = conv is not None and pd.Series(np.concatenate(conv)).duplicated().any()
        if mine.groupby("cluster")["item"].nunique().gt(1).any() or reused:
            position = pd.Series(np.arange(len(both)), index=both["item"].to_numpy())
            answers = {"item": position.loc[mine["item"]].to_numpy(), "value": mine["value"].to_numpy(float),
                       "worker": mine["cluster"].astype(str).to_numpy()}
            if reused:
                answers["conversations"] = (conv[0][:len(mine)], conv[1][:len(mine)])
                answers["judge_conversations"] = (conv[0][len(mine):], conv[1][len(mine):])
        try:
            res = ppi_bradley_terry(both["model_b"].map(index), both["model_a"].map(index), both["value_people"],
                                    both["value_judge"], only["model_b"].map(index), only["model_a"].map(index),
                                    only["value"], len(names), alpha, lam=None if tracks["tracks"] else 0.0,
                                    answers=answers)
        except np.linalg.LinAlgError:  # comparisons that do not connect the models: no ranking to give
            continue
        ranks = bradley_terry_rank_sets(res, alpha)
        notes = [] if res["lambda"] >= 0.01 else ["the judge added nothing" + (
            f": {tracks['why']}" if not tracks["tracks"] else "")]
        if res["why"]:
            notes.append(f"no intervals or rank-sets: {res['why']}")
        elif answers is not None:
            over = (f"{res['levels'][0]} items, {res['levels'][1]} workers and the conversations (at least "
                    f"{res['levels'][2]} per model; each item in both its conversations, the judge's items too)"
                    if reused else f"{res['levels'][0]} items and {res['levels'][1]} workers")
            notes.append(f"intervals over {over} at once (all sampled: multiway cluster-robust, CR3, t on "
                         f"{res['df']} df)" + ("" if reused else " and the judge's items"))
        else:
            notes.append(f"intervals over {len(both)} items, each judged by workers who judged no other, and the "
                         f"judge's items")
        units = (f"{len(both)} items (independent)" if answers is None else
                 f"{res['levels'][0]} items x {res['levels'][1]} workers" + (
                     f" x conversations (at least {res['levels'][2]} per model)" if reused else ""))
        for i, model in enumerate(names):
            bounds = {key: (None if res["why"] else float(res[key][i]))
                      for key in ("lower", "upper", "people_lower", "people_upper")}
            sets = ({key: int(ranks[key][i]) for key in ("rank_lower", "rank_upper", "people_rank_lower",
                                                           "people_rank_upper")} if not res["why"] else
                    {"rank_lower": 1, "rank_upper": len(names), "people_rank_lower": 1,
                     "people_rank_upper": len(names)})
            rows.append({"question": group, "model": model, "lambda": res["lambda"],
                         "strength": float(res["strength"][i]), "people_strength": float(res["people_strength"][i]),
                         **bounds, **sets, "units": units, "note": "; ".join(notes)})
    return pd.DataFrame(rows, columns=RANKING_COLUMNS)

