"""Onboarding items of the per-turn task: a short context and replies of which one is plainly wrong.

A worker who picks the wrong reply as the best (SOBA), ticks it as acceptable (SATA), or in SM
(one reply, the wrong one or a good one) calls the wrong one appropriate or a good one not,
fails, is told so and gets the block qualification (as in ACUTE-Eval).
Written for this project; a lab can pass its own file (JSON list of the same objects).
"""
from __future__ import annotations

from parlai_acute.jsonl import read_json_list

__all__ = ["ITEMS", "load_items", "practice_order", "passed"]

ITEMS = [
    {"context": ["Hi! I just got back from a week of hiking in the Alps.", ],
     "replies": ["That sounds amazing! Which part of the Alps did you hike in?",
                 "Welcome back! Was the weather good for hiking?",
                 "Bananas are yellow because the sea is made of glass."],
     "wrong": 2},
    {"context": ["I'm trying to learn to cook. Yesterday I made pasta for the first time."],
     "replies": ["Nice! What sauce did you make with it?",
                 "Purple seven jumps over the quiet Tuesday of my car.",
                 "That's a great start. Cooking gets easier with practice."],
     "wrong": 1},
    {"context": ["My sister is getting married next month and I have to give a speech."],
     "replies": ["The the the the the the the.",
                 "Congratulations to her! Are you nervous about the speech?",
                 "That's exciting. Do you know what you want to say yet?"],
     "wrong": 0},
]


def load_items(path: str | None) -> list[dict]:
    """The packaged items, or a lab's own JSON list of {"context": [...], "replies": [...], "wrong": i}."""
    return read_json_list(path, "onboarding file", "needs context (list of turns), replies (two or more) and "
                                                   "wrong (index of the plainly wrong reply)", _valid, ITEMS)


def _valid(item) -> bool:
    return (isinstance(item, dict) and isinstance(item.get("context"), list) and isinstance(item.get("replies"), list)
            and len(item["replies"]) >= 2 and isinstance(item.get("wrong"), int)
            and 0 <= item["wrong"] < len(item["replies"]))


def practice_order(item: dict, k: int, rng) -> list[int]:
    """The replies of the practice turn, as many as a real turn shows (at most the item's): the wrong
    one among good ones in random order; with one reply (SM) the wrong one or a good one, each half the time,
    so "not appropriate" is not always the right answer."""
    good = [i for i in range(len(item["replies"])) if i != item["wrong"]]
    if k <= 1:
        return [item["wrong"]] if rng.random() < 0.5 else [rng.choice(good)]
    order = [item["wrong"]] + rng.sample(good, min(k, len(item["replies"])) - 1)
    rng.shuffle(order)
    return order


def passed(item: dict, protocol: str, picked: list[int], order: list[int]) -> bool:
    """Did the worker judge the practice replies right? ``order[position]`` is the reply shown there.

    SM (one reply): called appropriate exactly when it is not the wrong one; otherwise the wrong
    reply must not be chosen (and SOBA picks exactly one)."""
    chosen = {order[p] for p in picked}
    if protocol == "sm":
        return bool(chosen) == (order[0] != item["wrong"])
    return item["wrong"] not in chosen and (protocol != "soba" or len(chosen) == 1)
