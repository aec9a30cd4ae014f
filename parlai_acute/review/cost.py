"""What a study will cost and take, before launch, from a pilot's stored times; and what a run cost.

A grant pays for people's time, so a plan starts from time: seconds of work per judgment (from a
pilot), times the judgments the power analysis asks for, at the hourly pay the researcher sets,
plus the crowd provider's fee (a share of what workers are paid: MTurk charges 20% and 20% more
for HITs of ten or more assignments; Prolific its own share). The power commands print
:func:`plan_lines` under their sample sizes; ``review`` prints :func:`run_cost_lines` for a run.

Time per judgment is a mean, not a median: cost adds up every judgment's time. Its interval is a
bootstrap over the pilot's workers (scipy), because one worker's judgments share their pace; a
pilot of one worker gives no interval, and says so.

Pure functions over tidy tables; no Mephisto.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError

#: per protocol: where a pilot stores a judgment's time, in words (said beside the figure)
SOURCES = {
    "acute": "duration (seconds from the comparison shown to its judgment sent) of real comparisons",
    "per-turn": "seconds from one judged turn to the next within a dialogue (writing the message, waiting for "
                "the replies, judging them); a dialogue's first turn: waiting plus judging",
}


@dataclass(frozen=True)
class PilotTime:
    """Seconds of work per judgment in a pilot: the mean, its 95% interval (None: no interval, ``why``)."""

    seconds: float
    low: float | None
    high: float | None
    judgments: int
    workers: int
    source: str
    why: str = ""


def acute_judgment_seconds(judgments: pd.DataFrame) -> pd.DataFrame:
    """(worker, seconds) of each real ACUTE comparison with a stored duration."""
    real = judgments[~judgments["is_onboarding"].astype(bool)]
    seconds = pd.to_numeric(real["duration"], errors="coerce")
    keep = seconds.notna() & (seconds > 0)
    return pd.DataFrame({"worker": real["worker"][keep].astype(str), "seconds": seconds[keep].astype(float)})


def per_turn_judgment_seconds(turns: pd.DataFrame) -> pd.DataFrame:
    """(worker, seconds) of each judged turn: the time since the dialogue's previous judged turn (the
    message, the wait and the judgment), or for a dialogue's first turn the wait plus the judgment."""
    head = (turns.assign(latency=pd.to_numeric(turns["latency_seconds"], errors="coerce"))
            .groupby(["dialogue", "turn"], sort=True)
            .agg(worker=("worker", "first"), timestamp=("timestamp", "first"),
                 decision=("decision_seconds", "first"), wait=("latency", "max"))
            .reset_index())
    since = head.groupby("dialogue")["timestamp"].diff()
    first = head["decision"] + head["wait"].fillna(0.0)
    seconds = since.where(since.notna(), first)
    keep = seconds.notna() & (seconds > 0)
    return pd.DataFrame({"worker": head["worker"][keep].astype(str), "seconds": seconds[keep].astype(float)})


def pilot_time(rows: pd.DataFrame, source: str, *, seed: int = 0, resamples: int = 2000) -> PilotTime:
    """Mean seconds per judgment of ``rows`` (worker, seconds), with a 95% bootstrap over workers."""
    if rows.empty:
        raise UserError(f"the pilot has no judgment with a stored time ({source}); pass seconds_per_judgment "
                        f"instead", param="seconds_per_judgment")
    per_worker = rows.groupby("worker")["seconds"].agg(["sum", "size"])
    mean = float(per_worker["sum"].sum() / per_worker["size"].sum())
    n_workers = len(per_worker)
    if n_workers < 2:
        return PilotTime(mean, None, None, len(rows), n_workers, source, "one worker: no spread between workers")
    from scipy.stats import bootstrap

    sums, sizes = per_worker["sum"].to_numpy(), per_worker["size"].to_numpy()
    res = bootstrap((np.arange(n_workers),), lambda i, axis=-1: sums[i].sum(axis=axis) / sizes[i].sum(axis=axis),
                    n_resamples=resamples, method="percentile", random_state=np.random.default_rng(seed),
                    vectorized=True)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return PilotTime(mean, None, None, len(rows), n_workers, source, "the workers' paces do not vary")
    return PilotTime(mean, low, high, len(rows), n_workers, source)


def check_pay(pay_per_hour: float | None, fee: float, seconds_per_judgment: float | None = None) -> None:
    if pay_per_hour is not None and not (math.isfinite(pay_per_hour) and pay_per_hour > 0):
        raise UserError(f"pay_per_hour must be a positive amount, got {pay_per_hour}", param="pay_per_hour")
    if not (math.isfinite(fee) and 0 <= fee < 5):
        raise UserError(f"fee is the provider's share of what workers are paid (0.2 for 20%), got {fee}",
                        param="fee")
    if seconds_per_judgment is not None and not (math.isfinite(seconds_per_judgment) and seconds_per_judgment > 0):
        raise UserError(f"seconds_per_judgment must be a positive number, got {seconds_per_judgment}",
                        param="seconds_per_judgment")


def plan(judgments: int, seconds_per_judgment: float, pay_per_hour: float, fee: float = 0.0,
         workers_at_once: int | None = None) -> dict:
    """What ``judgments`` cost and take: hours of work, workers' pay, the provider's fee, the total, and
    with ``workers_at_once`` the hours from launch to the last judgment if that many work all the time."""
    check_pay(pay_per_hour, fee, seconds_per_judgment)
    hours = judgments * seconds_per_judgment / 3600.0
    pay = hours * pay_per_hour
    out = {"judgments": int(judgments), "seconds_per_judgment": seconds_per_judgment, "hours": hours,
           "pay_per_hour": pay_per_hour, "worker_pay": pay, "fee_rate": fee, "fee": pay * fee,
           "total": pay * (1 + fee), "workers_at_once": workers_at_once,
           "elapsed_hours": hours / workers_at_once if workers_at_once else None}
    return out


def plan_lines(needs: list[tuple[str, int]], time: PilotTime | float, pay_per_hour: float, fee: float = 0.0,
               workers_at_once: int | None = None, unit: str = "judgments") -> tuple[list[str], list[dict]]:
    """The lines a power command prints under its sample sizes, and the rows of its JSON: for each
    ``(label, n)`` in ``needs``, the cost at the pilot's mean time and, with an interval, at its ends."""
    if isinstance(time, PilotTime):
        from parlai_acute.report.tables import interval_text

        head = (f"cost: {interval_text(time.seconds, time.low, time.high, 1, why=time.why)} s per judgment "
                f"(mean of {time.judgments} pilot {unit} by {time.workers} worker{'s' * (time.workers != 1)}: "
                f"{time.source}; 95% bootstrap of workers)")
        seconds, ends = time.seconds, (time.low, time.high) if time.low is not None else None
    else:
        seconds, ends = float(time), None
        head = f"cost: {seconds:g} s per judgment (given)"
    fee_words = f" + provider fee {fee:.0%}" if fee else " (no provider fee given)"
    lines = [head + f"; pay {pay_per_hour:g} per hour{fee_words}"]
    rows = []
    for label, n in needs:
        p = plan(n, seconds, pay_per_hour, fee, workers_at_once)
        row = {"label": label, **p}
        text = (f"  {label}: {n} {unit} = {p['hours']:.1f} hours of work, pay {p['worker_pay']:.2f}"
                + (f" + fee {p['fee']:.2f}" if fee else "") + f" = {p['total']:.2f}")
        if ends is not None:
            low, high = (plan(n, e, pay_per_hour, fee)["total"] for e in ends)
            row.update(total_low=low, total_high=high)
            text += f" [{low:.2f}, {high:.2f}]"
        if workers_at_once:
            text += f"; {p['elapsed_hours']:.1f} hours with {workers_at_once} workers at once"
        rows.append(row)
        lines.append(text)
    return lines, rows


def run_cost_lines(table: pd.DataFrame, proposed_bonus: float, fee: float = 0.0) -> list[str]:
    """What ``review`` adds about a run: effective hourly pay across workers, seconds of work per
    judgment (the figure to plan the next study with), and the run's cost with the provider's fee."""
    check_pay(None, fee)
    lines = []
    hourly = pd.to_numeric(table["hourly_pay"], errors="coerce").dropna()
    if len(hourly):
        lines.append(f"effective hourly pay: median {hourly.median():.2f}, lowest {hourly.min():.2f}, highest "
                     f"{hourly.max():.2f} over {len(hourly)} worker{'s' * (len(hourly) != 1)} with stored times")
    else:
        lines.append("effective hourly pay: undefined (no worker has stored start and end times)")
    worked = pd.to_numeric(table["seconds_worked"], errors="coerce")
    judged = table["judgments"].where(worked.notna(), 0)
    if judged.sum() > 0:
        per = float(worked.sum(skipna=True) / judged.sum())
        lines.append(f"seconds of work per judgment: {per:.1f} (units' time / judgments, instructions and checks "
                     f"included): the figure to plan the next study with")
    base, paid = float(table["base_pay"].sum()), float(table["bonus_paid"].sum())
    pay = base + paid + proposed_bonus
    lines.append(f"cost: workers {pay:.2f} (base {base:.2f}, bonuses paid {paid:.2f}, proposed {proposed_bonus:.2f})"
                 + (f" + provider fee {fee:.0%} {pay * fee:.2f} = {pay * (1 + fee):.2f}" if fee else
                    " (no provider fee given)"))
    return lines
