"""The ACUTE scheduler's adaptive pair selection and stop rule (issue 18), driven by simulated
workers through the scheduler's own API (what the runner calls)."""
import numpy as np
import pytest

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.acute.scheduler import Scheduler

STRENGTH = {"m0": 1.2, "m1": 0.0, "m2": -0.1, "m3": -0.2}


def pairings(per_pair: int = 60) -> list[dict]:
    names = list(STRENGTH)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for k in range(per_pair):
                out.append({"is_onboarding": False, "speakers_to_eval": [a, b], "dialogue_ids": [f"{a}:{k}", f"{b}:{k}"]})
    return out


def run(sched: Scheduler, workers: int, rng, per_worker: int = 10_000) -> list:
    """Workers take units until nothing is left for them; each judges by the Bradley-Terry truth."""
    decisions, served = [], []
    for w in range(workers):
        for _ in range(per_worker):
            slots = sched.assign(f"w{w}")
            if not slots:
                break
            for slot in slots:
                a, b = sched.pairings[slot.index]["speakers_to_eval"]
                p = 1 / (1 + np.exp(-(STRENGTH[a] - STRENGTH[b])))
                served.append((a, b, slot.reason))
                decision = sched.record(f"w{w}", slot, winner=a if rng.random() < p else b)
                if decision:
                    decisions.append(decision)
    return decisions, served


def test_stop_rule_fires_once_when_the_named_comparison_is_decided_and_nothing_more_is_handed_out():
    sched = Scheduler(pairings(), annotations_per_pair=3, comparisons_per_unit=5, max_per_worker=20,
                      use_onboarding=False, seed=0, stop={"alpha": 0.05, "comparisons": ["m1 vs m0"]})
    decisions, served = run(sched, 60, np.random.default_rng(0))
    assert len(decisions) == 1 and decisions[0]["stopped"] == "decided"
    row = decisions[0]["comparisons"]["m1 vs m0"]  # m1's win rate over m0, as analyze names it
    assert row["decided"] == "below" and row["upper"] < 0.5 and "confidence sequences" in decisions[0]["method"]
    # stopped early; the unit in hand when it fired is finished, nothing new is handed out
    assert decisions[0]["judgments"] <= len(served) < decisions[0]["judgments"] + 5 < 3 * len(pairings())
    assert sched.remaining() == 0 and sched.complete() and sched.assign("late") == []


def test_budget_stops_the_run():
    sched = Scheduler(pairings(), comparisons_per_unit=5, max_per_worker=10, use_onboarding=False,
                      stop={"budget": 37})
    decisions, served = run(sched, 20, np.random.default_rng(1))
    assert decisions[0]["stopped"] == "budget" and decisions[0]["judgments"] == 37
    assert 37 <= len(served) <= 37 + 4  # a unit already handed out may finish


def test_adaptive_selection_serves_the_uncertain_pairs_and_says_why():
    rng = np.random.default_rng(2)
    balanced = Scheduler(pairings(), comparisons_per_unit=5, max_per_worker=10, use_onboarding=False, seed=0)
    adaptive = Scheduler(pairings(), comparisons_per_unit=5, max_per_worker=10, use_onboarding=False, seed=0,
                         selection="adaptive")
    _, b = run(balanced, 20, rng)
    _, a = run(adaptive, 20, rng)
    clear = lambda served: np.mean([s[0] == "m0" for s in served[100:]])  # noqa: E731  pairs with the clear winner
    assert clear(a) < clear(b) - 0.1  # after a start, m0's (settled) pairs are served less
    assert all(s[2].startswith("adaptive: expected ranking-uncertainty reduction share") for s in a)
    assert all(s[2] == "" for s in b)


def test_history_continues_the_stop_rule_and_bad_names_are_refused():
    history = [{"worker": f"w{i % 30}", "pair_id": f"x{i}", "is_onboarding": False, "models": ["m0", "m1"],
                "winner": "m0" if i % 10 else "m1", "timestamp": float(i)} for i in range(300)]
    sched = Scheduler(pairings(), use_onboarding=False, history=history, stop={"alpha": 0.05,
                                                                                "comparisons": ["m0:m1"]})
    assert sched.stopped() and sched.decision["stopped"] == "decided" and sched.remaining() == 0
    with pytest.raises(UserError, match="not 'model vs model'"):
        Scheduler(pairings(2), stop={"alpha": 0.05, "comparisons": ["m0 vs nobody"]})


def test_budget_counts_comparisons_handed_out_and_not_judged_yet():
    """As in the item and per-turn tasks: with stop_budget=7 and units of 5, a second worker gets
    only the 2 the first one's unit leaves, and nothing once the budget is spent."""
    sched = Scheduler(pairings(), comparisons_per_unit=5, max_per_worker=10, use_onboarding=False, seed=0,
                      stop={"budget": 7})
    first, second = sched.assign("w1"), sched.assign("w2")
    assert (len(first), len(second)) == (5, 2) and sched.assign("w3") == []
    sched.release("w2", second)  # w2 left: their two come back
    assert len(sched.assign("w3")) == 2
    for slot in first:
        sched.record("w1", slot, winner=sched.pairings[slot.index]["speakers_to_eval"][0])
    assert sched.stop.budget_left() == 2 and sched.assign("w4") == []


def test_live_task_stops_at_its_budget_and_stores_the_decision_with_the_data(tmp_path, launch):
    """The real task over loopback HTTP: with stop_budget=3 and adaptive selection, the third
    judgment settles the stop rule; it is stored in that unit's data, and the run is complete."""
    from acute_task_helpers import make_pairings, write_pairings

    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.acute import store
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_workers_sync

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(8))
    task = launch(pairings, "mephisto.blueprint.onboarding=false", "mephisto.blueprint.comparisons_per_unit=1",
                  "mephisto.blueprint.stop_budget=3", "mephisto.blueprint.pair_selection=adaptive")
    task.wait_ready()
    for worker in ("w1", "w2", "w3"):
        [done] = run_protocol_workers_sync(task.url, [(worker, f"a-{worker}")],
                                           lambda view: ("left", "the left one answers kindly"))
        assert done.finished and len(done.made) == 1, done
    [late] = run_protocol_workers_sync(task.url, [("w4", "a-w4")], lambda view: ("left", "too late for this run"))
    assert not getattr(late, "made", None)  # nothing is handed out after the stop
    assert task.terminate() == 0
    units = store.unit_data_for_task(setup.open_db(task.data_dir), "acute_test")
    decisions = [u["data"]["stop_decision"] for u in units if u["data"].get("stop_decision")]
    assert len(units) == 3 and len(decisions) == 1
    assert decisions[0]["stopped"] == "budget" and decisions[0]["judgments"] == 3
    plans = [u["data"]["plan"] for u in units]
    assert all(slot["reason"].startswith("adaptive") or slot["reason"] == "" for plan in plans for slot in plan)


def test_stop_top_k_fires_once_on_the_true_top_and_adaptive_serves_the_open_boundary():
    """m0 is clearly best: the top 1 is decided once m0 is decided ahead of each other model by
    its own confidence sequence; adaptively the open pairs across the boundary (m0's) are served
    and the others, decided or not needed, hardly at all."""
    kw = dict(annotations_per_pair=3, comparisons_per_unit=5, max_per_worker=5, use_onboarding=False, seed=0,
              stop={"top_k": 1})  # workers are the unit: many workers of a few judgments each
    adaptive = Scheduler(pairings(), selection="adaptive", **kw)
    balanced = Scheduler(pairings(), **kw)
    decisions, served = run(adaptive, 400, np.random.default_rng(3))
    plain, plain_served = run(balanced, 400, np.random.default_rng(3))
    assert len(decisions) == 1 and decisions[0]["stopped"] == "decided" and decisions[0]["top"] == ["m0"]
    assert decisions[0]["alpha"] == 0.05 and decisions[0]["rank_sets"]["m0"] == [1, 1]
    assert "Bonferroni over all pairs (6 pairs)" in decisions[0]["method"]
    assert plain[0]["top"] == ["m0"] and len(served) < 0.6 * len(plain_served)  # 150 vs 335
    later = served[30:]
    assert np.mean(["m0" in s[:2] for s in later]) > 0.8
    open_ = [s for s in later if s[2].startswith("adaptive: open pair across the top-k boundary share")]
    assert len(open_) > 0.7 * len(later) and all("m0" in s[:2] for s in open_)
    assert all(s[2].startswith("adaptive: off the open top-k boundary") for s in later if "m0" not in s[:2])
    assert adaptive.remaining() == 0 and adaptive.assign("late") == []


def test_stop_top_k_options_are_checked():
    from parlai_acute.mephisto_tasks.acute.live import stop_rule

    with pytest.raises(UserError, match="stop_top_k=4 needs 1 <= k < number of models"):
        Scheduler(pairings(2), stop={"top_k": 4})
    assert stop_rule({"stop_top_k": 2})["alpha"] == 0.05
    # a relaunch reads the stored judgments: a top 1 already decided stops the run at once
    history = [{"worker": f"w{i}", "pair_id": f"x{i}", "is_onboarding": False, "models": ["m0", other],
                "winner": "m0", "timestamp": float(i)} for i, other in enumerate(["m1", "m2", "m3"] * 40)]
    again = Scheduler(pairings(), use_onboarding=False, history=history, stop={"top_k": 1})
    assert again.stopped() and again.decision["top"] == ["m0"] and again.remaining() == 0
    with pytest.raises(UserError, match="either mephisto.blueprint.stop_top_k or stop_comparisons"):
        stop_rule({"stop_top_k": 2, "stop_comparisons": "m0 vs m1"})


def test_live_task_stops_when_its_top_k_is_decided_and_stores_the_decision(tmp_path, launch):
    """The real task over loopback HTTP with stop_top_k=1: workers who always prefer model_a (one
    judgment each, so each is its own cluster) decide the top 1; the decision names model_a and is
    stored with the judgment that settled it, and nothing more is handed out."""
    from acute_task_helpers import make_pairings, write_pairings

    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.acute import simulated_workers as sw
    from parlai_acute.mephisto_tasks.acute import store
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_workers_sync

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(30, xss_in=None))
    task = launch(pairings, "mephisto.blueprint.onboarding=false", "mephisto.blueprint.comparisons_per_unit=1",
                  "mephisto.blueprint.stop_top_k=1", "mephisto.blueprint.stop_alpha=0.2",
                  "mephisto.blueprint.pair_selection=adaptive")
    task.wait_ready()
    judged = 0
    for n in range(30):
        [done] = run_protocol_workers_sync(task.url, [(f"w{n}", f"a-w{n}")],
                                           lambda view: (sw.side_with_text(view, "A-line"), "A answers more warmly"))
        if not getattr(done, "made", None):
            break
        judged += len(done.made)
    assert task.terminate() == 0
    units = store.unit_data_for_task(setup.open_db(task.data_dir), "acute_test")
    decisions = [u["data"]["stop_decision"] for u in units if u["data"].get("stop_decision")]
    assert len(decisions) == 1 and decisions[0]["stopped"] == "decided" and decisions[0]["top"] == ["model_a"]
    assert decisions[0]["top_k"] == 1 and decisions[0]["judgments"] == judged == len(units) < 30
