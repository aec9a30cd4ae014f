"""Small tables written here for the judge tests: per-turn turns, ACUTE pairings and human judgments."""
from __future__ import annotations

import json
from pathlib import Path

from parlai_acute.acute.pairings import read_onboarding

SCRIPTED = "tests.judges.scripted_judge:ScriptedJudgeAgent"


def read_jsonl(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def summary_of(outdir):
    return json.loads((Path(outdir) / "summary.json").read_text())

# (worker message, good reply, bad reply) per turn; the good one is sensible and specific
TURNS = [
    [("Hi! What do you do for fun?", "I love hiking in the hills near my town. Do you like walking?", "ok"),
     ("Yes, I walk my dog every morning.", "What kind of dog is it? Mine is a noisy beagle.", "I don't know")],
    [("I just baked bread for the first time.", "Nice! Was it sourdough or a quick yeast loaf?", "ok"),
     ("Sourdough, it took two days.", "Two days! Did the crust come out crunchy?", "I don't know")],
]


def turns_rows(protocol: str = "soba", worker: str = "w1", good_first: tuple = (True, False)) -> list:
    """Rows of the per-turn table: the worker picked the good reply, which continued the dialogue."""
    rows = []
    for d, dialogue in enumerate(TURNS):
        for t, (message, good, bad) in enumerate(dialogue):
            first_good = good_first[(d + t) % len(good_first)]
            for model, text, is_good in (("smart", good, True), ("generic", bad, False)):
                rows.append({"run_id": "r1", "unit_id": str(d), "dialogue": f"d{d}", "worker": worker, "turn": t,
                             "setting": "pm", "protocol": protocol, "model_set": "generic|smart", "model": model,
                             "position": 0 if is_good == first_good else 1, "picked": is_good,
                             "continued": is_good, "fallback": "picked", "incomplete": False, "error": "",
                             "text": text, "worker_message": message, "user_reply": "", "justification": "",
                             "decision_seconds": 3.0, "latency_seconds": 0.5, "timestamp": 1.7e9,
                             "dialogue_status": "complete"})
    return rows


def write_turns(path, rows) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return str(path)


def comparison_pairings(n: int | None = None) -> list:
    """The package's gold pairs turned into ordinary comparisons (the better side is known)."""
    out = []
    for pairing in read_onboarding()[:n]:
        pairing = dict(pairing, is_onboarding=False)
        pairing.pop("correct_answer")
        out.append(pairing)
    return out


def write_pairings(path, pairings) -> str:
    with open(path, "w", encoding="utf-8") as fh:
        for p in pairings:
            fh.write(json.dumps(p) + "\n")
    return str(path)


LINES = {  # model -> what its speaker says at each turn (longer = better for the scripted "longest" judge)
    "chatty": ["I spent the weekend repairing an old bicycle I found at a flea market, it rides beautifully now.",
               "The gears were rusted solid, so I soaked them in vinegar overnight and scrubbed them clean."],
    "plain": ["I fixed a bike this weekend.", "The gears were rusty but fine now."],
    "terse": ["ok", "fine"],
}
PARTNER = ["Hi! What did you do this weekend?", "Oh nice, was it hard?"]


def dialogue(model: str, index: int) -> dict:
    turns = []
    for partner, mine in zip(PARTNER, LINES[model]):
        turns += [{"id": "other_speaker", "text": partner}, {"id": model, "text": mine}]
    return {"id": f"{model}:{index}", "speakers": ["other_speaker", model], "dialogue": turns, "context": []}


def three_model_pairings(per_pair: int = 2) -> list:
    """per_pair comparisons of each pair of the three models (chatty > plain > terse by length)."""
    out = []
    names = list(LINES)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for k in range(per_pair):
                da, db = dialogue(a, k), dialogue(b, k)
                out.append({"is_onboarding": False, "speakers_to_eval": [a, b], "dialogue_ids": [da["id"], db["id"]],
                            "dialogue_dicts": [da, db]})
    return out


def human_judgments(pairings: list, workers=("w1", "w2", "w3"), contrarian: str = "w3") -> list:
    """Every worker judges every comparison; the better (longer) model wins, except that the
    ``contrarian`` picks the worse one on the first comparison of each model pair."""
    rank = {name: i for i, name in enumerate(LINES)}  # lower index = better
    rows = []
    for n, p in enumerate(pairings):
        a, b = p["speakers_to_eval"]
        better = a if rank[a] < rank[b] else b
        for w in workers:
            flip = w == contrarian and p["dialogue_ids"][0].endswith(":0")
            winner = (b if better == a else a) if flip else better
            rows.append({"worker": w, "model_left": a, "model_right": b, "dialogue_left": p["dialogue_ids"][0],
                         "dialogue_right": p["dialogue_ids"][1], "winner": winner, "reason": "more to say",
                         "question_key": "engaging", "is_onboarding": False, "timestamp": float(n)})
    return rows
