"""From evidence to a plan: the per-worker table with pay, and the actions the policy proposes.

Pure (no Mephisto): :mod:`parlai_acute.mephisto_tasks.live.review` reads a run into evidence rows
and units, and carries the plan out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from parlai_acute.review.evidence import COLUMNS, worker_table
from parlai_acute.review.rules import PAY_COLUMNS, Policy, pay, propose

TABLE_COLUMNS = [*COLUMNS[:-1], *PAY_COLUMNS, COLUMNS[-1]]  # notes last


@dataclass
class ReviewPlan:
    """The review of one run: ``table`` (one row per worker, :data:`TABLE_COLUMNS`), ``proposals``
    (per worker: decision, reasons, block, bonuses, evidence) and, after ``--apply``, ``done``
    (every action carried out or skipped, as logged)."""

    protocol: str
    task_name: str
    table: pd.DataFrame
    proposals: list[dict]
    policy: Policy
    done: list[dict] = field(default_factory=list)
    agents: list[dict] = field(default_factory=list)  # the run's agents (Mephisto side), for carrying it out
    block_qualification: str = ""

    def counts(self) -> dict[str, int]:
        """How many workers each action concerns (approve / soft_reject / reject / block / bonus)."""
        out = {"approve": 0, "soft_reject": 0, "reject": 0, "block": 0, "bonus": 0}
        for p in self.proposals:
            out[p["decision"]] += 1
            out["block"] += bool(p["block"])
            out["bonus"] += bool(p["bonuses"])
        return out


def make_plan(protocol: str, task_name: str, rows, units, policy: Policy, *, bonus_paid: dict | None = None,
              alpha: float = 0.05) -> ReviewPlan:
    """The table (evidence, then pay) and the proposals. Pay depends on the decisions (rejected work
    is not paid) and rules may read pay (``hourly_pay``): decisions first on pay as if all were
    approved, then pay and proposals again on those decisions."""
    units = list(units)
    unit_frame = pd.DataFrame.from_records(units, columns=["worker", "unit_id", "seconds", "pay"])
    table = worker_table(rows, units, alpha=alpha)
    first = propose(pay(table, unit_frame, {}, policy.min_hourly_wage, bonus_paid), policy)
    decisions = {p["worker"]: p["decision"] for p in first}
    table = pay(table, unit_frame, decisions, policy.min_hourly_wage, bonus_paid)[TABLE_COLUMNS]
    return ReviewPlan(protocol, task_name, table, propose(table, policy), policy)
