"""Issue 25 item 3: a cost and duration plan before launch (time per judgment from a pilot's stored
times x the judgments the power analysis asks for x pay, plus the provider's fee), printed by the
power commands, and a run's effective hourly pay and cost printed by ``review``."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from parlai_acute.acute.judgments import write_judgments
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.errors import UserError
from parlai_acute.review import cost
from parlai_acute.scripts.main import main


def pilot(path, seconds_by_worker: dict[str, float]):
    """A pilot whose workers each take their own fixed time per real comparison; an onboarding
    comparison (slow) and one without a stored time must not count."""
    df = simulate_judgments({"a": 0.3, "b": 0.0}, 120, seed=1, workers=len(seconds_by_worker))
    names = list(seconds_by_worker)
    df["worker"] = [names[i % len(names)] for i in range(len(df))]
    df["duration"] = df["worker"].map(seconds_by_worker)
    df.loc[0, ["is_onboarding", "onboarding_correct", "duration"]] = [True, True, 999.0]
    df.loc[1, "duration"] = None
    write_judgments(path, df)
    return df


def test_pilot_time_is_the_mean_of_real_judgments_with_an_interval_over_workers(tmp_path):
    df = pilot(tmp_path / "pilot.csv", {"w0": 20.0, "w1": 40.0, "w2": 60.0})
    rows = cost.acute_judgment_seconds(df)
    assert len(rows) == 118 and rows["seconds"].max() == 60.0  # onboarding and the missing time left out
    t = cost.pilot_time(rows, "stored durations")
    assert t.seconds == pytest.approx(rows["seconds"].mean()) and t.workers == 3 and t.judgments == 118
    assert 20.0 <= t.low < t.seconds < t.high <= 60.0  # workers' paces differ: the interval says how much
    one = cost.pilot_time(rows[rows["worker"] == "w0"], "stored durations")
    assert (one.seconds, one.low, one.high) == (20.0, None, None) and "one worker" in one.why
    with pytest.raises(UserError, match="no judgment with a stored time"):
        cost.pilot_time(rows.iloc[:0], "stored durations")


def test_per_turn_time_runs_from_one_judged_turn_to_the_next():
    rows = []
    for turn, stamp in enumerate([100.0, 130.0, 170.0]):
        for model, latency in (("a", 2.0), ("b", 5.0)):  # the worker waited for the slower reply
            rows.append({"dialogue": "d1", "turn": turn, "worker": "w", "timestamp": stamp, "decision_seconds": 8.0,
                         "latency_seconds": latency, "model": model})
    seconds = cost.per_turn_judgment_seconds(pd.DataFrame(rows))
    assert seconds["seconds"].tolist() == [13.0, 30.0, 40.0]  # first: wait 5 + judging 8


def test_the_plan_is_time_times_judgments_times_pay_plus_the_fee():
    p = cost.plan(1000, 36.0, 15.0, fee=0.2, workers_at_once=5)
    assert (p["hours"], p["worker_pay"], p["fee"], p["total"], p["elapsed_hours"]) == pytest.approx(
        (10.0, 150.0, 30.0, 180.0, 2.0))
    with pytest.raises(UserError, match="fee is the provider's share"):
        cost.plan(10, 30.0, 15.0, fee=-0.1)
    with pytest.raises(UserError, match="pay_per_hour must be a positive amount"):
        cost.plan(10, 30.0, 0.0)


def test_acute_power_prices_the_judgments_it_asks_for(tmp_path, capsys):
    pilot(tmp_path / "pilot.csv", {"w0": 20.0, "w1": 40.0, "w2": 60.0, "w3": 30.0})
    out = tmp_path / "power.json"
    assert main(["acute", "power", "--delta", "0.1", "--pilot", str(tmp_path / "pilot.csv"), "--pay-per-hour", "12",
                 "--fee", "0.2", "--workers-at-once", "10", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text())
    [row] = result["cost"]["plans"]
    n = next(p["judgments"] for p in result["clustered"]["plans"] if p["icc_from"] in ("estimate", "given"))
    seconds = result["cost"]["seconds_per_judgment"]["seconds"]
    assert row["judgments"] == n and row["total"] == pytest.approx(n * seconds / 3600 * 12 * 1.2)
    assert row["total_low"] < row["total"] < row["total_high"]
    assert "s per judgment (mean of 118 pilot judgments by 4 workers" in text and "provider fee 20%" in text
    assert f"delta 0.100: {n} judgments = " in text and "hours with 10 workers at once" in text
    assert main(["acute", "power", "--delta", "0.1", "--fee", "0.2"]) == 2  # a fee prices nothing without pay
    assert "give --pay-per-hour too" in capsys.readouterr().err


def test_per_turn_power_prices_turns_from_a_given_time(capsys):
    assert main(["per-turn", "power", "--design", "pm-soba", "--delta", "0.1", "--pay-per-hour", "15",
                 "--seconds-per-judgment", "36"]) == 0
    text = capsys.readouterr().out
    n = int(text.split("exact binomial test: ")[1].split(" turns")[0])
    assert f"delta 0.1: {n} turns = {n * 36 / 3600:.1f} hours of work, pay {n * 36 / 3600 * 15:.2f}" in text
    assert "(no provider fee given)" in text
    assert main(["per-turn", "power", "--design", "pm-soba", "--pay-per-hour", "15"]) == 2
    assert "--pilot FILE (its stored times) or --seconds-per-judgment S" in capsys.readouterr().err


def test_review_says_the_effective_hourly_pay_and_what_the_run_cost():
    table = pd.DataFrame({"worker": ["a", "b", "c"], "hourly_pay": [9.0, 15.0, np.nan],
                          "seconds_worked": [1200.0, 2400.0, np.nan], "judgments": [20, 40, 5],
                          "base_pay": [3.0, 10.0, 1.0], "bonus_paid": [0.0, 0.0, 0.0]})
    lines = cost.run_cost_lines(table, proposed_bonus=1.5, fee=0.2)
    assert lines[0] == "effective hourly pay: median 12.00, lowest 9.00, highest 15.00 over 2 workers with stored times"
    assert lines[1].startswith("seconds of work per judgment: 60.0 (units' time / judgments")  # c has no times
    assert lines[2] == ("cost: workers 15.50 (base 14.00, bonuses paid 0.00, proposed 1.50) + provider fee 20% "
                        "3.10 = 18.60")
