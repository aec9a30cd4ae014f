"""Model-set assignment: dialogues in progress count, cut-short dialogues give their place back."""
from parlai_acute.mephisto_tasks.per_turn.scheduler import Scheduler

SETS = [("base", "b"), ("base", "c")]


def test_concurrent_workers_spread_over_sets():
    s = Scheduler(SETS, target=1, seed=3)
    first = s.start("w1", "d1")
    second = s.start("w2", "d2")  # w1's dialogue is still running: the other set needs one more
    assert {first, second} == set(SETS)
    assert s.start("w3", "d3") is None and not s.may_start("w3")


def test_cut_short_dialogue_frees_its_place_and_finished_ones_complete_the_run():
    s = Scheduler(SETS, target=1, seed=0)
    a = s.start("w1", "d1")
    b = s.start("w2", "d2")
    s.finish("|".join(sorted(a)), "d1", complete=False, turns=3, worker="w1")
    assert s.may_start("w3") and s.start("w3", "d3") == a
    s.finish("|".join(sorted(b)), "d2", complete=True, turns=10, worker="w2")
    assert not s.complete()
    s.finish("|".join(sorted(a)), "d3", complete=True, turns=10, worker="w3")
    assert s.complete() and s.remaining() == 0


def test_cap_per_worker_and_history_of_earlier_runs():
    history = [{"worker": "w1", "set": "b|base", "status": "complete", "turns": 10, "passed_onboarding": True}]
    s = Scheduler(SETS, target=2, max_dialogues_per_worker=2, history=history)
    assert s.remaining() == 3 and not s.needs_onboarding("w1") and s.needs_onboarding("w2")
    assert s.start("w1", "d1") == ("base", "c")  # the neediest set
    assert s.start("w1", "d2") is None  # w1 is at the cap of 2 (one from the earlier run)


def test_turn_targets_count_stored_turns_of_partial_dialogues():
    s = Scheduler([("a", "b")], target=25, unit="turns", turns_per_dialogue=10)
    assert s.dialogues_needed() == 3
    s.start("w1", "d1")
    s.finish("a|b", "d1", complete=False, turns=7, worker="w1")
    assert s.remaining() == 18 and s.dialogues_needed() == 2


def test_a_dialogue_continued_after_a_relaunch_is_credited_once():
    cut = [{"worker": "w1", "set": "b|base", "status": "partial", "turns": 3}]
    for unit, done in (("dialogues", 1), ("turns", 10)):
        s = Scheduler(SETS[:1], target=done, unit=unit, turns_per_dialogue=10, history=cut)
        assert s.resume("w1", "b|base", "d1", turns=3) and s.resume("w1", "b|base", "d1", turns=3)  # once
        assert not s.complete() and s.remaining() == 0  # in progress again: nobody else gets the place
        s.finish("b|base", "d1", complete=True, turns=10, worker="w1")
        assert s.complete() and s.sets["b|base"].done == done
