"""`acute analyze --style-control`: Arena battles with their conversations in, raw and controlled
rankings side by side out (tables, report, run.json), and the replies from a pairings file."""
import json

import numpy as np
import pandas as pd
import pytest

from parlai_acute.acute.simulate import arena_battles
from parlai_acute.errors import UserError


def long_winded(n=900, seed=0):
    """Arena battles whose votes follow reply length only: 'verbose' writes three times as much as
    'terse' and 'plain'; the conversations are in the file (Hugging Face dump layout)."""
    battles = arena_battles({"verbose": 0.0, "terse": 0.0, "plain": 0.0}, n, seed=seed, voters=60, tie=0.3)
    rng = np.random.default_rng(seed)
    typical = {"verbose": 90, "terse": 30, "plain": 30}
    for b in battles:
        la, lb = (int(rng.poisson(typical[b[m]] * rng.lognormal(0, 0.5))) + 1 for m in ("model_a", "model_b"))
        if b["winner"] in ("model_a", "model_b"):
            p = 1 / (1 + np.exp(-4 * (la - lb) / (la + lb + 1)))
            b["winner"] = "model_a" if rng.random() < p else "model_b"
        for side, length in (("a", la), ("b", lb)):
            b[f"conversation_{side}"] = [{"role": "user", "content": "Tell me about tea."},
                                         {"role": "assistant", "content": " ".join(["word"] * length)}]
    return battles


def test_import_then_analyze_with_style_control(tmp_path, capsys):
    from parlai_acute.scripts.main import main

    (tmp_path / "battles.jsonl").write_text("".join(json.dumps(b) + "\n" for b in long_winded()))
    assert main(["acute", "import", "--arena", str(tmp_path / "battles.jsonl"), "-o", str(tmp_path / "j.csv"),
                 "--replies", str(tmp_path / "replies.csv")]) == 0
    assert "--style-control --replies" in capsys.readouterr().out
    out = tmp_path / "out"
    assert main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "-o", str(out), "--max-per-worker",
                 "none", "--min-reason-chars", "0", "--bootstrap", "100", "--style-control", "--replies",
                 str(tmp_path / "replies.csv")]) == 0
    printed = capsys.readouterr().out
    assert "style control: logistic Bradley-Terry with style covariates" in printed
    assert "style coefficient tokens" in printed
    ranking = pd.read_csv(out / "ranking_style.csv").set_index("model")
    assert ranking.loc["verbose", "raw_low"] > ranking.loc["terse", "raw_high"]  # raw: length wins
    assert ranking.loc["verbose", "controlled_low"] < 0 < ranking.loc["verbose", "controlled_high"]
    coefficients = pd.read_csv(out / "style_coefficients.csv")
    assert list(coefficients["feature"]) == ["tokens"] and coefficients["coefficient_low"].iloc[0] > 0
    run = json.loads((out / "run.json").read_text())
    style = json.dumps(run)
    assert "style_control" in style and "half a win" in style
    report = (out / "report.html").read_text()
    assert "Style control (reply length and markdown)" in report and "Style coefficients" in report


def test_replies_from_a_pairings_file_and_the_refusals(tmp_path):
    from parlai_acute import api
    from parlai_acute.acute.replies import read_replies, replies_from_pairings, write_replies

    lines = []
    for i in range(3):
        lines.append({"is_onboarding": False, "speakers_to_eval": ["a", "b"], "dialogue_ids": [f"a:{i}", f"b:{i}"],
                      "dialogue_dicts": [
                          {"id": f"a:{i}", "speakers": ["a", "other_speaker"], "dialogue": [
                              {"id": "other_speaker", "text": "hi"}, {"id": "a", "text": "**Hello** there " * (i + 1)}]},
                          {"id": f"b:{i}", "speakers": ["other_speaker", "b"], "dialogue": [
                              {"id": "other_speaker", "text": "hi"}, {"id": "b", "text": "Hi."}]}]})
    replies = replies_from_pairings(lines)
    a = replies.set_index("dialogue").loc["a:1"]
    assert (a["tokens"], a["bold"], a["source"]) == (8, 2, "pairings")
    write_replies(tmp_path / "r.jsonl", replies)
    pd.testing.assert_frame_equal(read_replies(tmp_path / "r.jsonl"), replies, check_dtype=False)
    (tmp_path / "bad.csv").write_text("dialogue,tokens\nx,-2\n")
    with pytest.raises(UserError, match="bad.csv:2: field 'tokens' must be a whole count"):
        read_replies(tmp_path / "bad.csv")
    judgments = pd.DataFrame([{"worker": f"w{i % 6}", "model_left": "a", "model_right": "b", "dialogue_left": f"a:{i % 3}",
                               "dialogue_right": f"b:{i % 3}", "winner": "a" if i % 4 else "b", "reason": "",
                               "question_key": "q", "is_onboarding": False} for i in range(30)])
    with pytest.raises(UserError, match="style control needs the replies"):
        api.analyze("acute", judgments, warn=False, bootstrap=0, min_reason_chars=0, max_per_worker="none",
                    style_control=True)
    with pytest.raises(UserError, match="30 of 30 judgments name a conversation the replies do not hold"):
        api.analyze("acute", judgments, warn=False, bootstrap=0, min_reason_chars=0, max_per_worker="none",
                    style_control=True, replies=replies[replies["dialogue"].str.startswith("b")])
    result = api.analyze("acute", judgments, warn=False, bootstrap=0, min_reason_chars=0, max_per_worker="none",
                         style_control=True, replies=replies)
    q = result.questions[0]
    assert q.style is not None and "no bootstrap asked" in q.style.note
    assert set(result.tables()) >= {"ranking_style", "style_coefficients"}
    assert result.meta()["style_control"]["q"]["model"].startswith("logistic Bradley-Terry")
