"""Sensibleness and specificity (SSA, Meena) with a model in the annotator's seat.

Input: an SSA items file (:mod:`parlai_acute.ssa.items`, as written by
``parlai-acute ssa generate``): one model reply in its context per line. The judge answers
Meena's two questions in the order a worker does: "Does the response make sense?"
(template ``ssa_sensible``), then, only for a reply it says makes sense, "Is the response
specific?" (``ssa_specific``). A reply that does not make sense is not specific, so the
second question is never asked about it.

No position swap: an item shows one reply and asks yes or no, so there is no order to
swap (the runner shows each item in its one order). Answers are parsed strictly
(``Answer: yes|no``), asked again after an unparseable answer, then recorded as missing.

Output: rows of the SSA labels table (:mod:`parlai_acute.ssa.labels`) with ``worker`` =
the judge's name and the item's own fields (model, source, context_id, ...), so
``parlai-acute ssa analyze`` reads them unchanged. An item whose sensible answer, or
(for a sensible reply) whose specific answer, is missing gets no row: the labels table
needs both answers, and nothing is guessed.

Gold items: the static SSA task's onboarding items
(:data:`parlai_acute.ssa.items.GOLD_ITEMS`) are judged through the same two
questions and scored with the task's own rule (:func:`~parlai_acute.ssa.items.gold_passed`); the judge
passes only if it gets every one right. They never enter the labels table.
"""
from __future__ import annotations

import time
from typing import Sequence

import pandas as pd

from parlai_acute.judges import orders as order_mod
from parlai_acute.judges import templates
from parlai_acute.judges.protocol import Item, Protocol
from parlai_acute.judges.agreement import agreement_block, per_model, proportion
from parlai_acute.ssa.items import SsaItem, gold_passed, label_fields
from parlai_acute.ssa.labels import empty_labels, labels_table

QUESTIONS = ("sensible", "specific")


def speakers(context: Sequence[str]) -> list:
    """Speaker names of the context turns: the last turn is ``A``'s, turns alternate; the reply is ``B``'s."""
    n = len(context)
    return ["A" if (n - 1 - i) % 2 == 0 else "B" for i in range(n)]


class SsaProtocol(Protocol):
    name = "ssa"

    def __init__(self, sensible_template: str | None = None, specific_template: str | None = None):
        from parlai_acute.errors import UserError

        self.templates = {"sensible": templates.get(sensible_template or "ssa_sensible"),
                          "specific": templates.get(specific_template or "ssa_specific")}
        for question, template in self.templates.items():
            if template.answer != "yes_no" or not template.name.startswith("ssa_"):
                raise UserError(f"template {template.id} is not an SSA template; use one named ssa_{question}")

    def items(self, ssa_items: Sequence[SsaItem], question: str = "sensible") -> list:
        return [Item(key=f"ssa:{question}:{it.item_id}", options=[it.item_id], template=self.templates[question],
                     data={"item": it, "question": question, "context": list(it.context), "reply": it.reply})
                for it in ssa_items]

    def gold_items(self, gold: Sequence[dict], question: str = "sensible") -> list:
        """Onboarding gold items (dicts of the labelling task) as judge items; ``gold`` = the right answer."""
        out = []
        for index, g in enumerate(gold):
            if question == "specific" and "specific" not in g:
                continue
            out.append(Item(key=f"ssa-gold:{question}:{index}", options=[f"gold-{index}"],
                            template=self.templates[question], gold=bool(g[question]),
                            data={"gold": g, "index": index, "question": question, "context": list(g["context"]),
                                  "reply": g["reply"]}))
        return out

    def render(self, item: Item, order: Sequence[int]) -> str:
        context = item.data["context"]
        history = "\n".join(f"{who}: {text}" for who, text in zip(speakers(context), context))
        return item.template.render(history=history, reply=item.data["reply"], speaker="B")

    @staticmethod
    def answers(results) -> dict:
        """item id (``gold-N`` for gold items: pass gold and real results separately) -> the judge's
        yes/no (None: missing, or inconsistent)."""
        out = {}
        for r in results:
            key = r.item.options[0]
            out[key] = r.resolution.value if r.resolution.status == order_mod.CONSISTENT else None
        return out

    def table(self, ssa_items: Sequence[SsaItem], sensible_results, specific_results, judge_name: str,
              run_id: str) -> pd.DataFrame:
        """The judge's labels: one row per item with both answers it needs (see the module docstring)."""
        sensible, specific = self.answers(sensible_results), self.answers(specific_results)
        seconds = {}
        for r in list(sensible_results) + list(specific_results):
            key = r.item.options[0]
            seconds[key] = seconds.get(key, 0.0) + sum(j.seconds for j in r.judged)
        rows = []
        for it in ssa_items:
            says_sensible = sensible.get(it.item_id)
            if says_sensible is None:
                continue
            says_specific = specific.get(it.item_id) if says_sensible else False
            if says_specific is None:
                continue
            fields = label_fields(it)
            rows.append({**fields, "context": "\n".join(fields["context"]), "item": it.item_id, "worker": judge_name,
                         "sensible": bool(says_sensible), "specific": bool(says_specific), "run_id": run_id,
                         "unit_id": "", "decision_seconds": seconds.get(it.item_id, 0.0), "timestamp": time.time()})
        return labels_table(rows) if rows else empty_labels()


def onboarding_score(gold: Sequence[dict], sensible_results, specific_results) -> dict:
    """The judge's record on the gold items, by the labelling task's rule; pass = every one right."""
    sensible = SsaProtocol.answers(sensible_results)
    specific = SsaProtocol.answers(specific_results)
    right = missing = 0
    for index, g in enumerate(gold):
        key = f"gold-{index}"
        s = sensible.get(key)
        sp = (specific.get(key) if s else False) if "specific" in g else False
        if s is None or sp is None:
            missing += 1
        elif gold_passed(g, bool(s), bool(sp)):
            right += 1
    return {"gold_items": len(gold), "correct": right, "missing": missing,
            "score": right / len(gold) if gold else None, "passed": bool(gold) and right == len(gold),
            "rule": "pass = every gold item answered as the labelling task's onboarding requires "
                    "(sensible, and specific where the item says)"}

# ----------------------------------------------------------------------------- agreement with people

SSA_JOINT = {(False, False): "not sensible", (True, False): "sensible, not specific", (True, True): "sensible and specific"}


def agreement_labels(df: pd.DataFrame, question: str) -> pd.DataFrame:
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
            row[name], row[f"{name}_low"], row[f"{name}_high"] = proportion(int(k), len(group), confidence)
        row["ssa"] = (row["sensibleness"] + row["specificity"]) / 2
        rows.append(row)
    return pd.DataFrame(rows)


def agreement(human: pd.DataFrame, judge: pd.DataFrame, resamples: int = 1000, seed: int = 0,
                  confidence: float = 0.95) -> dict:
    """Top-level blocks: the joint label (three categories); ``questions``: sensible and specific apart."""
    if human.empty or judge.empty:
        raise UserError("no SSA labels to compare; check both files")
    shared = set(human["item"]) & set(judge["item"])
    if not shared:
        raise UserError("the human and judge SSA labels share no item; judge the same items file people labelled")
    jl = {q: agreement_labels(judge, q).drop_duplicates("item") for q in ("ssa", "sensible", "specific")}
    out = {"protocol": "ssa", "judge": sorted(judge["worker"].unique()), "human_labels": int(len(human)),
           "human_workers": int(human["worker"].nunique()), "judge_items": int(judge["item"].nunique()),
           "shared_items": len(shared), "label": "joint: not sensible / sensible, not specific / sensible and specific",
           **agreement_block(agreement_labels(human, "ssa"), jl["ssa"], resamples, seed, confidence),
           "questions": [{"question": q, **agreement_block(agreement_labels(human, q), jl[q], resamples, seed, confidence)}
                         for q in ("sensible", "specific")]}
    table = per_model(out, ssa_rates(human, confidence), ssa_rates(judge, confidence), "ssa", "SSA",
                       f"exact (Clopper-Pearson) {int(confidence * 100)}% per rate, over labels (labels of one "
                       f"worker are not independent: read them as a screen)")
    return {"summary": out, "matchups": table}
