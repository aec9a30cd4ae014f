"""The strict answer format, position orders and their resolution: pure functions."""
import pytest

from parlai_acute.judges.orders import orders, resolve, to_options
from parlai_acute.judges.parse import parse_reply


@pytest.mark.parametrize("text,value,reason", [
    ("Answer: 2\nReason: asks questions", "2", "asks questions"),
    ("**Answer:** 1\n**Reason:** more specific.", "1", "more specific."),
    ("  answer: 1.\n\nreason: it is longer\nand kinder", "1", "it is longer and kinder"),
])
def test_accepts_only_the_format(text, value, reason):
    parsed = parse_reply(text, "one", ["1", "2"], reason_required=True)
    assert parsed.value == value and parsed.reason == reason


@pytest.mark.parametrize("text", [
    "The answer is 1.", "Answer: 1 or 2\nReason: both", "Answer: 3\nReason: third", "Answer: 1",
    "Answer: 1\nReason: ok", "Speaker 1\nReason: better", "Answer: 1\nI think so because", "", "Answer: one\nReason: x y z",
])
def test_rejects_everything_else(text):
    assert parse_reply(text, "one", ["1", "2"], reason_required=True) is None


def test_any_and_yes_no():
    assert parse_reply("Answer: 3, 1", "any", ["1", "2", "3"], False).value == ("1", "3")
    assert parse_reply("Answer: none", "any", ["1", "2"], False).value == ()
    assert parse_reply("Answer: 1, 1", "any", ["1", "2"], False) is None
    assert parse_reply("Answer: 1, 4", "any", ["1", "2"], False) is None
    assert parse_reply("Answer: Yes", "yes_no", ["yes", "no"], False).value is True
    assert parse_reply("Answer: maybe", "yes_no", ["yes", "no"], False) is None


def test_orders_cover_every_position():
    assert orders(2) == [(0, 1), (1, 0)]
    rot = orders(3)
    assert len(rot) == 3 and all(sorted(o[p] for o in rot) == [0, 1, 2] for p in range(3))
    assert len(orders(3, "all")) == 6 and len(orders(3, "none")) == 1
    firsts = {orders(2, "none", offset=i)[0] for i in range(20)}
    assert firsts == {(0, 1), (1, 0)}  # one random order per item, both occur
    assert orders(2, "none", offset=3, seed=1) == orders(2, "none", offset=3, seed=1)
    assert orders(2, offset=1) == [(1, 0), (0, 1)]
    assert orders(1) == [(0,)]


def test_resolution():
    # the same option in both orders: consistent
    assert resolve([1, 1], [1, 0]).status == "consistent"
    # the first position both times: the verdict followed the position
    r = resolve([0, 1], [0, 0])
    assert r.status == "inconsistent" and r.follows_position and r.value is None
    r = resolve([0, 2, 1], [0, 1, 1])
    assert r.status == "inconsistent" and not r.follows_position
    assert resolve([0, None], [0, None]).status == "missing"
    assert to_options(0, (1, 0), "one") == 1 and to_options((0, 1), (2, 0, 1), "any") == (0, 2)
