"""The per-turn design: which settings are valid, which sets share a dialogue, how a choice continues it."""
import random

import pytest

from parlai_acute.errors import UserError
from parlai_acute.per_turn.design import Design, decide, parse_model_sets


def test_default_sets_follow_the_paper():
    assert Design(["base", "b", "c", "d"], setting="pm", baseline="base").model_sets == [
        ("base", "b"), ("base", "c"), ("base", "d")]
    assert Design(["a", "b", "c"], setting="pm").model_sets == [("a", "b"), ("a", "c"), ("b", "c")]
    assert Design(["a", "b", "c", "d"], setting="mm", protocol="sata_user").model_sets == [("a", "b", "c", "d")]
    assert Design(["a", "b"], setting="sm", protocol="sm").model_sets == [("a",), ("b",)]
    assert parse_model_sets("a+b, a+c") == [("a", "b"), ("a", "c")]


@pytest.mark.parametrize("kwargs, message", [
    (dict(models=["a"], setting="pm"), "only 1 model"),
    (dict(models=["a", "b"], setting="pm", model_sets=[("a",)]), "needs two models per set, got 1"),
    (dict(models=["a", "b"], setting="mm"), "three or more"),
    (dict(models=["a", "b"], min_turns=12, max_turns=10), "min_turns 12 and max_turns 10"),
    (dict(models=["a", "b"], model_sets=[("a", "z")]), "unknown model 'z'"),
    (dict(models=["a", "b"], setting="sm", protocol="soba"), "cannot use protocol soba"),
    (dict(models=["a", "b"], protocol="sm"), "cannot use protocol sm"),
    (dict(models=["a", "b"], baseline="z"), "baseline 'z'"),
    (dict(models=["a", "b"], opening="banana"), "opening 'banana'"),
])
def test_bad_designs_are_one_line_errors(kwargs, message):
    with pytest.raises(UserError, match=message) as err:
        Design(**kwargs)
    assert "\n" not in str(err.value)


def test_soba_needs_exactly_one_and_it_continues():
    rng = random.Random(0)
    assert decide("soba", 2, [1], "", rng).continued == 1
    for bad in ([], [0, 1]):
        with pytest.raises(ValueError, match="exactly one"):
            decide("soba", 2, bad, "", rng)
    with pytest.raises(ValueError, match="does not match"):
        decide("soba", 2, [2], "", rng)
    with pytest.raises(ValueError, match="buttons"):
        decide("soba", 2, ["1"], "", rng)


def test_sata_random_one_several_none():
    one = decide("sata_random", 4, [2], "", random.Random(0))
    assert (one.picked, one.continued, one.fallback) == ([2], 2, "picked")
    several = {decide("sata_random", 4, [1, 3], "", random.Random(s)).continued for s in range(40)}
    assert several == {1, 3}  # one of the picked, at random
    assert decide("sata_random", 4, [1, 3], "", random.Random(0)).fallback == "random_picked"
    none = {decide("sata_random", 4, [], "", random.Random(s), none=True).continued for s in range(60)}
    assert none == {0, 1, 2, 3}  # one of all, at random
    with pytest.raises(ValueError, match="none of these"):
        decide("sata_random", 4, [], "", random.Random(0))  # an empty choice must be said explicitly
    with pytest.raises(ValueError, match="also"):
        decide("sata_random", 4, [1], "", random.Random(0), none=True)


def test_sata_user_continues_with_the_workers_reply():
    d = decide("sata_user", 3, [], "  I would say this.  ", random.Random(0), none=True)
    assert (d.continued, d.fallback, d.user_reply) == (None, "user", "I would say this.")
    with pytest.raises(ValueError, match="write a better reply"):
        decide("sata_user", 3, [], "", random.Random(0), none=True)
    assert decide("sata_user", 3, [0, 2], "", random.Random(0)).fallback == "random_picked"


def test_sm_continues_either_way():
    yes = decide("sm", 1, [0], "", random.Random(0))
    no = decide("sm", 1, [], "", random.Random(0), none=True)
    assert (yes.picked, yes.continued) == ([0], 0) and (no.picked, no.continued) == ([], 0)
    with pytest.raises(ValueError, match="appropriate"):
        decide("sm", 1, [], "", random.Random(0))


def test_no_candidate_at_all():
    d = decide("soba", 0, [], "", random.Random(0))
    assert (d.continued, d.fallback) == (None, "none")


def test_label_mode_and_survey_need_their_settings():
    assert Design(["a"], setting="sm", protocol="sm", label_mode="ssa").label_mode == "ssa"
    with pytest.raises(UserError, match="label_mode ssa"):
        Design(["a", "b"], setting="pm", label_mode="ssa")
    with pytest.raises(UserError, match="opening persona"):
        Design(["a", "b"], survey="convai2")
    assert Design(["a", "b"], survey="convai2", opening="persona").survey == "convai2"


def test_persona_detection_decoy_is_neither_side_from_a_labs_own_set():
    from parlai_acute.mephisto_tasks.per_turn import survey

    pool = [["I am a nurse."], ["I race bikes."], ["I grow tomatoes."]]
    for n in range(20):
        shown = survey.persona_choice(pool[1], pool[0], seed=n, dialogue_id=f"d{n}", pool=pool)
        assert sorted(shown["options"]) == ["I grow tomatoes.", "I race bikes."]
        assert shown["options"][shown["correct"]] == "I race bikes."
    assert {survey.persona_choice(pool[1], pool[0], seed=n, dialogue_id="d", pool=pool)["correct"]
            for n in range(20)} == {0, 1}  # the model's persona is not always shown first
