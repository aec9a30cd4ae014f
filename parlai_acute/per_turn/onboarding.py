"""Onboarding items of the per-turn task: a short context and replies of which one is plainly wrong.

A worker who picks the wrong reply as the best (SOBA), ticks it as acceptable (SATA), or in SM
(one reply, the wrong one or a good one) calls the wrong one appropriate or a good one not,
fails, is told so and gets the block qualification (as in ACUTE-Eval).
Written for this project; a lab can pass its own file (JSON list of the same objects).
"""
from __future__ import annotations

from parlai_acute.errors import UserError
from parlai_acute.jsonl import read_json_list

__all__ = ["ITEMS", "load_items", "check_items", "practice_order", "passed"]

ITEMS = [  # six replies each: the practice shows as many as a real turn, up to six models per set
    {"context": ["Hi! I just got back from a week of hiking in the Alps.", ],
     "replies": ["That sounds amazing! Which part of the Alps did you hike in?",
                 "Welcome back! Was the weather good for hiking?",
                 "Bananas are yellow because the sea is made of glass.",
                 "A whole week! Did you stay in mountain huts along the way?",
                 "Wow, your legs must be tired. What was the best view?",
                 "I have always wanted to go there. Did you go with friends?"],
     "wrong": 2},
    {"context": ["I'm trying to learn to cook. Yesterday I made pasta for the first time."],
     "replies": ["Nice! What sauce did you make with it?",
                 "Purple seven jumps over the quiet Tuesday of my car.",
                 "That's a great start. Cooking gets easier with practice.",
                 "Well done! Did you make the pasta yourself or buy it dried?",
                 "Pasta is a good first dish. What do you want to cook next?",
                 "How did it turn out? Was it too soft or just right?"],
     "wrong": 1},
    {"context": ["My sister is getting married next month and I have to give a speech."],
     "replies": ["The the the the the the the.",
                 "Congratulations to her! Are you nervous about the speech?",
                 "That's exciting. Do you know what you want to say yet?",
                 "How lovely! A funny story about the two of you could be a good start.",
                 "What an honour. How long does the speech have to be?",
                 "Congratulations! Have you met the person she is marrying?"],
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


def check_items(items: list[dict], k: int, where: str) -> None:
    """Every item has at least ``k`` replies, so the practice shows as many as a real turn (a
    practice with fewer replies than the turns that follow teaches the worker a different task)."""
    short = [i for i, item in enumerate(items) if len(item["replies"]) < k]
    if short:
        raise UserError(f"{where}: practice item{'s' * (len(short) > 1)} {', '.join(str(i) for i in short)} "
                        f"{'have' if len(short) > 1 else 'has'} fewer than the {k} replies a real turn shows; give "
                        f"every item at least {k} replies (one plainly wrong) in mephisto.blueprint.onboarding_file, "
                        f"or set mephisto.blueprint.onboarding=false")


def practice_order(item: dict, k: int, rng) -> list[int]:
    """The replies of the practice turn, as many as a real turn shows (:func:`check_items`): the wrong
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
