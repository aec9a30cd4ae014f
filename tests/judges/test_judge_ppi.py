"""Prediction-powered results with the embedded SmolLM2 judge (a real, weak judge that picks a
position): the result stays the people's, and says the judge added nothing."""
import json

import numpy as np
import pandas as pd

from judge_fixtures import LINES, three_model_pairings, write_pairings
from parlai_acute.scripts.main import main

PER_PAIR, ASKED = 12, 10  # comparisons of one model pair; of them, answered by people


def people_rows(pairings, seed=0):
    """Three people per asked comparison, each judging it alone; each picks the better (longer) model 80% of the time,
    and sees the sides in a random order."""
    rng = np.random.default_rng(seed)
    rank = {name: i for i, name in enumerate(LINES)}
    rows = []
    for n, p in enumerate(pairings):
        if int(p["dialogue_ids"][0].split(":")[1]) >= ASKED:
            continue
        a, b = p["speakers_to_eval"]
        better, worse = (a, b) if rank[a] < rank[b] else (b, a)
        # a worker judges a model pair once (the protocol's cap, as `acute analyze` applies it)
        for w in (f"w{n}-1", f"w{n}-2", f"w{n}-3"):
            swap = rng.random() < 0.5
            rows.append({"worker": w, "model_left": b if swap else a, "model_right": a if swap else b,
                         "dialogue_left": p["dialogue_ids"][1 if swap else 0],
                         "dialogue_right": p["dialogue_ids"][0 if swap else 1],
                         "winner": better if rng.random() < 0.8 else worse, "reason": "more to say",
                         "question_key": "engaging", "is_onboarding": False, "timestamp": float(n)})
    return pd.DataFrame(rows)


def test_embedded_smollm2_judge_adds_nothing_and_the_result_stays_the_peoples(tmp_path, embedded_judge, capsys):
    pairings = [p for p in three_model_pairings(per_pair=PER_PAIR) if p["speakers_to_eval"] == ["chatty", "plain"]]
    path = write_pairings(tmp_path / "p.jsonl", pairings)
    assert main(["judge", "acute", "--pairings", path, "--no-onboarding", "--answer-from", "logprobs",
                 "--orders", "none", "--concurrency", "2", "--cache", str(tmp_path / "c.sqlite"),
                 "--outdir", str(tmp_path / "judge")]) == 0
    people_rows(pairings).to_csv(tmp_path / "people.csv", index=False)
    capsys.readouterr()
    assert main(["ppi", "--people", str(tmp_path / "people.csv"), "--judge-table",
                 str(tmp_path / "judge" / "judgments.csv"), "--json", str(tmp_path / "ppi.json")]) == 0
    out = capsys.readouterr().out
    saved = json.loads((tmp_path / "ppi.json").read_text())
    rows = saved["rows"]
    assert len(rows) == 1 and "the judge added nothing" in out.splitlines()[1]
    assert len(saved["ranking"]) == 2 and all(r["lambda"] == 0 and r["strength"] == r["people_strength"]
                                              and "added nothing" in r["note"] for r in saved["ranking"])
    for row in rows:
        assert row["people_items"] == ASKED and row["items_with_both"] == ASKED and row["judge_only_items"] == 2
        assert row["lambda"] == 0 and row["estimate"] == row["people_estimate"]
        assert row["lower"] == row["people_lower"] and row["effective_n"] == row["items_with_both"]
    print(out)
