"""The per-worker review table: what each worker did and how, from a run's evidence rows and units.

Every number is something a worker could be shown: their units and judgments, time per unit and
per judgment, gold (onboarding, practice) results, reason length, position bias (a binomial test,
with the number of judgments it needs before it can fire at all), leave-one-out agreement with the
other workers, straight-lining, the message checks (:mod:`.messages`) and the protocol's exclusions.
A value that cannot be computed is left empty and said in words in ``notes``, never NaN on a surface.
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd
from scipy.stats import binomtest

from parlai_acute.review.messages import CHECKS, check_messages

#: One evidence row (a protocol's ``review.evidence(units)`` returns a list of these; absent = None):
ROW = {
    "worker": "the worker's name, as in the protocol's tables",
    "unit_id": "the Mephisto unit the row was stored in",
    "item": "what was judged (pair, turn, item, context): rows on the same item and question are compared",
    "question": "the question answered (agreement compares answers to the same question)",
    "answer": "the answer given, as text (None: not an answer, e.g. a message-only row)",
    "seconds": "seconds spent on this judgment",
    "first": "the worker chose the option shown first (left, top); None when not a one-of-n choice",
    "options": "how many options were shown for that choice",
    "gold": "a gold / onboarding / practice item: True answered right, False wrong (None: a real item)",
    "reason": "the worker's justification, when the task asks for one",
    "message": "text the worker wrote (a chat message, a reply): the message checks apply",
    "straight": "the answer counts for straight-lining (SATA picks, SSA labels)",
    "excluded": "the protocol's exclusion rule that drops this row from the analysis ('' kept)",
}
UNIT = {"worker": "worker name", "unit_id": "Mephisto unit", "seconds": "time from accept to submit",
        "pay": "the unit's base pay"}

COLUMNS = ["worker", "units", "judgments", "seconds_worked", "seconds_per_unit", "seconds_per_judgment",
           "gold_items", "gold_correct", "gold_accuracy", "reasons", "reason_chars", "empty_reasons",
           "position_judgments", "first_position_share", "position_chance", "position_p", "position_needs",
           "agreement_items", "agreement", "straight_answers", "straight_share", "messages", *CHECKS,
           "messages_flagged", "excluded", "excluded_because", "notes"]


@lru_cache(maxsize=256)
def judgments_needed(chance: float, alpha: float) -> int:
    """The fewest judgments at which the position test can fire at all: every one in the first
    position gives p < ``alpha`` (two-sided binomial test against ``chance``)."""
    for n in range(1, 10_000):
        if binomtest(n, n, chance).pvalue < alpha:
            return n
    return 10_000


def _rows_frame(rows) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(list(rows), columns=list(ROW))
    frame["worker"] = frame["worker"].astype(str)
    return frame


def _agreement(answers: pd.DataFrame) -> pd.DataFrame:
    """Per worker: items shared with other workers, and the share of the other workers' answers
    to those items that equal this worker's (leave-one-out: a worker never agrees with themself)."""
    if answers.empty:
        return pd.DataFrame(columns=["agreement_items", "agreement"])
    keys = ["item", "question"]
    a = answers.assign(item=answers["item"].astype(str), question=answers["question"].fillna("").astype(str),
                       answer=answers["answer"].astype(str))
    total = a.groupby(keys)["answer"].transform("size")
    same = a.groupby([*keys, "answer"])["answer"].transform("size")
    shared = total > 1
    a = a[shared].assign(share=((same - 1) / (total - 1))[shared])
    out = a.groupby("worker")["share"].agg(agreement_items="size", agreement="mean")
    return out


def worker_table(rows, units, *, alpha: float = 0.05, straight_min: int = 10) -> pd.DataFrame:
    """One row per worker (:data:`COLUMNS`) from evidence ``rows`` (:data:`ROW`) and ``units``
    (:data:`UNIT`). ``alpha``: the position test's level; ``straight_min``: answers before the
    straight-lining share is reported."""
    r = _rows_frame(rows)
    u = pd.DataFrame.from_records(list(units), columns=list(UNIT))
    u["worker"] = u["worker"].astype(str)
    workers = sorted(set(r["worker"]) | set(u["worker"]))
    table = pd.DataFrame(index=pd.Index(workers, name="worker"))
    notes = {w: [] for w in workers}

    seconds = pd.to_numeric(u["seconds"], errors="coerce")
    table["units"] = u.groupby("worker").size().reindex(workers, fill_value=0)
    table["seconds_worked"] = seconds.groupby(u["worker"]).sum(min_count=1).reindex(workers)
    table["seconds_per_unit"] = seconds.groupby(u["worker"]).median().reindex(workers)

    gold = r[r["gold"].notna()]
    real = r[r["gold"].isna() & r["answer"].notna()]
    table["judgments"] = real.groupby("worker").size().reindex(workers, fill_value=0)
    per_judgment = pd.to_numeric(real["seconds"], errors="coerce")
    table["seconds_per_judgment"] = per_judgment.groupby(real["worker"]).median().reindex(workers)
    table["gold_items"] = gold.groupby("worker").size().reindex(workers, fill_value=0)
    table["gold_correct"] = gold["gold"].astype(bool).groupby(gold["worker"]).sum().reindex(workers, fill_value=0)
    table["gold_accuracy"] = (table["gold_correct"] / table["gold_items"]).where(table["gold_items"] > 0)

    reasons = r[r["reason"].notna()]
    length = reasons["reason"].astype(str).str.strip().str.len()
    table["reasons"] = reasons.groupby("worker").size().reindex(workers, fill_value=0)
    table["reason_chars"] = length.groupby(reasons["worker"]).median().reindex(workers)
    table["empty_reasons"] = (length == 0).groupby(reasons["worker"]).sum().reindex(workers, fill_value=0)

    choice = r[r["first"].notna() & r["gold"].isna()]
    first = choice["first"].astype(bool)
    chance = 1.0 / pd.to_numeric(choice["options"], errors="coerce").clip(lower=2).fillna(2)
    table["position_judgments"] = choice.groupby("worker").size().reindex(workers, fill_value=0)
    table["first_position_share"] = first.groupby(choice["worker"]).mean().reindex(workers)
    table["position_chance"] = chance.groupby(choice["worker"]).mean().reindex(workers)
    p_values, needs = {}, {}
    for worker, n in table["position_judgments"].items():
        if n == 0:
            continue
        p0 = float(table.at[worker, "position_chance"])
        needs[worker] = judgments_needed(round(p0, 6), alpha)
        if n >= needs[worker]:
            k = int(round(table.at[worker, "first_position_share"] * n))
            p_values[worker] = binomtest(k, int(n), p0).pvalue
        else:
            notes[worker].append(f"position test needs {needs[worker]} judgments to fire at alpha {alpha:g}, "
                                 f"has {n}")
    table["position_p"] = pd.Series(p_values, dtype=float).reindex(workers)
    table["position_needs"] = pd.Series(needs, dtype=float).reindex(workers)

    agreement = _agreement(real[real["item"].notna()])
    table["agreement_items"] = agreement["agreement_items"].reindex(workers).fillna(0).astype(int)
    table["agreement"] = agreement["agreement"].reindex(workers)

    straight = real[real["straight"].map(lambda v: v is True or v == 1)]
    counts = straight.groupby(["worker", "answer"]).size()
    table["straight_answers"] = straight.groupby("worker").size().reindex(workers, fill_value=0)
    top = counts.groupby(level="worker").max().reindex(workers)
    table["straight_share"] = (top / table["straight_answers"]).where(table["straight_answers"] >= straight_min)

    written = r[r["message"].notna()]
    table["messages"] = written.groupby("worker").size().reindex(workers, fill_value=0)
    failed = {check: {} for check in CHECKS}
    flagged = {}
    for worker, texts in written.groupby("worker")["message"]:
        results = check_messages(list(texts))
        for check in CHECKS:
            failed[check][worker] = sum(check in f for f in results)
        flagged[worker] = sum(bool(f) for f in results)
    for check in CHECKS:
        table[check] = pd.Series(failed[check], dtype=float).reindex(workers).fillna(0).astype(int)
    table["messages_flagged"] = pd.Series(flagged, dtype=float).reindex(workers).fillna(0).astype(int)

    dropped = r[r["excluded"].fillna("").astype(str) != ""]
    table["excluded"] = dropped.groupby("worker").size().reindex(workers, fill_value=0)
    because = {w: "; ".join(f"{rule}: {n}" for rule, n in g["excluded"].value_counts().sort_index().items())
               for w, g in dropped.groupby("worker")}
    table["excluded_because"] = pd.Series(because, dtype=object).reindex(workers).fillna("")

    for worker in workers:
        row = table.loc[worker]
        if row["judgments"] and row["agreement_items"] == 0:
            notes[worker].append("no agreement: no other worker answered the same items")
        if row["straight_answers"] and row["straight_answers"] < straight_min:
            notes[worker].append(f"straight-lining needs {straight_min} answers, has {row['straight_answers']}")
        if row["units"] and pd.isna(row["seconds_worked"]):
            notes[worker].append("no stored start and end times for the units, so no hours or hourly pay")
    table["notes"] = pd.Series({w: "; ".join(n) for w, n in notes.items()}, dtype=object)
    return table.reset_index()[COLUMNS]
