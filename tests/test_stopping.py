"""The stop rule the live tasks share (:mod:`parlai_acute.monitoring.stopping`): pure, over tidy rows.

* A/A: equal models, dialogues with strong dialogue effects, looked at after every dialogue up to
  the budget: the rule's test (the cluster-level betting sequence status uses) fires in at most
  alpha of seeded runs, where the same judgments taken one by one would fire far more often;
* the rule fed tidy turns dialogue by dialogue decides exactly where that vectorised test does;
* budget, names, measures, resent rows, and the task schedulers honouring a fired rule.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.live.item_scheduler import ItemScheduler
from parlai_acute.mephisto_tasks.per_turn.scheduler import Scheduler
from parlai_acute.stats.sequential import bets_for, crossing_index, log_capital
from parlai_acute.monitoring.stopping import StopRule, comparison_key, options

ALPHA = 0.05


def test_equal_models_looked_at_after_every_dialogue_stop_at_most_alpha_of_runs():
    runs, dialogues, turns = 2000, 60, 10  # budget: 600 judged turns
    rng = np.random.default_rng(18)
    taste = rng.normal(0.0, 1.5, (runs, dialogues, 1))  # a dialogue's worker leans one way for all its turns
    y = (rng.random((runs, dialogues, turns)) < 1 / (1 + np.exp(-taste))).astype(float)  # equal models
    fired = crossing_index(log_capital(y.mean(axis=2), 0.5, ALPHA, bets_for([turns])), ALPHA) >= 0
    se = np.sqrt(ALPHA * (1 - ALPHA) / runs)
    assert fired.mean() <= ALPHA + 3 * se
    # the same turns taken as independent judgments (a per-judgment sequence) stop far too often
    naive = crossing_index(log_capital(y[:300].reshape(300, -1), 0.5, ALPHA), ALPHA) >= 0
    assert naive.mean() > 4 * ALPHA


def _turn_rows(picks_a: np.ndarray, start: int) -> list[dict]:
    """Tidy per-turn SOBA rows of dialogues (rows of ``picks_a``: did model a win each turn)."""
    rows = []
    for d, dialogue in enumerate(picks_a):
        for t, won in enumerate(dialogue):
            for model, picked in (("a", bool(won)), ("b", not won)):
                rows.append({"dialogue": f"d{start + d}", "turn": t, "model": model, "picked": picked,
                             "setting": "pm", "protocol": "soba", "model_set": "a|b", "incomplete": False,
                             "timestamp": float(start + d)})
    return rows


@pytest.mark.parametrize("rate,seed", [(0.5, 1), (0.5, 2), (0.85, 3), (0.8, 4), (0.2, 5)])
def test_the_rule_fed_dialogue_by_dialogue_decides_where_the_cluster_sequence_crosses(rate, seed):
    rng = np.random.default_rng(seed)
    shift = rng.normal(0, 0.5, (20, 1))
    y = rng.random((20, 10)) < 1 / (1 + np.exp(-(np.log(rate / (1 - rate)) + shift)))
    crossed = int(crossing_index(log_capital(y.mean(axis=1), 0.5, ALPHA, "plugin"), ALPHA))
    rule = StopRule("per-turn", {"alpha": ALPHA, "comparisons": ["b vs a"]}, [("a", "b")])
    fired_at = None
    for d in range(20):
        if rule.add(_turn_rows(y[d:d + 1], d)):
            fired_at = d
    assert fired_at == (crossed if crossed >= 0 else None)  # looks at every dialogue up to 200 turns
    if fired_at is not None:
        decision = rule.decision
        # named and oriented as the protocol's estimand: "b vs a", b's pick rate minus a's
        assert decision["judgments"] == 10 * (crossed + 1) and decision["settled_by"] == ["b vs a"]
        row = decision["comparisons"]["b vs a"]
        assert row["decided"] == ("below" if rate > 0.5 else "above") and row["clusters"] == crossed + 1
        assert not row["lower"] < 0 < row["upper"]
        assert rule.add(_turn_rows(y[:1], 99)) is None  # fired once: later units change nothing
    if rate != 0.5:
        assert fired_at is not None


def test_budget_names_measures_and_resent_rows():
    rule = StopRule("per-turn", {"budget": 25}, [("a", "b")])
    y = np.ones((3, 10), bool)
    assert rule.add(_turn_rows(y[:1], 0)) is None
    assert rule.add(_turn_rows(y[:1], 0)) is None and rule.judgments() == 10  # a resent dialogue counts once
    assert rule.add(_turn_rows(y[1:2], 1)) is None
    decision = rule.add(_turn_rows(y[2:], 2))
    assert decision["stopped"] == "budget" and decision["judgments"] == 30 and rule.stopped
    with pytest.raises(UserError, match="not 'model vs model' over the pairs this task compares \\(a vs b\\)"):
        StopRule("per-turn", {"alpha": ALPHA, "comparisons": ["a vs c"]}, [("a", "b")])
    with pytest.raises(UserError, match="optionally with \\[sensible\\] or \\[specific\\]"):
        StopRule("ssa", {"alpha": ALPHA, "comparisons": ["a vs b [funny]"]}, [("a", "b")])
    assert comparison_key("y vs x [specific]") == ("x", "y", "specific") and comparison_key("b:a") == ("a", "b", None)
    with pytest.raises(UserError, match="compares none \\(one model\\)"):
        StopRule("ssa", {"alpha": ALPHA}, [])
    ssa = StopRule("ssa", {"alpha": ALPHA, "comparisons": []}, [("a", "b")])
    assert ssa.wanted == [("a", "b", "sensible"), ("a", "b", "specific")]  # unnamed: every pair, both rates


class Blueprint(dict):
    def get(self, key, default=None):
        return super().get(key, default)


def test_options_refuse_bad_values_in_one_line():
    assert options(Blueprint(), judgments="labels") is None
    assert options(Blueprint(stop_alpha=0.1, stop_comparisons="a vs b, c vs d"), judgments="labels") == {
        "alpha": 0.1, "budget": None, "comparisons": ["a vs b", "c vs d"]}
    for bad, message in (({"stop_alpha": 1.5}, "strictly between 0 and 1"), ({"stop_budget": 0}, "at least 1"),
                         ({"stop_comparisons": "a vs b"}, "neither stop_alpha nor stop_budget")):
        with pytest.raises(UserError, match=message):
            options(Blueprint(bad), judgments="labels")


def test_ssa_rates_apart_stop_the_rule_over_conversations():
    rows = [{"item": f"{c}:{t}", "worker": "w", "model": model, "sensible": True, "specific": model == "smol",
             "conversation": c, "timestamp": float(k)}
            for k, (c, model) in enumerate((f"conv{i}", "smol" if i % 2 else "generic") for i in range(60))
            for t in range(3)]
    rule = StopRule("ssa", {"alpha": 0.2, "comparisons": ["smol vs generic [specific]"]}, [("generic", "smol")])
    decision = None
    for k in range(60):
        decision = decision or rule.add(rows[3 * k:3 * k + 3])
    assert decision["stopped"] == "decided" and decision["comparisons"]["smol vs generic [specific]"]["lower"] > 0
    assert decision["judgments"] < len(rows)  # decided before every conversation was in
    assert "disjoint" in decision["method"]


def test_the_task_schedulers_hand_out_nothing_new_once_the_rule_fired_and_finish_what_is_under_way():
    rule = StopRule("per-turn", {"budget": 20}, [("a", "b")])
    sched = Scheduler([("a", "b")], target=50, turns_per_dialogue=10, stop=rule)
    assert sched.start("w1", "d1") == ("a", "b") and sched.start("w2", "d2")
    assert not sched.may_start("w3")  # the two dialogues under way will spend the 20-turn budget
    sched.finish("a|b", "d2", complete=False, turns=0, worker="w2")
    assert sched.may_start("w3") and sched.resume("w2", "a|b", "d2", turns=0)  # cut short: room again
    rule.add(_turn_rows(np.ones((2, 10), bool), 0))
    assert sched.remaining() == 0 and sched.dialogues_needed() == 0 and not sched.may_start("w3")
    assert sched.start("w3", "d3") is None and not sched.complete()  # d1, d2 still under way
    sched.finish("a|b", "d1", complete=False, turns=1, worker="w1")
    assert sched.resume("w1", "a|b", "d1", turns=1)  # a worker coming back to their dialogue may finish it
    for d, w in (("d1", "w1"), ("d2", "w2")):
        sched.finish("a|b", d, complete=True, turns=10, worker=w)
    assert sched.complete()

    items = ItemScheduler([f"i{k}" for k in range(20)], per_item=2, items_per_unit=4,
                          stop=StopRule("ssa", {"budget": 1}, [("a", "b")]))
    [first] = held = items.assign("w1")  # the budget of one label caps the unit at one item
    assert items.assign("w2") == []  # that item under way spends it
    items.stop.add([{"item": "x", "worker": "w0"}])
    assert items.remaining() == 0 and items.assign("w2") == [] and not items.has_work_for("w2")
    assert not items.complete()
    for index in held:
        items.record("w1", index)
    assert items.complete() and first in range(20)


def test_item_budget_counts_answers_of_units_still_running():
    """The rule reads a unit's labels when the unit ends: until then they are work under way, so a
    budget of 10 with 10 items per unit hands a second worker nothing while the first one labels."""
    items = ItemScheduler([f"i{k}" for k in range(30)], per_item=2, items_per_unit=10,
                          stop=StopRule("ssa", {"budget": 10}, [("a", "b")]))
    held = items.assign("A")
    assert len(held) == 10
    for index in held[:6]:
        items.record("A", index)
    assert items.assign("B") == []  # 4 handed out + 6 labelled, not yet read by the rule
    for index in held[6:]:
        items.release("A", index)  # A leaves: 4 come back, the 6 labels are still under way
    assert len(items.assign("B")) == 4
    items.stop.add([{"item": f"i{k}", "worker": "A"} for k in held[:6]])
    items.settled("A", held[:6])  # A's unit ended: its labels count in the rule now, once
    assert items.stop.budget_left() == 4 and items.assign("C") == []  # B holds those 4


def _conversation(k: int, model: str, status: str = "complete", label_mode: str = "ssa") -> dict:
    """A stored single-model dialogue (per-turn setting sm) of three labelled turns: SSA labels
    (label_mode ssa) or appropriate / not (label_mode appropriate)."""
    turns = [{"turn": t, "worker_message": f"hello {t}", "fallback": "picked", "user_reply": "",
              "candidates": [{"model": model, "text": "ok" if model == "generic" else f"hiking {t}", "position": 0,
                              "continued": True, "picked": model == "smol"}],
              "shown_at": k, "decided_at": k + 0.5}
             for t in range(3)]
    if label_mode == "ssa":
        for turn in turns:
            turn["ssa"] = {"sensible": True, "specific": model == "smol"}
    return {"worker_id": k, "worker_name": f"w{k}", "unit_id": str(k), "task_run_id": "1",
            "data": {"dialogue_id": f"d{k}", "model_set": [model], "status": status, "messages": [], "turns": turns,
                     "setting": "sm", "protocol": "sm"}}


def test_interactive_ssa_continues_from_the_stored_conversations_and_appropriateness_has_no_comparison():
    from parlai_acute.mephisto_tasks.per_turn.live import stop_rule
    from parlai_acute.per_turn.design import Design

    design = Design(models=["generic", "smol"], setting="sm", protocol="sm", label_mode="ssa", min_turns=3,
                    max_turns=3)
    units = [_conversation(k, ("generic", "smol")[k % 2]) for k in range(40)]
    history = [{"unit": u} for u in units] + [{"unit": _conversation(99, "generic", "partial")}, {"unit": None}]
    rule = stop_rule(Blueprint(stop_alpha=0.2, stop_comparisons="smol vs generic [specific]"), design, history)
    assert rule.protocol == "ssa" and rule.stopped  # a relaunch finds the run already decided
    assert rule.decision["judgments"] == 120  # complete conversations only: the partial one is not counted
    assert rule.decision["comparisons"]["smol vs generic [specific]"]["clusters"] == 40
    assert stop_rule(Blueprint(stop_alpha=0.2), design, history[:4]).stopped is False
    appropriate = Design(models=["a", "b"], setting="sm", protocol="sm")
    with pytest.raises(UserError, match="appropriateness labels .* use stop_budget, or label_mode=ssa"):
        stop_rule(Blueprint(stop_alpha=0.05), appropriate)
    assert stop_rule(Blueprint(stop_budget=100), appropriate).budget == 100
    # the budget counts appropriateness-labelled turns: 40 complete conversations x 3 turns spend 100
    labelled = [{"unit": _conversation(k, ("a", "b")[k % 2], label_mode="appropriate")} for k in range(40)]
    spent = stop_rule(Blueprint(stop_budget=100), appropriate, labelled)
    assert spent.stopped and spent.decision["stopped"] == "budget" and spent.decision["judgments"] == 120
    assert stop_rule(Blueprint(stop_budget=200), appropriate, labelled).budget_left() == 80


def test_status_says_why_a_run_stopped():
    from parlai_acute.monitoring.stopping import decision_lines

    rule = StopRule("per-turn", {"alpha": ALPHA}, [("a", "b")])
    rule.add(_turn_rows(np.ones((12, 10), bool), 0))
    lines = decision_lines([rule.decision, {"stopped": "budget", "budget": 3, "judgments": 3},
                            {"stopped": "decided", "judgments": 9, "alpha": 0.2, "top_k": 1, "top": ["m"],
                             "method": "rank-sets (3 pairs)"}])
    assert lines[0].startswith(f"STOPPED at {rule.decision['judgments']} judgments: every named comparison decided")
    assert lines[1].startswith("  b vs a: below, estimate -1.000 [") and "over" in lines[1]
    assert lines[2].startswith("STOPPED: the budget of 3 judgments was spent")
    assert lines[3].startswith("STOPPED at 9 judgments: the top 1 (m) decided at alpha 0.2")


def test_top_k_boundary_leaves_out_a_pair_decided_the_other_way():
    """A cycle (a beats b, b beats c, c beats a, each decisively): the top 1 is not decided, and the
    one pair across the boundary (a vs c) is decided against a. A decided pair is final, so adaptive
    selection must not serve it as open."""
    rows, t = [], 0
    for _ in range(60):
        for winner, loser in (("a", "b"), ("b", "c"), ("c", "a")):
            t += 1
            rows.append({"worker": f"w{t}", "model_left": winner, "model_right": loser, "winner": winner,
                         "timestamp": float(t), "is_onboarding": False, "question_key": "q", "pair_id": ""})
    rule = StopRule("acute", {"top_k": 1}, [("a", "b"), ("b", "c"), ("a", "c")])
    assert rule.add(rows) is None
    from parlai_acute.monitoring.status import top_k, top_k_lines

    result = top_k(pd.DataFrame(rows), 1, alpha=0.05, models=rule.models, details=True)
    # named "c vs a" (c's win rate over a), decided for c: "above"
    assert [(u["pair"], u["decided"]) for u in result["questions"][0]["undecided"]] == [("c vs a", "above")]
    assert rule.boundary == set()
    assert "undecided, 0 pair(s) across the boundary open" in "\n".join(top_k_lines(result))
