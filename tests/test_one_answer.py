"""One study, one answer: every surface reports the protocol's estimate, named and oriented alike.

Random tables of each protocol with watched comparisons (ACUTE judgments, per-turn turns, SSA
labels), small and degenerate ones included (one or two clusters, every judgment one way, tied
counts, items with an even number of labels), go through every surface that reports a number:
the analysis (``api.analyze`` and the protocol's headline), the Python API's ``estimates``,
``status`` (what the live stop rule looks at), ``ppi``'s people-only column, and the analysis
of a model judge's table (what ``judge acute --analyze`` and ``acute analyze`` of the judge's
file both run). Each must give the same value for the same named comparison.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from parlai_acute import api
from parlai_acute.errors import UserError
from parlai_acute.judges.ppi import ppi_table
from parlai_acute.per_turn.simulate import simulate_turns
from parlai_acute.per_turn.turns import turns_table
from parlai_acute.registry import protocol
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.monitoring.status import monitor, status
from parlai_acute.monitoring.stopping import StopRule

SEEDS = range(12)


def acute_table(seed: int, tie: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([2, 3, 6, 20, 60]))
    workers = int(rng.choice([1, 2, 3, n]))
    strength = float(rng.choice([0.0, 0.5, 8.0]))  # 8: all one side in practice; 0: tied counts are common
    models = {"alpha": strength, "beta": 0.0, **({"gamma": -0.3} if seed % 3 == 0 else {})}
    return simulate_judgments(models, n, seed=seed, workers=workers, worker_sd=float(rng.choice([0.0, 1.0])),
                              tie=tie, both_bad=0.5 if seed % 2 else 0.0)


def acute_tied_table(seed: int) -> pd.DataFrame:
    """A task that offered a tie (and, for odd seeds, "both are bad"): many ties, or (nu = 50)
    nearly all, so some pairs hold nothing but ties."""
    return acute_table(seed, tie=[1.0, 3.0, 50.0][seed % 3])


def per_turn_table(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    setting, proto = [("pm", "soba"), ("mm", "sata_user"), ("mm", "soba"), ("pm", "sata_random")][seed % 4]
    models = {"m1": float(rng.choice([0.0, 1.0, 6.0])), "m2": 0.0, **({"m3": -0.5} if setting == "mm" else {})}
    return turns_table(simulate_turns(models, setting, proto, dialogues=int(rng.choice([1, 2, 5, 12])),
                                      turns_per_dialogue=int(rng.choice([1, 3, 6])), workers=int(rng.choice([1, 3])),
                                      dialogue_sd=float(rng.choice([0.0, 1.0])), seed=seed, validate=False,
                                      fail_rate=float(rng.choice([0.0, 0.2]))))  # a failed model: turn left out


def ssa_table(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    models = {"good": (float(rng.choice([0.9, 1.0])), 0.7), "bad": (float(rng.choice([0.3, 0.9])), 0.2)}
    labels = int(rng.choice([1, 2, 3, 4]))
    return simulate_labels(models, contexts=int(rng.choice([1, 2, 5, 20])), labels_per_item=labels,
                           workers=labels + int(rng.choice([0, 2, 8])), seed=seed)


TABLES = {"acute": acute_table, "per-turn": per_turn_table, "ssa": ssa_table, "acute with ties": acute_tied_table}
PROTOCOL = {"acute with ties": "acute"}


def headline(name: str, table: pd.DataFrame, **options) -> pd.DataFrame:
    result = api.analyze(name, table, warn=False, bootstrap=50, seed=0, **options)
    return protocol(name).estimands_module().headline(result)


def by_key(frame: pd.DataFrame, value: str = "estimate") -> dict:
    return {(r["group"], r["comparison"], r["measure"]): r[value] for r in frame.to_dict("records")}


def assert_same(found: dict, expected: dict, surface: str) -> None:
    assert found.keys() <= expected.keys(), f"{surface} names comparisons analyze does not: " \
                                            f"{sorted(found.keys() - expected.keys())}"
    for key, value in found.items():
        assert value == pytest.approx(expected[key], abs=1e-12), f"{surface} {key}: {value} != {expected[key]}"


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(TABLES))
def test_every_surface_reports_the_protocols_estimate(name, seed):
    table = TABLES[name](seed)
    name = PROTOCOL.get(name, name)
    try:
        head = headline(name, table)
    except UserError as exc:  # nothing left after the protocol's exclusions: no surface reports a number
        assert "excluded" in str(exc)
        assert api.estimates(name, table).empty
        assert all(r["estimate"] is None for r in status(table, name)["rows"])
        return
    expected = by_key(head)
    assert expected, "the analysis reports no estimate"
    # the Python API's estimates: every estimand of the analysis, the same value
    estimates = by_key(api.estimates(name, table))
    assert estimates.keys() == expected.keys()
    assert_same(estimates, expected, "api.estimates")
    # status (and the stop rule, which reads status): the watched estimands, named and oriented alike
    rows = status(table, name)["rows"]
    watched = {(r["group"] if name != "ssa" else "", r["comparison"], r["measure"]): r["estimate"] for r in rows
               if r["estimate"] is not None}
    assert_same(watched, expected, "status")
    watch = monitor(name).watch
    assert {k for k in watched if k[2] in watch} == {k for k in expected if k[2] in watch}
    # ppi: the people-only column is the analysis' result, interval included
    people = ppi_table(table, table.assign(worker="judge"), name, bootstrap=50)
    assert_same(by_key(people, "people_estimate"), expected, "ppi")
    lows = by_key(head, "low")
    for r in people.to_dict("records"):
        low = lows[(r["group"], r["comparison"], r["measure"])]
        shown = r["people_lower"]
        if shown is not None and shown == shown:  # an interval is shown: the analysis' own
            assert shown == low
        else:  # none: the analysis has none either, or only a degenerate one, and says why in words
            assert not (math.isfinite(low) and r["people_upper"] == r["people_upper"]) and r["people_interval"]
    # no surface shows what cannot be true: intervals inside the range, never zero-width, never NaN
    module = protocol(name).estimands_module()
    for r in head.to_dict("records"):
        estimand = module.ESTIMANDS.get(r["measure"])
        if estimand is None or not math.isfinite(r["low"]):
            continue
        assert estimand.low <= r["low"] < r["high"] <= estimand.high, r


@pytest.mark.parametrize("tie", [0.0, 2.0])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_model_judges_table_is_analysed_alike_on_every_path(seed, tie):
    """`judge acute --analyze` and `acute analyze` of the judge's judgments.csv (with its summary.json)
    both run api.analyze with the judge's summary: no per-worker cap, the same estimates as the
    protocol's estimands of a judge's table."""
    table = acute_table(seed, tie=tie).assign(worker="smollm2-judge")
    judged = headline("acute", table, judges=[{"judge": "smollm2"}])
    assert_same(by_key(api.estimates("acute", table, judge=True)), by_key(judged), "estimates of a judge's table")
    wins = judged[judged["measure"] == "win rate"]
    assert wins["n"].sum() == int((table["model_left"] != table["model_right"]).sum())  # nothing capped


def test_the_stop_rule_decides_on_the_estimate_analyze_reports():
    table = simulate_judgments({"alpha": 8.0, "beta": 0.0}, 80, seed=1, workers=80)
    rule = StopRule("acute", {"alpha": 0.05}, [("alpha", "beta")])
    decision = None
    for row in table.to_dict("records"):
        decision = decision or rule.add([row])
    assert decision and decision["stopped"] == "decided"
    (name, found), = decision["comparisons"].items()
    judged = table.iloc[:decision["judgments"]]
    expected = by_key(headline("acute", judged))
    assert name == "beta vs alpha" and found["estimate"] == pytest.approx(expected[("engaging", name, "win rate")])


def test_a_tie_counts_half_a_win_on_every_surface():
    """Two models, every judgment a tie but one win each way: the win rate is exactly 1/2 and the
    tie rate the share of ties, on the analysis, the estimates and status alike."""
    table = simulate_judgments({"alpha": 0.0, "beta": 0.0}, 40, seed=4, workers=40, tie=3.0, both_bad=0.5)
    ties = (table["outcome"] != "win").sum()
    b_wins = (table["winner"] == "beta").sum()
    expected = (b_wins + ties / 2) / len(table)
    head = by_key(headline("acute", table))
    assert head[("engaging", "beta vs alpha", "win rate")] == pytest.approx(expected)
    assert head[("engaging", "beta vs alpha", "tie rate")] == pytest.approx(ties / len(table))
    assert head[("engaging", "beta vs alpha", "both-bad rate")] == pytest.approx(
        (table["outcome"] == "both_bad").mean())
    (row,) = status(table, "acute")["rows"]
    assert row["estimate"] == pytest.approx(expected)
