"""The comparison scheduler: onboarding first, cap, never the same pair twice, relaunch history."""
import threading

from acute_task_helpers import make_pairings

from parlai_acute.mephisto_tasks.acute.scheduler import Scheduler, model_pairs, pair_id


def regular_ids(sched, slots):
    return [sched.ids[s.index] for s in slots if not s.is_onboarding]


def test_new_worker_starts_with_onboarding_until_passed():
    sched = Scheduler(make_pairings(6), comparisons_per_unit=2, max_per_worker=6)
    first = sched.assign("w")
    assert first[0].is_onboarding and not any(s.is_onboarding for s in first[1:])
    sched.record("w", first[0], onboarding_correct=True)
    for slot in first[1:]:
        sched.record("w", slot)
    second = sched.assign("w")
    assert second and not any(s.is_onboarding for s in second)


def test_cap_and_no_repeats_across_units():
    sched = Scheduler(make_pairings(8), annotations_per_pair=3, comparisons_per_unit=3, max_per_worker=5,
                      use_onboarding=False)
    seen = []
    while True:
        slots = sched.assign("w")
        if not slots:
            break
        for slot in slots:
            sched.record("w", slot)
        seen += regular_ids(sched, slots)
    assert len(seen) == 5 and len(set(seen)) == 5
    assert not sched.has_work_for("w") and sched.has_work_for("other")


def test_default_cap_is_number_of_model_pairs():
    lines = make_pairings(4)
    lines[2]["speakers_to_eval"] = ["model_a", "model_c"]
    assert model_pairs(lines) == 2
    assert Scheduler(lines).max_per_worker == 2


def test_release_gives_unjudged_pairs_back():
    sched = Scheduler(make_pairings(3), comparisons_per_unit=3, max_per_worker=3, use_onboarding=False)
    slots = sched.assign("w")
    assert sched.remaining() == 0 and not sched.complete()  # all handed out, none judged
    sched.record("w", slots[0])
    sched.release("w", slots[1:])
    assert sched.remaining() == 2
    again = sched.assign("v")
    assert sorted(regular_ids(sched, again)) == sorted(regular_ids(sched, slots[1:]))


def test_history_of_earlier_runs_is_not_reassigned():
    lines = make_pairings(4)
    done = [pair_id(lines[1], 1), pair_id(lines[2], 2)]
    history = [{"worker": "w", "pair_id": "onboarding-0", "is_onboarding": True, "onboarding_correct": True}]
    history += [{"worker": "w", "pair_id": p, "is_onboarding": False} for p in done]
    sched = Scheduler(lines, comparisons_per_unit=4, max_per_worker=4, history=history)
    assert sched.remaining() == 2
    slots = sched.assign("w")
    assert not any(s.is_onboarding for s in slots)  # passed before
    assert not set(regular_ids(sched, slots)) & set(done)


def test_concurrent_assignment_never_over_assigns():
    sched = Scheduler(make_pairings(20), annotations_per_pair=2, comparisons_per_unit=3, max_per_worker=20,
                      use_onboarding=False)
    got = {}

    def worker(name):
        got[name] = []
        while (slots := sched.assign(name)):
            got[name] += regular_ids(sched, slots)
            for slot in slots:
                sched.record(name, slot)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    counts = {}
    for ids in got.values():
        assert len(ids) == len(set(ids))
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
    assert set(counts.values()) == {2} and len(counts) == 20
    assert sched.complete()


def test_a_worker_who_comes_back_gets_their_unjudged_comparisons_if_still_needed():
    sched = Scheduler(make_pairings(4), comparisons_per_unit=3, max_per_worker=4)
    slots = sched.assign("w")
    sched.record("w", slots[0], onboarding_correct=True)
    sched.record("w", slots[1])
    rest = slots[2:]
    sched.release("w", rest)  # the unit was cut short (relaunch, a page that went silent)
    taken = sched.assign("other")  # meanwhile another worker takes one of the two
    assert sched.reclaim("w", rest) == [s for s in rest if s.index not in {t.index for t in taken}]
    assert sched.reclaim("w", rest) == []  # nothing is reserved twice
    assert not sched.complete()
