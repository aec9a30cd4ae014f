"""Per-turn evaluation (SOBA, SATA, SM) with a model in the annotator's seat.

Input: a per-turn choices table, read and validated by
:func:`parlai_acute.per_turn.turns.read_turns` (written back by its ``write_turns``), one row per (dialogue, model turn, candidate). An item is one model turn:
its options are the candidates the worker was shown (incomplete ones were not shown and
are not shown to the judge either), in the worker's order.

The context comes from the table itself, so no log is needed: the conversation so far is
rebuilt from the earlier turns of the same dialogue -- each turn's ``worker_message``,
then the reply that continued the conversation (the ``continued`` candidate's ``text``,
or the worker's ``user_reply`` when ``fallback`` is ``user``) -- followed by this turn's
``worker_message``. (The live task's Conversations logs, read by
:func:`parlai_acute.logs.read_log`, hold the same turns.)

Output: rows of the same validated table with ``worker`` = the judge's name and ``picked``
= the judge's verdict, as if the judge had been the worker at that turn. The context the
judge saw is the dialogue as it happened; ``continued`` and ``fallback`` follow the judge's
picks as the table requires (the continuation is one of the picks: the one that really
continued when the judge picked it too, otherwise the judge's first pick; ``fallback`` is
derived from the picks), and ``user_reply`` is kept. An inconsistent turn is dropped: the
table has no ties (SOBA needs exactly one pick).
"""
from __future__ import annotations

import time
from typing import Sequence

import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.judges import orders as order_mod
from parlai_acute.judges import templates
from parlai_acute.judges.protocol import Item, Protocol
from parlai_acute.judges.agreement import agreement_block, per_model, proportion
from parlai_acute.per_turn.turns import turns_table

TEMPLATE_OF = {"soba": "perturn_soba", "sata_random": "perturn_sata", "sata_user": "perturn_sata", "sm": "perturn_sm"}


class PerTurnProtocol(Protocol):
    name = "per-turn"

    def items(self, turns: pd.DataFrame, worker: str | None = None) -> list:
        """One item per (dialogue, turn) of one worker (``worker``, default: the first in each dialogue)."""
        items = []
        for dialogue, rows in turns.groupby("dialogue", sort=True):
            who = worker if worker is not None else sorted(rows["worker"].astype(str))[0]
            rows = rows[rows["worker"].astype(str) == who]
            history: list = []
            for turn, group in rows.groupby("turn", sort=True):
                group = group.sort_values("position", na_position="last", kind="stable")  # Int64, NA unshown
                shown = group[~group["incomplete"]]
                message = str(group["worker_message"].iloc[0])
                context = history + ([("User", message)] if message else [])
                protocol = str(group["protocol"].iloc[0])
                if len(shown):
                    template = templates.latest(TEMPLATE_OF[protocol])
                    items.append(Item(key=f"per-turn:{dialogue}:{turn}", options=list(shown.index),
                                      template=template, data={"rows": group, "context": list(context),
                                                               "protocol": protocol}))
                history = context + self._continuation(group)
        return items

    @staticmethod
    def _continuation(group: pd.DataFrame) -> list:
        if str(group["fallback"].iloc[0]) == "user":
            reply = str(group["user_reply"].iloc[0])
            return [("Bot", reply)] if reply else []
        chosen = group[group["continued"]]
        return [("Bot", str(chosen["text"].iloc[0]))] if len(chosen) else []

    @staticmethod
    def _judge_continuation(rows: pd.DataFrame, item_protocol: str) -> list[bool]:
        """Which candidate continues after the judge's picks (see the module docstring)."""
        picked, happened = rows["picked"].to_numpy(), rows["continued"].to_numpy()
        if item_protocol == "sm" or not picked.any():
            # SM continues with its one reply whatever the verdict; SATA with no pick falls back
            # to a random reply (kept as it happened) or, for SATA-User, to the worker's own
            return [bool(c) and item_protocol != "sata_user" for c in happened]
        if (picked & happened).any():
            return list(picked & happened)
        first = int(picked.argmax())
        return [i == first for i in range(len(rows))]

    def render(self, item: Item, order: Sequence[int]) -> str:
        rows = item.data["rows"]
        history = "\n".join(f"{who}: {text}" for who, text in item.data["context"]) or "(the Bot speaks first)"
        texts = [str(rows.loc[item.options[o], "text"]) for o in order]
        if item.kind == "yes_no":
            candidates = texts[0]
        else:
            candidates = "\n".join(f"{p + 1}. {t}" for p, t in enumerate(texts))
        labels = ", ".join(self.labels(item))
        return item.template.render(history=history, candidates=candidates, labels=labels)

    def table(self, results, judge_name: str, run_id: str) -> pd.DataFrame:
        """The judge's rows (consistent items only; see the module docstring)."""
        out = []
        for r in results:
            if r.resolution.status != order_mod.CONSISTENT:
                continue
            verdict = r.resolution.value
            if r.item.kind == "one":
                picked = {verdict}
            elif r.item.kind == "any":
                picked = set(verdict)
            else:
                picked = {0} if verdict else set()
            first = r.judged[0].order
            rows = r.item.data["rows"].copy()
            rows["worker"], rows["run_id"], rows["unit_id"] = judge_name, run_id, ""
            rows["picked"] = [index in {r.item.options[i] for i in picked} for index in rows.index]
            rows["continued"] = self._judge_continuation(rows, item_protocol=r.item.data["protocol"])
            rows["fallback"] = ""  # derived from the judge's picks by turns_table
            rows["position"] = pd.array([first.index(r.item.options.index(index)) if index in r.item.options
                                         else None for index in rows.index], dtype="Int64")
            rows["justification"] = r.judged[0].reason
            rows["decision_seconds"] = float(sum(j.seconds for j in r.judged))
            rows["timestamp"] = time.time()
            out.append(rows)
        return turns_table(pd.concat(out, ignore_index=True) if out else [])

# ----------------------------------------------------------------------------- agreement with people

def agreement_labels(df: pd.DataFrame) -> pd.DataFrame:
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
        rate, low, high = proportion(int(group["picked"].sum()), len(group), confidence)
        rows.append({"model": model, "n": len(group), "pick_rate": rate, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=["model", "n", "pick_rate", "ci_low", "ci_high"])


def agreement(human: pd.DataFrame, judge: pd.DataFrame, resamples: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> dict:
    if human.empty or judge.empty:
        raise UserError("no per-turn rows to compare; check both files")
    hl, jl = agreement_labels(human), agreement_labels(judge)
    jl = jl.drop_duplicates("item")
    out = {"protocol": "per-turn", "judge": sorted(judge["worker"].unique()), "human_rows": int(len(human)),
           "human_workers": int(human["worker"].nunique()), "judge_items": int(jl["item"].nunique()),
           **agreement_block(hl, jl, resamples, seed, confidence)}
    table = per_model(out, pick_rates(human, confidence), pick_rates(judge, confidence), "pick_rate", "pick rate",
                       f"exact (Clopper-Pearson) {int(confidence * 100)}% per pick rate")
    return {"summary": out, "matchups": table}
