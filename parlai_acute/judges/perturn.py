"""Per-turn evaluation (SOBA, SATA, SM) with a model in the annotator's seat.

Input: a per-turn choices table (:mod:`parlai_acute.perturn.turns`; CSV or JSONL with
its columns), one row per (dialogue, model turn, candidate). An item is one model turn:
its options are the candidates the worker was shown (incomplete ones were not shown and
are not shown to the judge either), in the worker's order.

The context comes from the table itself, so no log is needed: the conversation so far is
rebuilt from the earlier turns of the same dialogue -- each turn's ``worker_message``,
then the reply that continued the conversation (the ``continued`` candidate's ``text``,
or the worker's ``user_reply`` when ``fallback`` is ``user``) -- followed by this turn's
``worker_message``. (The live task's Conversations logs, read by
:func:`parlai_acute.logs.read_log`, hold the same turns.)

Output: rows of the same table with ``worker`` = the judge's name and ``picked`` = the
judge's verdict; ``continued``/``fallback``/``user_reply`` keep describing the dialogue as
it happened (the judge cannot change the history). An inconsistent turn is dropped: the
table has no ties (SOBA needs exactly one pick).
"""
from __future__ import annotations

import csv
import json
import time
from pathlib import Path
from typing import Sequence

import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.judges import orders as order_mod
from parlai_acute.judges import templates
from parlai_acute.judges.protocol import Item, Protocol
from parlai_acute.perturn.turns import COLUMNS, PROTOCOLS, REQUIRED

TEMPLATE_OF = {"soba": "perturn_soba", "sata_random": "perturn_sata", "sata_user": "perturn_sata", "sm": "perturn_sm"}
_TRUE = {"true", "1", "yes", "t", "y", "1.0"}


def _bool(value) -> bool:
    if isinstance(value, bool):
        return value
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return False
    return str(value).strip().lower() in _TRUE


def read_turns(path: str | Path) -> pd.DataFrame:
    """A per-turn choices table from ``.csv`` or ``.jsonl`` (the columns of :data:`COLUMNS`)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"turns file {path} does not exist; pass the per-turn choices table (.csv or .jsonl)")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UserError(f"{path}:{number}: not valid JSON ({exc.msg}); one row object per line") from None
        df = pd.DataFrame(rows)
    elif path.suffix.lower() == ".csv":
        df = pd.DataFrame(list(csv.DictReader(text.splitlines(keepends=True))))
    else:
        raise UserError(f"turns file {path} must end in .csv or .jsonl")
    if df.empty:
        raise UserError(f"turns file {path} has no rows")
    for name in REQUIRED:
        if name not in df.columns:
            raise UserError(f"{path}: missing column {name!r}; the columns needed are {', '.join(REQUIRED)}")
    for name in COLUMNS:
        if name not in df.columns:
            df[name] = ""
    df = df[list(COLUMNS)].copy()
    for name in ("picked", "continued", "incomplete"):
        df[name] = df[name].map(_bool)
    df["turn"] = pd.to_numeric(df["turn"], errors="raise").astype(int)
    df = df.fillna("")
    bad = sorted(set(df["protocol"]) - set(PROTOCOLS))
    if bad:
        raise UserError(f"{path}: unknown protocol {bad[0]!r}; use one of {', '.join(PROTOCOLS)}")
    return df


def _position(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("inf")


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
                group = group.sort_values("position", key=lambda s: s.map(_position), kind="stable")
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
            rows["position"] = [first.index(r.item.options.index(index)) if index in r.item.options else ""
                                for index in rows.index]
            rows["justification"] = r.judged[0].reason
            rows["decision_seconds"] = sum(j.seconds for j in r.judged)
            rows["timestamp"] = time.time()
            out.append(rows)
        return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=list(COLUMNS))


def write_turns(path: str | Path, df: pd.DataFrame) -> None:
    from parlai_acute.files import atomic_write

    with atomic_write(path) as fh:
        df[list(COLUMNS)].to_csv(fh, index=False)
