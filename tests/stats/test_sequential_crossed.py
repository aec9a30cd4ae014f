"""Status and the stop rule when two facets are sampled (issue 23): ACUTE conversations reused
across the judgments of many workers.

* A/A, peeking after every 4 workers: the one-facet betting sequence over workers (conversations
  held fixed) declares a difference between equal models far above alpha, the rule status and the
  live stop rule now use (the two-facet asymptotic sequence, and the one-facet one) at most alpha
  + 2 points; the worker-conversation graph is one component (no coarser independent unit exists);
* a real difference is still found, no more often than the fixed analysis of the full study;
* where each conversation serves one judgment, status' numbers are the one-facet sequence's;
* status and the stop rule name the design and the procedure, and decide on the same sequence;
* the top k (status --top-k, the stop rule's stop_top_k) decides its pairs the same way.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.monitoring.status import status, status_lines, streams, top_k, top_k_lines
from parlai_acute.monitoring.stopping import StopRule
from parlai_acute.stats.crossed_designs import peeking, simulate
from parlai_acute.stats.inference import min_clusters
from parlai_acute.stats.sequential import crossed_decide, crossed_looks, crossed_sequence, decide

ALPHA = 0.05
UNCAPPED = {"per_worker_cap": ("none", "launched without a cap")}  # a worker judges the pair many times


def test_peeking_at_equal_models_with_reused_conversations_stops_at_most_alpha_plus_two_points():
    # a pool of 20 conversation pairs (quality sd 1), 80 workers x 10 judgments (taste sd 0.5)
    rates = peeking(20, 80, 0.0, 600, seed=7, every=4, alpha=ALPHA)
    assert rates["stop rule"]["rate"] <= ALPHA + 0.02
    assert rates["two-facet"]["rate"] <= ALPHA + 0.02
    assert rates["one-facet"]["rate"] > 3 * ALPHA  # a verdict about these 20 conversations, not the models
    assert rates["fixed once"]["rate"] <= ALPHA + 0.02  # the analysis' own test, once
    assert rates["components"] == 1  # every worker meets every conversation: no coarser unit to bet over


def test_a_real_difference_is_found_but_not_more_often_than_the_fixed_analysis():
    rates = peeking(20, 80, 1.5, 200, seed=8, every=4, alpha=ALPHA)
    assert rates["stop rule"]["rate"] > 0.5
    assert rates["stop rule"]["rate"] <= rates["fixed once"]["rate"] + 0.05
    assert rates["stop rule"]["median_workers"] < 80  # stopped early, before the study's end


def _pool_table(seed: int, effect: float = 0.0, size: int = 20, workers: int = 60) -> pd.DataFrame:
    s = simulate("acute-pool", size, effect, 1, seed=seed, workers=workers)
    d = s["d"]
    return pd.DataFrame({"model_left": "a", "model_right": "b", "winner": np.where(d > 0, "b", "a"),
                         "loser": np.where(d > 0, "a", "b"), "worker": "w" + pd.Series(s["worker"]).astype(str),
                         "dialogue_left": s["conv_a"].astype(str), "dialogue_right": s["conv_b"].astype(str),
                         "pair_id": s["conv_a"].astype(str), "question_key": "engaging",
                         "timestamp": np.arange(len(d), dtype=float), "reason": "clearer answers"})


def test_status_decides_reused_conversations_on_the_two_facet_sequence_and_names_it():
    table = _pool_table(3)
    result = status(table, "acute", settings={"max_per_worker": "none"})
    (row,) = result["rows"]
    assert result["design"]["facets"] == ["worker", "conversation"] and result["design"]["two_facet"] == 1
    assert row["procedure"].startswith("two-facet asymptotic confidence sequence")
    assert row["one_facet"]["procedure"] == "betting confidence sequence over workers"
    assert row["estimate"] == pytest.approx((table["winner"] == "b").mean())  # the protocol's estimate
    # the same numbers as the sequence computed directly from the stream
    (s,) = streams(table, "acute", {"max_per_worker": "none"})
    c = s["crossed"]
    need = min_clusters(ALPHA)  # as analyze: the fewest levels a sign-flip test could decide with
    looks = crossed_looks(len(s["stream"]), need)
    direct = crossed_decide(crossed_sequence(c["values"], c["rank"], c["facets"], looks, ALPHA, need), 0.5)
    assert (row["lower"], row["upper"]) == pytest.approx((direct["lower"][0], direct["upper"][0]))
    assert 0 <= row["lower"] < row["upper"] <= 1
    text = "\n".join(status_lines(result))
    assert "treat workers and conversations both as sampled" in text and "these conversations fixed" in text
    assert "hold the conversations fixed" not in text and "treat the conversations as fixed" not in text


def test_where_each_conversation_serves_one_judgment_status_keeps_the_one_facet_numbers():
    table = simulate_judgments({"a": 0.5, "b": 0.0}, 400, seed=2, workers=400)
    table["dialogue_left"] = [f"l{i}" for i in range(len(table))]  # a fresh conversation on each side, every time
    table["dialogue_right"] = [f"r{i}" for i in range(len(table))]
    result = status(table, "acute")
    (row,) = result["rows"]
    (s,) = streams(table, "acute")
    assert "crossed" not in s and "one_facet" not in row and result["design"]["two_facet"] == 0
    expected = decide(s["stream"], ALPHA, 0.5)
    assert {k: row[k] for k in ("lower", "upper", "decided", "decided_at_judgments")} == {
        k: expected[k] for k in ("lower", "upper", "decided", "decided_at_judgments")}
    assert result["design"]["procedure"] == ["betting confidence sequence over workers"]


def test_the_stop_rule_does_not_stop_for_these_conversations_alone():
    # equal models, 20 reused conversation pairs: find a run where the one-facet sequence is decided
    for seed in range(40):
        table = _pool_table(seed)
        (row,) = status(table, "acute", settings={"max_per_worker": "none"})["rows"]
        if row["one_facet"]["decided"] != "undecided":
            break
    else:
        pytest.fail("no seeded A/A run where the one-facet sequence decides")
    assert row["decided"] == "undecided" and seed < 40
    rule = StopRule("acute", {"alpha": ALPHA}, [("a", "b")], table_attrs=UNCAPPED)
    fired = [rule.add(part.to_dict("records")) for _, part in table.groupby("worker", sort=False)]
    assert not any(fired) and rule.decision is None and rule.judgments() == len(table)


def test_the_stop_rule_names_the_two_facet_procedure_when_it_fires():
    table = _pool_table(1, effect=3.0, size=30, workers=80)
    rule = StopRule("acute", {"alpha": ALPHA}, [("a", "b")], table_attrs=UNCAPPED)
    decision = None
    for _, part in table.groupby("worker", sort=False):
        decision = decision or rule.add(part.to_dict("records"))
    assert decision and decision["stopped"] == "decided"
    assert "two-facet asymptotic confidence sequence" in decision["method"]
    assert decision["comparisons"]["b vs a"]["procedure"].startswith("two-facet")


def test_the_command_records_the_design_and_procedure_in_results_and_run_json(tmp_path, capsys):
    import json

    from parlai_acute.scripts.main import main

    path = tmp_path / "judgments.csv"
    _pool_table(3).assign(is_onboarding=False).to_csv(path, index=False)
    out = tmp_path / "status"
    assert main(["status", "--table", str(path), "--max-per-worker", "none", "--min-reason-chars", "0",
                 "-o", str(out), "--no-report"]) == 0
    assert "two-facet" in capsys.readouterr().out
    results, run = (json.loads((out / name).read_text()) for name in ("results.json", "run.json"))
    assert results["design"]["facets"] == ["worker", "conversation"]
    assert run["config"]["design"]["procedure"][0].startswith("two-facet asymptotic confidence sequence")
    rows = pd.read_csv(out / "status.csv")
    assert {"one_facet_lower", "one_facet_upper", "one_facet_decided", "procedure"} <= set(rows.columns)


def test_the_live_acute_scheduler_hands_the_rule_each_judgments_conversations():
    from parlai_acute.mephisto_tasks.acute.scheduler import Scheduler

    # 8 conversations per model serve 160 pairings: the rule must see them reused
    pairings = [{"is_onboarding": False, "speakers_to_eval": ["a", "b"],
                 "dialogue_ids": [f"a:{k % 8}", f"b:{k % 8}"]} for k in range(160)]
    sched = Scheduler(pairings, comparisons_per_unit=4, max_per_worker=4, use_onboarding=False, seed=0,
                      stop={"alpha": ALPHA})
    rng = np.random.default_rng(0)
    decision = None
    for w in range(40):
        for slot in sched.assign(f"w{w}"):
            decision = decision or sched.record(f"w{w}", slot, winner="b" if rng.random() < 0.9 else "a")
    assert {"dialogue_left", "dialogue_right"} <= set(sched.judgments[0])
    assert decision and decision["comparisons"]["b vs a"]["procedure"].startswith("two-facet")


def _one_facet_only_aa() -> pd.DataFrame:
    """A seeded A/A pool where the sequence over workers alone decides (a verdict about these conversations)."""
    for seed in range(40):
        table = _pool_table(seed)
        (row,) = status(table, "acute", settings={"max_per_worker": "none"})["rows"]
        if row["one_facet"]["decided"] != "undecided":
            return table
    pytest.fail("no seeded A/A run where the one-facet sequence decides")


def test_top_k_is_not_decided_for_these_conversations_alone():
    # before: top_k decided every pair on the sequence over workers, so equal models got a "decided" top 1
    table = _one_facet_only_aa()
    result = top_k(table, 1, alpha=ALPHA, settings={"max_per_worker": "none"})
    assert not result["decided"] and result["design"] == {"facets": ["worker", "conversation"], "two_facet": 1}
    (pair,) = result["questions"][0]["undecided"]
    (row,) = status(table, "acute", settings={"max_per_worker": "none"})["rows"]
    assert pair["one_facet"]["decided"] != "undecided" and pair["decided"] == "undecided"
    assert (pair["lower"], pair["upper"]) == pytest.approx((row["lower"], row["upper"]))  # status' interval
    text = "\n".join(top_k_lines(result))
    assert "treat workers and conversations both as sampled" in text and "for these conversations only" in text
    rule = StopRule("acute", {"top_k": 1, "alpha": ALPHA}, [("a", "b")], table_attrs=UNCAPPED)
    fired = [rule.add(part.to_dict("records")) for _, part in table.groupby("worker", sort=False)]
    assert not any(fired) and rule.decision is None


def test_top_k_is_decided_with_reused_conversations_when_the_models_differ():
    table = _pool_table(1, effect=3.0, size=30, workers=80)
    result = top_k(table, 1, alpha=ALPHA, settings={"max_per_worker": "none"})
    assert result["decided"] and result["questions"][0]["top"] == ["b"]
    assert "two-facet asymptotic confidence sequence" in result["method"]


def test_the_top_k_stop_rule_keeps_the_judgments_the_launched_cap_keeps():
    # workers judge the pair many times and the task was launched without a cap: the rule reads every
    # judgment, as status does (before: the top-k rule applied the default cap of one per pair and fired never)
    table = _pool_table(1, effect=1.0, size=30, workers=40)
    assert top_k(table, 1, alpha=ALPHA, settings={"max_per_worker": "none"}, details=False)["decided"]
    assert not top_k(table, 1, alpha=ALPHA, details=False)["decided"]  # the default cap: one per worker
    rule = StopRule("acute", {"top_k": 1, "alpha": ALPHA}, [("a", "b")], table_attrs=UNCAPPED)
    fired = [rule.add(part.to_dict("records")) for _, part in table.groupby("worker", sort=False)]
    assert any(fired) and rule.decision["top"] == ["b"]
