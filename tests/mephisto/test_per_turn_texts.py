"""What the per-turn page says, rendered by the server for every setting x protocol x label mode:
counts, protocol words, Meena's questions, the practice check, the role, ConvAI2's anchors, the end."""
from __future__ import annotations

import random
import re

import pytest

from parlai_acute.mephisto_tasks.per_turn import survey, texts
from parlai_acute.per_turn import onboarding
from parlai_acute.per_turn.design import Design

MODELS = ["a", "b", "c", "d"]
CASES = [("pm", p, "appropriate") for p in ("soba", "sata_random", "sata_user")] + \
        [("mm", p, "appropriate") for p in ("soba", "sata_random", "sata_user")] + \
        [("sm", "sm", "appropriate"), ("sm", "sm", "ssa")]


def design(setting, protocol, label_mode, **kw) -> Design:
    return Design(models=MODELS, setting=setting, protocol=protocol, label_mode=label_mode, **kw)


def practice_size(d: Design) -> int:
    item = onboarding.ITEMS[0]
    return len(onboarding.practice_order(item, d.replies_per_turn, random.Random(0)))


@pytest.mark.parametrize("setting,protocol,label_mode", CASES)
def test_every_configuration_says_its_own_count_question_and_protocol(setting, protocol, label_mode):
    d = design(setting, protocol, label_mode, min_turns=2, max_turns=4)
    k = d.replies_per_turn
    assert k == {"pm": 2, "mm": 4, "sm": 1}[setting]
    chat = texts.page_texts(d, status="chatting", k=k, turns_done=0, pending=False)
    numbers = {int(n) for n in re.findall(r"(\d+) (?:possible )?replies", chat["intro"] + chat["waiting"])}
    assert numbers <= {k}, chat["intro"]  # never "3 possible replies" when 2 are shown
    if k == 1:
        assert "a possible reply" in chat["intro"] and "Your partner is writing a reply" in chat["waiting"]
    else:
        assert f"{k} possible replies" in chat["intro"]
    words = (chat["intro"] + " " + chat["question"]).lower()
    if label_mode == "ssa":  # Meena's two questions, never ACUTE's "appropriate"
        assert "make sense" in words and "specific" in words and "appropriate" not in words
    elif protocol == "sm":
        assert "appropriate next turn" in words
    elif protocol == "soba":
        assert "best" in words and "exactly one" in words and "tick" not in words
    else:
        assert "tick every" in words and "none of these" in words
        assert ("write a better reply" in words) == (protocol == "sata_user")
    assert "at least 2 turns (at most 4)" in chat["intro"] and "after turn 4" in chat["intro"]
    one = texts.intro(Design(**{**d.__dict__, "min_turns": 1}), k)
    assert "at least 1 turn (at most 4)" in one  # never "1 turns"

    n = practice_size(d)
    assert n == k  # the practice shows as many replies as every real turn (issue 25)
    practice = texts.page_texts(d, status="onboarding", k=0, turns_done=0, pending=False, practice_replies=n)
    said = (practice["intro"] + " " + practice["question"]).lower()
    assert "practice" in said and "check" in said and "told the outcome" in said
    assert (f"{n} possible replies" in said) if n > 1 else ("one possible reply" in said)
    assert "write a better reply" not in said  # the practice never asks for the worker's own reply
    if label_mode == "ssa":
        assert "make sense" in said and "appropriate" not in said
    passed = texts.page_texts(d, status="chatting", k=k, turns_done=0, pending=False, passed_practice=True)
    assert "passed the practice check" in passed["notice"]
    later = texts.page_texts(d, status="chatting", k=k, turns_done=1, pending=False, passed_practice=True)
    assert later["notice"] == ""


def test_header_finish_and_thanks_follow_the_turns():
    d = design("pm", "soba", "appropriate", min_turns=3, max_turns=3)
    assert texts.progress(d, "chatting", 2, pending=True) == "Turn 3 of 3"
    # issue 25: once turn 1 is judged (1 done, nothing pending) the header is at turn 2, never back at 1
    assert [texts.progress(d, "chatting", n, pending=p) for n, p in ((0, False), (0, True), (1, False), (1, True))] \
        == ["Turn 1 of 3", "Turn 1 of 3", "Turn 2 of 3", "Turn 2 of 3"]
    assert "at least" not in texts.progress(d, "chatting", 2, pending=False)
    done = texts.page_texts(d, status="complete", k=2, turns_done=3, pending=False)
    assert "3 turns" in done["done"] and "last turn" in done["done"] and "Done: 3 turns" == done["progress"]
    d = design("pm", "soba", "appropriate", min_turns=2, max_turns=5)
    assert texts.progress(d, "chatting", 0, pending=False) == "Turn 1 of at most 5 (you may finish after turn 2)"
    assert texts.finish_button(d, 1) == "Finish (possible after 2 turns; 1 done)"
    assert texts.finish_button(d, 2) == "Finish the conversation"
    assert texts.waiting(4, 2) == "Waiting for 4 replies: 2 of 4 ready..."
    assert texts.page_texts(d, status="chatting", k=2, turns_done=0, pending=False,
                            assignment="7 (unit 12)")["assignment"] == "Your assignment: 7 (unit 12)"


def test_the_persona_is_a_role_to_play_and_the_survey_has_convai2_anchors():
    role = texts.role("your persona: I am a nurse.\nyour persona: I love hiking.", "persona")
    assert role.startswith("Play this character") and "I am a nurse.\nI love hiking." in role
    assert "your persona:" not in role
    assert texts.role("", "persona") == ""
    asked = survey.questions("fluency,consistency,humanness")
    assert [q["key"] for q in asked] == ["engagingness", "fluency", "consistency", "humanness"]
    for q in asked:
        assert "your partner" in q["text"] and "this user" not in q["text"]
        assert [p["value"] for p in q["scale"]] == [1, 2, 3, 4] and all(p["label"] for p in q["scale"])
    assert [p["label"] for p in asked[0]["scale"]] == ["Not at all", "A little", "Somewhat", "A lot"]
    assert asked[3]["scale"][0]["label"] == "Definitely a bot"
    with pytest.raises(ValueError, match="enjoy talking to your partner"):
        survey.validate({"scores": {}}, asked, None)


def test_sm_practice_right_answer_is_randomised_and_scored_both_ways():
    item = onboarding.ITEMS[0]
    shown = [onboarding.practice_order(item, 1, random.Random(seed))[0] for seed in range(200)]
    wrong = sum(i == item["wrong"] for i in shown)
    assert 60 < wrong < 140  # about half the practices show a good reply (binomial(200, 0.5): 5 sd)
    good = next(i for i in shown if i != item["wrong"])
    assert onboarding.passed(item, "sm", [0], [good]) and not onboarding.passed(item, "sm", [], [good])
    assert onboarding.passed(item, "sm", [], [item["wrong"]]) and not onboarding.passed(item, "sm", [0], [item["wrong"]])
    for k in (2, 3, 4, 6):  # PM shows two, MM its k: the wrong one always among them
        order = onboarding.practice_order(item, k, random.Random(k))
        assert len(order) == k and item["wrong"] in order and len(set(order)) == len(order)


def test_practice_items_with_fewer_replies_than_a_real_turn_are_refused_at_launch():
    """Issue 25: an MM practice showed 3 replies where every real turn showed 4."""
    from parlai_acute.errors import UserError

    onboarding.check_items(onboarding.ITEMS, 6, "packaged")
    three = [dict(onboarding.ITEMS[0], replies=onboarding.ITEMS[0]["replies"][:3])]
    onboarding.check_items(three, 3, "lab.json")
    with pytest.raises(UserError, match=r"lab.json: practice item 0 has fewer than the 4 replies a real turn shows"):
        onboarding.check_items(three, 4, "lab.json")


def test_the_documented_survey_example_composes_and_unquoted_commas_say_how_to_quote():
    import shlex
    from pathlib import Path

    from parlai_acute.errors import UserError
    from parlai_acute.mephisto_tasks.live import launcher
    from parlai_acute.mephisto_tasks.per_turn.config import CONFIG_DIR, CONFIG_NAME

    root = Path(__file__).parents[2]  # the ConvAI2 page and the per-turn task's README show it
    pages = [root / "docs" / "protocols" / "convai2.md", root / "parlai_acute" / "mephisto_tasks" / "per_turn" / "README.md"]
    examples = [e for page in pages for e in re.findall(r"('mephisto\.blueprint\.survey_questions=[^'\n]*')",
                                                         page.read_text(encoding="utf-8"))]
    assert len(examples) >= 3
    for example in examples:  # as a shell would pass it
        [override] = shlex.split(example)
        cfg = launcher.compose(CONFIG_DIR, CONFIG_NAME, [override])
        named = override.split("=", 1)[1].strip('"').split(",")  # engagingness is always asked first
        assert [q["key"] for q in survey.questions(cfg.mephisto.blueprint.survey_questions)] == ["engagingness", *named]
    with pytest.raises(UserError, match="must be quoted"):
        launcher.compose(CONFIG_DIR, CONFIG_NAME, ["mephisto.blueprint.survey_questions=fluency,humanness"])


@pytest.mark.parametrize("min_turns,done", [(1, 0), (3, 1), (3, 2)])
def test_finishing_too_early_says_the_minimum_and_the_turns_so_far(min_turns, done):
    d = design("pm", "soba", "appropriate", min_turns=min_turns, max_turns=5)
    said = texts.too_early(d, done)
    assert re.findall(r"\d+", said) == [str(min_turns), str(done)]
    assert ("1 turn " in said) == (min_turns == 1) and ("turns" in said) == (min_turns != 1)
    assert texts.finish_button(d, done).startswith("Finish (possible after")  # the button says the same rule
