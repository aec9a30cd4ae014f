"""The review table's evidence, protocol-neutral (parlai_acute.review) and each protocol's rows."""
from __future__ import annotations

import pytest

from parlai_acute.registry import PROTOCOLS, resolve
from parlai_acute.review.evidence import judgments_needed, worker_table
from parlai_acute.review.messages import check_messages
from parlai_acute.review.rules import Policy
from parlai_acute.review.plan import TABLE_COLUMNS
from parlai_acute.errors import UserError


def test_the_position_test_says_how_many_judgments_it_needs():
    assert judgments_needed(0.5, 0.05) == 6   # 2 * 0.5**6 = 0.031 < 0.05; five all-left judgments cannot fire
    assert judgments_needed(1 / 3, 0.05) == 3
    assert judgments_needed(0.5, 0.01) == 8


def test_message_checks_follow_parlais_acceptability_checker():
    flags = check_messages(["hi", "I LOVE HIKING A LOT", "Hello there!", "i love hiking a lot", "A fine answer here."])
    assert flags[0] == {"too_short", "greetings_only"}
    assert flags[1] == {"all_caps"}
    assert flags[2] == {"too_short"}  # a greeting, then something else
    assert flags[3] == {"exact_repeat"}  # the same words as message 2, up to case and punctuation
    assert flags[4] == set()


def row(worker, item, answer, **more):
    return {"worker": worker, "unit_id": "1", "item": item, "question": "q", "answer": answer, **more}


def test_agreement_is_leave_one_out_and_straight_lining_needs_enough_answers():
    rows = [row("a", i, "x") for i in range(10)] + [row("b", i, "x" if i < 5 else "y") for i in range(10)] \
        + [row("c", 0, "y")]
    for r in rows:
        r["straight"] = True
    t = worker_table(rows, [], straight_min=10).set_index("worker")
    # item 0: a and b said x, c said y -> a agrees with 1 of 2 others; items 1-9: only a and b
    assert t.loc["a", "agreement_items"] == 10
    assert t.loc["a", "agreement"] == pytest.approx((0.5 + 4 * 1 + 5 * 0) / 10)
    assert t.loc["c", "agreement"] == 0.0
    assert t.loc["a", "straight_share"] == 1.0 and t.loc["b", "straight_share"] == 0.5
    assert t.loc["c", "straight_answers"] == 1 and "straight-lining needs 10 answers, has 1" in t.loc["c", "notes"]


def test_rules_name_real_columns_and_actions():
    with pytest.raises(UserError, match="'gold_acc' is not a column of the review table"):
        Policy.read(None, TABLE_COLUMNS, rules=[{"when": "gold_acc < 1", "action": "reject"}])
    with pytest.raises(UserError, match="action 'ban' is not one of"):
        Policy.read(None, TABLE_COLUMNS, rules=[{"when": "agreement < 0.2", "action": "ban"}])
    with pytest.raises(UserError, match="a bonus rule needs 'amount'"):
        Policy.read(None, TABLE_COLUMNS, rules=[{"when": "agreement > 0.8", "action": "bonus"}])


def test_every_protocol_with_a_live_task_names_its_review():
    reviewed = {name for name, p in PROTOCOLS.items() if p.review_units}
    assert reviewed == {"acute", "per-turn", "ssa", "multiref"}  # convai2 is the per-turn task's survey
    for p in PROTOCOLS.values():
        if p.review_units:
            assert callable(resolve(p.review_units)) and callable(resolve(f"{p.package}.{p.review}:evidence"))


def unit(data, worker="w1", unit_id="5"):
    return {"worker_name": worker, "worker_id": "1", "unit_id": unit_id, "task_run_id": "1", "data": data}


def test_per_turn_evidence_practice_picks_messages_and_partial_dialogues():
    from parlai_acute.per_turn.review import evidence

    def cand(model, position, picked=False):
        return {"model": model, "position": position, "picked": picked}

    data = {"dialogue_id": "d1", "protocol": "soba", "status": "partial",
            "onboarding": {"item": 0, "picked": [1], "passed": False},
            "turns": [{"turn": 0, "worker_message": "HELLO", "shown_at": 10.0, "decided_at": 14.0,
                       "candidates": [cand("a", 0, True), cand("b", 1)]},
                      {"turn": 1, "worker_message": "what do you like to cook?", "shown_at": 20.0,
                       "decided_at": 21.5, "candidates": [cand("a", 1), cand("b", 0, True)]}]}
    rows = evidence([unit(data)])
    t = worker_table(rows, []).set_index("worker")
    assert (t.loc["w1", "gold_items"], t.loc["w1", "gold_correct"]) == (1, 0)
    assert t.loc["w1", "judgments"] == 2 and t.loc["w1", "first_position_share"] == 1.0
    assert t.loc["w1", "seconds_per_judgment"] == pytest.approx(2.75)
    assert t.loc["w1", "too_short"] == 1 and t.loc["w1", "all_caps"] == 1
    assert "partial dialogue" in t.loc["w1", "excluded_because"]


def test_ssa_and_multiref_evidence():
    from parlai_acute.multiref.review import evidence as multiref
    from parlai_acute.ssa.review import evidence as ssa

    results = [{"item_id": "gold", "onboarding": True, "gold_passed": True, "sensible": False, "specific": False},
               {"item_id": "i1", "onboarding": False, "sensible": True, "specific": False, "shown_at": 1.0,
                "answered_at": 4.0}]
    t = worker_table(ssa([unit({"results": results})]), []).set_index("worker")
    assert (t.loc["w1", "gold_correct"], t.loc["w1", "judgments"], t.loc["w1", "seconds_per_judgment"]) == (1, 1, 3.0)
    sets = {"results": [{"item_id": "c1", "replies": [{"text": "ok", "server_seconds": 5.0},
                                                      {"text": "Sure, let us meet at noon.", "server_seconds": 9.0}]}],
            "current": {"item_id": "c2", "replies": [{"text": "ok", "server_seconds": 2.0}]}}
    t = worker_table(multiref([unit(sets)]), []).set_index("worker")
    assert t.loc["w1", "messages"] == 3 and t.loc["w1", "exact_repeat"] == 1 and t.loc["w1", "too_short"] == 2
    assert "set cut short" in t.loc["w1", "excluded_because"]
