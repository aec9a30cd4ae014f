"""The scheduler shared by the SSA labelling and multi-reference tasks: who gets which items."""
from __future__ import annotations

import threading

from parlai_acute.mephisto_tasks.live.item_scheduler import ItemScheduler


def ids(n: int) -> list[str]:
    return [f"i{k}" for k in range(n)]


def test_no_worker_gets_an_item_twice_and_every_item_gets_its_answers():
    s = ItemScheduler(ids(6), per_item=3, items_per_unit=4, seed=1)
    got: dict[str, list[int]] = {}
    for round_ in range(10):
        for worker in ("a", "b", "c", "d"):
            plan = s.assign(worker)
            got.setdefault(worker, []).extend(plan)
            for i in plan:
                s.record(worker, i)
    assert s.complete() and s.remaining() == 0
    for worker, items in got.items():
        assert len(items) == len(set(items)), worker  # never twice
    counts = [sum(i == k for items in got.values() for i in items) for k in range(6)]
    assert counts == [3] * 6


def test_items_in_progress_count_so_concurrent_workers_spread():
    s = ItemScheduler(ids(6), per_item=1, items_per_unit=2, seed=0)
    plans = [s.assign(w) for w in ("a", "b", "c")]  # nobody has finished anything yet
    assert sorted(i for p in plans for i in p) == list(range(6))
    assert s.assign("d") == [] and not s.has_work_for("d") and not s.complete()


def test_a_worker_who_leaves_gives_items_back_and_a_started_item_is_not_given_to_them_again():
    s = ItemScheduler(ids(2), per_item=1, items_per_unit=2, seed=0)
    first, second = s.assign("a")
    s.release("a", first)
    s.release("a", second, started=True)  # a partial answer is stored: "a" keeps it as seen
    assert s.remaining() == 2
    assert s.assign("a") == [first]
    assert s.assign("b") == [second]


def test_history_continues_a_run_and_onboarding_is_remembered():
    history = [{"worker": "a", "item": "i0", "done": True}, {"worker": "a", "item": "i1", "done": False},
               {"worker": "a", "passed_onboarding": True}, {"worker": "b", "passed_onboarding": False}]
    s = ItemScheduler(ids(3), per_item=2, items_per_unit=5, use_onboarding=True, history=history)
    assert s.remaining() == 5  # i0 has one of its two answers; a partial answer does not count
    assert sorted(s.assign("a")) == [2]  # i0 done and i1 started by "a" before
    assert not s.needs_onboarding("a") and s.needs_onboarding("b")


def test_cap_per_worker_and_thread_safety():
    s = ItemScheduler(ids(40), per_item=2, items_per_unit=10, max_per_worker=15, seed=3)
    results: dict[str, list[int]] = {}

    def work(worker):
        mine = results.setdefault(worker, [])
        while plan := s.assign(worker):
            mine.extend(plan)
            for i in plan:
                s.record(worker, i)

    threads = [threading.Thread(target=work, args=(f"w{k}",)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(len(v) <= 15 and len(v) == len(set(v)) for v in results.values())
    assert sum(len(v) for v in results.values()) == 80 and s.complete()


def test_a_worker_who_comes_back_gets_their_unfinished_items_if_still_needed():
    s = ItemScheduler([f"i{k}" for k in range(3)], per_item=1, items_per_unit=2)
    mine = s.assign("a")
    for i in mine:
        s.release("a", i, started=i == mine[0])  # the unit was cut short; the first item was started
    assert s.reclaim("a", mine) == mine  # the started item too: it is the one on the worker's page
    assert s.reclaim("a", mine) == [] and s.remaining() == 1
