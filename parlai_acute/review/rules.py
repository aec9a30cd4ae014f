"""Rules the researcher sets, the actions they propose for each worker, and the pay that follows.

A rule is ``{"when": "COLUMN OP VALUE", "action": ACTION, "reason": TEXT}`` over a column of the
review table (:data:`.evidence.COLUMNS`, plus ``hourly_pay``), e.g.::

    rules:
      - when: gold_accuracy < 0.5
        action: reject
        reason: "answered {gold_correct} of {gold_items} check items correctly"
      - when: position_p < 0.001
        action: soft_reject
      - when: messages_flagged > 3
        action: block
    min_hourly_wage: 12.0

``ACTION``: ``approve``, ``soft_reject``, ``reject`` (the work's decision: the strongest that fires;
no rule firing is approve), ``block`` (grant the block qualification), ``bonus`` (with ``amount``).
A rule over a value that is undefined for a worker (too few judgments for the position test) does
not fire; the table's ``notes`` say why. ``reason`` may name columns in braces. Each action keeps
its evidence: the values of the columns its rules read.
"""
from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from parlai_acute.errors import UserError

DECISIONS = ("approve", "soft_reject", "reject")  # weakest first
ACTIONS = (*DECISIONS, "block", "bonus")
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq,
       "!=": operator.ne}
_WHEN = re.compile(r"^\s*([a-z_]+)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$")
PAY_COLUMNS = ["hours", "base_pay", "bonus_paid", "hourly_pay", "wage_bonus"]


@dataclass(frozen=True)
class Rule:
    column: str
    op: str
    value: object
    action: str
    reason: str = ""
    amount: float = 0.0

    def fires(self, row: dict) -> bool:
        value = row.get(self.column)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        try:
            return bool(OPS[self.op](value, self.value))
        except TypeError:
            return bool(OPS[self.op](str(value), str(self.value)))

    def why(self, row: dict) -> str:
        if self.reason:
            try:
                return self.reason.format(**{k: _plain(v) for k, v in row.items()})
            except (KeyError, IndexError, ValueError) as exc:
                raise UserError(f"rule reason {self.reason!r} names {exc}, not a column of the review table; "
                                f"use one of {', '.join(row)}") from None
        return f"{self.column} {_plain(row.get(self.column))} {self.op} {_plain(self.value)}"

    @property
    def when(self) -> str:
        return f"{self.column} {self.op} {self.value}"


def _plain(value):
    if isinstance(value, float):
        return f"{value:.3g}"
    return value


def parse_rule(spec: dict, where: str, columns: list[str]) -> Rule:
    """One rule from its dict (``when``, ``action``, optional ``reason``, ``amount``)."""
    if not isinstance(spec, dict) or "when" not in spec or "action" not in spec:
        raise UserError(f"{where}: a rule needs 'when' (e.g. \"gold_accuracy < 0.5\") and 'action' "
                        f"({', '.join(ACTIONS)})")
    match = _WHEN.match(str(spec["when"]))
    if not match:
        raise UserError(f"{where}: 'when' must be COLUMN OP VALUE with OP one of {' '.join(OPS)}, got "
                        f"{spec['when']!r}")
    column, op, text = match.groups()
    if column not in columns:
        raise UserError(f"{where}: {column!r} is not a column of the review table; use one of {', '.join(columns)}")
    action = str(spec["action"])
    if action not in ACTIONS:
        raise UserError(f"{where}: action {action!r} is not one of {', '.join(ACTIONS)}")
    try:
        value = float(text)
    except ValueError:
        value = {"true": True, "false": False}.get(text.lower(), text)
    amount = spec.get("amount", 0.0)
    if action == "bonus" and not (isinstance(amount, (int, float)) and amount > 0):
        raise UserError(f"{where}: a bonus rule needs 'amount', a positive number (in the provider's currency)")
    return Rule(column, op, value, action, str(spec.get("reason") or ""), float(amount or 0.0))


@dataclass
class Policy:
    """What the researcher set: the rules, the wage to bring everyone to, the block qualification."""

    rules: list[Rule] = field(default_factory=list)
    min_hourly_wage: float | None = None
    block_qualification: str | None = None

    @classmethod
    def read(cls, path: str | Path | None, columns: list[str], **overrides) -> "Policy":
        """The policy in ``path`` (YAML or JSON: a list of rules, or ``{"rules": [...], "min_hourly_wage":
        ..., "block_qualification": ...}``), with ``overrides`` (not None) on top."""
        spec: dict = {}
        if path is not None:
            import yaml  # JSON is YAML too

            from parlai_acute.jsonl import read_text

            try:
                loaded = yaml.safe_load(read_text(path, "rules file", "pass a YAML or JSON file of review rules"))
            except yaml.YAMLError as exc:
                raise UserError(f"{path}: not YAML or JSON ({str(exc).splitlines()[0]}); fix the rules file") from None
            spec = {"rules": loaded} if isinstance(loaded, list) else (loaded or {})
            if not isinstance(spec, dict):
                raise UserError(f"{path}: expected a list of rules or a mapping with 'rules'")
            unknown = sorted(set(spec) - {"rules", "min_hourly_wage", "block_qualification"})
            if unknown:
                raise UserError(f"{path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                                f"known: rules, min_hourly_wage, block_qualification")
        spec.update({k: v for k, v in overrides.items() if v is not None})
        rules = [parse_rule(r, f"{path or 'rules'}: rule {i + 1}", columns)
                 for i, r in enumerate(spec.get("rules") or [])]
        wage = spec.get("min_hourly_wage")
        if wage is not None and not (isinstance(wage, (int, float)) and wage >= 0):
            raise UserError(f"min_hourly_wage must be a number of 0 or more, got {wage!r}", param="min_hourly_wage")
        return cls(rules, None if wage is None else float(wage), spec.get("block_qualification"))


def pay(table: pd.DataFrame, units: pd.DataFrame, decisions: dict[str, str], min_hourly_wage: float | None,
        bonus_paid: dict[str, float] | None = None) -> pd.DataFrame:
    """``table`` with :data:`PAY_COLUMNS`: hours from the units' stored times, base pay of the units
    that are (or will be) paid -- all but rejected work --, bonuses already paid, the effective hourly
    pay, and the bonus that brings the worker to ``min_hourly_wage`` (none for rejected work)."""
    bonus_paid = bonus_paid or {}
    out = table.copy()
    seconds = out["seconds_worked"]
    out["hours"] = seconds / 3600.0
    unit_pay = pd.to_numeric(units["pay"], errors="coerce").fillna(0.0).groupby(units["worker"].astype(str)).sum()
    out["base_pay"] = [0.0 if decisions.get(w) == "reject" else float(unit_pay.get(w, 0.0)) for w in out["worker"]]
    out["bonus_paid"] = [round(float(bonus_paid.get(w, 0.0)), 2) for w in out["worker"]]
    earned = out["base_pay"] + out["bonus_paid"]
    out["hourly_pay"] = (earned / out["hours"]).where(out["hours"] > 0)
    if min_hourly_wage is None:
        out["wage_bonus"] = 0.0
    else:
        short = (min_hourly_wage * out["hours"] - earned).clip(lower=0).fillna(0.0)
        # cents, rounded up: the worker reaches the wage, never a cent short
        out["wage_bonus"] = [0.0 if decisions.get(w) == "reject" else math.ceil(round(s * 100, 6)) / 100
                             for w, s in zip(out["worker"], short)]
    return out


def propose(table: pd.DataFrame, policy: Policy) -> list[dict]:
    """The actions the policy proposes, one dict per worker: ``decision`` (approve / soft_reject /
    reject) with ``reasons``, ``block``, ``bonuses`` [(amount, reason)], and ``evidence``: the
    worker's values of every column a fired rule read (what the worker could be shown)."""
    proposals = []
    for row in table.to_dict(orient="records"):
        decision, reasons, block, bonuses, evidence = "approve", [], [], [], {}
        for rule in policy.rules:
            if not rule.fires(row):
                continue
            evidence[rule.column] = row.get(rule.column)
            why = f"{rule.why(row)} ({rule.when})"
            if rule.action in DECISIONS:
                if DECISIONS.index(rule.action) > DECISIONS.index(decision):
                    decision = rule.action
                if rule.action != "approve":
                    reasons.append(why)
            elif rule.action == "block":
                block.append(why)
            else:
                bonuses.append((rule.amount, why))
        wage_bonus = row.get("wage_bonus") or 0.0
        if wage_bonus > 0 and decision != "reject":
            evidence.update(hours=row.get("hours"), base_pay=row.get("base_pay"), bonus_paid=row.get("bonus_paid"))
            bonuses.append((wage_bonus, f"brings pay to {policy.min_hourly_wage:g} per hour for "
                                        f"{row['hours'] * 60:.1f} minutes of work"))
        proposals.append({"worker": row["worker"], "decision": decision, "reasons": reasons, "block": block,
                          "bonuses": bonuses, "evidence": evidence})
    return proposals
