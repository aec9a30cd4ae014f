"""`parlai-acute judge agreement`: judge vs people and people vs people on the same items."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from judge_fixtures import SCRIPTED, human_judgments, three_model_pairings, turns_rows, write_pairings, write_turns
from parlai_acute.acute.judgments import normalize_row, to_frame
from parlai_acute.judges.agreement import acute_agreement
from parlai_acute.scripts.main import main
from parlai_acute.stats import rater_agreement as ra


def test_kappa_and_percent_by_hand():
    pairs = pd.DataFrame({"item": [1, 1, 2, 3], "a": ["x", "x", "y", "y"], "b": ["x", "y", "y", "x"]})
    assert ra.percent(pairs) == 0.5
    # observed 0.5; expected from marginals a: x .5 y .5, b: x .5 y .5 -> 0.5; kappa 0
    assert ra.kappa(pairs) == pytest.approx(0.0)
    low, high = ra.bootstrap(pairs, ra.percent, 200, seed=1)
    assert 0 <= low < 0.5 < high <= 1  # three items: a wide interval, never zero-width
    human = pd.DataFrame({"item": [1, 1, 1, 2], "rater": ["h1", "h2", "h3", "h1"], "label": ["x", "x", "y", "y"]})
    hh = ra.human_pairs(human)
    assert len(hh) == 6 and ra.percent(hh) == pytest.approx(2 / 6)  # only item 1 has two people


def test_acute_agreement_end_to_end(tmp_path, capsys):
    pairings = three_model_pairings()
    human_path = tmp_path / "human.jsonl"
    human_path.write_text("".join(json.dumps(r) + "\n" for r in human_judgments(pairings)))
    path = write_pairings(tmp_path / "p.jsonl", pairings)
    assert main(["judge", "acute", "--pairings", path, "--judge", f"{SCRIPTED} --script longest", "--no-onboarding",
                 "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(tmp_path / "j")]) == 0
    assert main(["judge", "agreement", "--protocol", "acute", "--human", str(human_path), "--judge",
                 str(tmp_path / "j" / "judgments.csv"), "--outdir", str(tmp_path / "a"), "--bootstrap", "200"]) == 0
    out = capsys.readouterr().out
    s = json.loads((tmp_path / "a" / "agreement.json").read_text())
    # 6 items x 3 people = 18 pairs; the contrarian disagrees on 3 items
    assert s["judge_vs_human"]["pairs"] == 18 and s["judge_vs_human"]["percent_agreement"] == pytest.approx(15 / 18)
    hh = s["on_items_with_two_or_more_humans"]["human_vs_human"]
    assert hh["pairs"] == 36 and hh["percent_agreement"] == pytest.approx(24 / 36)  # 3 items of 6 with one dissent
    low, high = s["judge_vs_human"]["percent_ci"]
    assert low < 15 / 18 < high
    assert s["questions"][0]["ranking"]["kendall_tau"] == pytest.approx(1.0)
    assert s["matchups"]["n"] == 3 and s["matchups"]["same_winner"] == 3
    assert s["seed"] == 0 and s["config"]["bootstrap"] == 200 and "parlai_acute_version" in s
    assert "(ceiling)" in out
    scores = pd.read_csv(tmp_path / "a" / "scores.csv")
    assert set(scores["judge_winrate_b"]).issubset({0.0, 1.0})
    html = (tmp_path / "a" / "report.html").read_text()
    assert "human vs human, items with 2+ people (ceiling)" in html and "FAILED onboarding" not in html
    assert (tmp_path / "a" / "figures" / "kappa.svg").is_file()


def test_report_flags_a_judge_that_failed_onboarding(tmp_path, capsys):
    pairings = three_model_pairings()
    human_path = tmp_path / "human.jsonl"
    human_path.write_text("".join(json.dumps(r) + "\n" for r in human_judgments(pairings)))
    path = write_pairings(tmp_path / "p.jsonl", pairings)
    assert main(["judge", "acute", "--pairings", path, "--judge", f"{SCRIPTED} --script first", "--inconsistent", "tie",
                 "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(tmp_path / "j")]) == 0
    assert main(["judge", "agreement", "--protocol", "acute", "--human", str(human_path), "--judge",
                 str(tmp_path / "j" / "judgments.csv"), "--outdir", str(tmp_path / "a"), "--bootstrap", "50"]) == 0
    html = (tmp_path / "a" / "report.html").read_text()
    assert "This judge FAILED onboarding: 5/10 gold orders correct" in html
    s = json.loads((tmp_path / "a" / "agreement.json").read_text())
    assert s["judge_ties_left_out"] == 6 and s["judge_vs_human"]["pairs"] == 0


def test_a_contrary_judge_has_negative_kappa():
    pairings = three_model_pairings()
    human = to_frame(normalize_row(r, "t") for r in human_judgments(pairings, workers=("w1", "w2"), contrarian=""))
    judge = human[human["worker"] == "w1"].copy()
    judge["worker"] = "judge:contrary"
    swap = judge["winner"].copy()
    judge["winner"], judge["loser"] = judge["loser"], swap
    judge["winner_side"] = judge["winner_side"].map({"left": "right", "right": "left"})
    result = acute_agreement(human, judge, resamples=100)["summary"]
    assert result["judge_vs_human"]["percent_agreement"] == 0.0
    assert result["judge_vs_human"]["kappa"] < 0
    assert result["questions"][0]["ranking"]["kendall_tau"] == pytest.approx(-1.0)


def test_perturn_agreement(tmp_path, capsys):
    rows = turns_rows("soba")
    path = write_turns(tmp_path / "human.jsonl", rows)
    assert main(["judge", "per-turn", "--turns", path, "--judge", f"{SCRIPTED} --script first",
                 "--orders", "none", "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(tmp_path / "j")]) == 0
    assert main(["judge", "agreement", "--protocol", "per-turn", "--human", path, "--judge",
                 str(tmp_path / "j" / "turns.csv"), "--outdir", str(tmp_path / "a"), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    s = json.loads((tmp_path / "a" / "agreement.json").read_text())
    # no swap, one seeded random order per turn: "always the first" agrees where the draw showed the good reply
    # first (2 of the 4 turns with seed 0)
    assert s["judge_vs_human"]["percent_agreement"] == 0.5
    assert "not available (no item was judged by two or more people)" in out
    assert s["ranking"]["systems"] == 2
