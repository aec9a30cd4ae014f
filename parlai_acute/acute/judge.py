"""ACUTE-Eval with a model in the annotator's seat.

Items come from a pairings file (:mod:`parlai_acute.acute.pairings`): each line, under one
question, is one item whose options are the two evaluated models. The judge sees both
conversations as a worker does -- the evaluated speaker marked ``Speaker 1`` /
``Speaker 2``, the other side ``Partner`` -- and answers which speaker and why.

Answers become rows of the judgments table (:mod:`parlai_acute.acute.judgments`) with
``worker`` = the judge's name, so ``parlai-acute acute analyze`` reads them unchanged:

* ``judgments.csv``: one row per resolved item. A consistent item gives one judgment
  (shown left/right as in its first order); with ``allow_tie`` (a study that offers people a
  tie) the judge may answer ``tie`` (template ``acute_<question>_tie``), and a tie in every
  order is one judgment with ``outcome`` tie. An inconsistent item is left out (rule
  ``drop``) or, with rule ``tie``, written as one judgment with ``outcome`` tie (shown as in
  its first order): half a win for each model, as the estimand counts a person's tie;
* ``raw_judgments.csv``: every answered order as shown (for position bias, "as for people");
* ``onboarding.csv``: the gold pairs, every order, with ``onboarding_correct``. The judge
  passes onboarding only if every gold pair is answered correctly in every order, the
  rule a worker meets with one order. They are kept out of ``judgments.csv`` so that a
  failed judge is flagged in the report rather than silently excluded by the analysis.
"""
from __future__ import annotations

import hashlib
import time
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from parlai_acute.acute.judgments import TIE, normalize_row, to_frame
from parlai_acute.acute.pairings import OTHER_SPEAKER
from parlai_acute.errors import UserError
from parlai_acute.judges import orders as order_mod
from parlai_acute.judges import templates
from parlai_acute.judges.protocol import Item, Protocol
from parlai_acute.judges.agreement import agreement_block, proportion
from parlai_acute.stats import rater_agreement as ra
from parlai_acute.acute.questions import resolve as resolve_question


def dialogue_ids(pairing: dict, index: int) -> list:
    ids = pairing.get("dialogue_ids")
    if ids is None:  # gold pairs may come without ids (as the judgments reader names them)
        ids = [f"onboarding-{index}-{i}" for i in (0, 1)]
    return [str(d) for d in ids]


class AcuteProtocol(Protocol):
    name = "acute"

    def __init__(self, question_key: str = "engaging", custom_question: Optional[str] = None,
                 template_id: Optional[str] = None, allow_tie: bool = False):
        self.question_key, self.question = resolve_question(question_key, custom_question)
        self.allow_tie = allow_tie
        self.template = templates.get(template_id or f"acute_{self.question_key}" + ("_tie" if allow_tie else ""))
        if self.template.answer != "one" or "{conversation_1}" not in self.template.body:
            raise UserError(f"template {self.template.id} is not an ACUTE-Eval template; use one named acute_*")
        offers = TIE in self.template.extra_labels
        if offers != allow_tie:
            raise UserError(f"template_id {self.template.id} {'offers' if offers else 'does not offer'} a tie but "
                            f"allow_tie is {allow_tie}; use an acute_*_tie template with allow_tie=True, a forced-choice "
                            f"one without", param=("template_id", "allow_tie"))

    def items(self, pairings: Sequence[dict]) -> list:
        out = []
        for index, pairing in enumerate(pairings):
            options = list(pairing["speakers_to_eval"])
            gold = options.index(pairing["correct_answer"]) if pairing.get("is_onboarding") else None
            ids = dialogue_ids(pairing, index)
            key = f"acute:{self.question_key}:{pairing.get('pair_id') or '|'.join(sorted(ids))}"
            out.append(Item(key=key, options=options, template=self.template, gold=gold,
                            data={"pairing": pairing, "index": index, "dialogue_ids": ids}))
        return out

    def render(self, item: Item, order: Sequence[int]) -> str:
        pairing = item.data["pairing"]
        texts = []
        for position, option in enumerate(order):
            speaker = pairing["speakers_to_eval"][option]
            lines = [f"{f'Speaker {position + 1}' if turn['id'] == speaker else 'Partner'}: {turn['text']}"
                     for turn in pairing["dialogue_dicts"][option]["dialogue"]]
            texts.append("\n".join(lines))
        return item.template.render(conversation_1=texts[0], conversation_2=texts[1], question=self.question)

    # ------------------------------------------------------------------ rows

    def row(self, item: Item, order: Sequence[int], winner: int | str | None, reason: str, judge_name: str,
            run_id: str, duration: float, correct=None) -> dict:
        """One judgment as shown in ``order``; ``winner`` None (the judge's verdict changed with the
        order, kept under rule ``tie``) or ``"tie"`` (the judge's own answer): a tie."""
        if winner == TIE:
            winner = None
        pairing, ids = item.data["pairing"], item.data["dialogue_ids"]
        left, right = order[0], order[1]
        raw = {"run_id": run_id, "worker": judge_name, "pair_id": pairing.get("pair_id", ""),
               "model_left": item.options[left], "model_right": item.options[right],
               "dialogue_left": ids[left], "dialogue_right": ids[right],
               "winner": "" if winner is None else item.options[winner],
               "winner_side": "" if winner is None else "left" if winner == left else "right",
               "outcome": "win" if winner is not None else "tie", "reason": reason,
               "question": self.question, "question_key": self.question_key,
               "is_onboarding": item.gold is not None, "onboarding_correct": correct,
               "timestamp": time.time(), "duration": duration}
        return normalize_row(raw, f"judge item {item.key}")

    def tables(self, results, judge_name: str, run_id: str, rule: str) -> dict:
        """``judgments`` (resolved), ``raw`` (every answered order), ``onboarding`` (gold, every order)."""
        resolved, raw, onboarding = [], [], []
        for r in results:
            for j in r.judged:
                if j.missing:
                    continue
                if r.item.gold is not None:
                    onboarding.append(self.row(r.item, j.order, j.value, j.reason, judge_name, run_id, j.seconds,
                                               correct=j.value == r.item.gold))
                else:
                    raw.append(self.row(r.item, j.order, j.value, j.reason, judge_name, run_id, j.seconds))
            if r.item.gold is not None:
                continue
            seconds = sum(j.seconds for j in r.judged)
            if r.resolution.status == order_mod.CONSISTENT:
                first = r.judged[0]
                resolved.append(self.row(r.item, first.order, r.resolution.value, first.reason, judge_name, run_id,
                                         seconds))
            elif r.resolution.status == order_mod.INCONSISTENT and rule == "tie":
                first = r.judged[0]
                resolved.append(self.row(r.item, first.order, None, first.reason, judge_name, run_id, seconds))
        return {"judgments": to_frame(resolved), "raw": to_frame(raw), "onboarding": to_frame(onboarding)}


def onboarding_score(results) -> dict:
    """The judge's gold-pair record: orders right, items right in every order, pass/fail."""
    gold = [r for r in results if r.item.gold is not None]
    orders = [j for r in gold for j in r.judged]
    right_orders = sum((not j.missing) and j.value == r.item.gold for r in gold for j in r.judged)
    right_items = sum(r.resolution.status == order_mod.CONSISTENT and r.resolution.value == r.item.gold for r in gold)
    return {"gold_items": len(gold), "items_correct_every_order": right_items, "orders": len(orders),
            "orders_correct": right_orders, "orders_missing": sum(j.missing for j in orders),
            "score": right_orders / len(orders) if orders else None,
            "passed": bool(gold) and right_items == len(gold),
            "rule": "pass = every gold pair chosen correctly in every order (a worker: in the one order shown)"}

# ----------------------------------------------------------------------------- agreement with people

def agreement_labels(df: pd.DataFrame) -> pd.DataFrame:
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


def agreement(human: pd.DataFrame, judge: pd.DataFrame, resamples: int = 1000, seed: int = 0,
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
    hl = agreement_labels(human_kept)
    jl, ties = _judge_item_labels(agreement_labels(judge))
    out = {"protocol": "acute", "judge": judge_names, "human_judgments": int(len(human_kept)),
           "human_workers": int(human_kept["worker"].nunique()), "judge_items": int(len(jl)), "judge_ties_left_out": ties,
           **agreement_block(hl, jl, resamples, seed, confidence), "questions": []}
    rows = []
    for key in sorted(set(human_kept["question_key"]) & set(judge["question_key"])):
        h, j = human_kept[human_kept["question_key"] == key], judge[judge["question_key"] == key]
        models = sorted(set(models_of(h)) | set(models_of(j)))  # a tie's models too
        mh = matchups(h, models).set_index(["model_a", "model_b"])
        mj = matchups(j, models).set_index(["model_a", "model_b"])
        for pair in sorted(set(mh.index) & set(mj.index)):
            hr, hlow, hhigh = proportion(mh.loc[pair, "wins_b"], mh.loc[pair, "n"], confidence)
            jr, jlow, jhigh = proportion(mj.loc[pair, "wins_b"], mj.loc[pair, "n"], confidence)
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
