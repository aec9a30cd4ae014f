"""`parlai-acute judge agreement`: judge vs people and people vs people on the same items."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from judge_fixtures import SCRIPTED, human_judgments, three_model_pairings, turns_rows, write_pairings, write_turns
from parlai_acute.acute.judgments import normalize_row, to_frame
from parlai_acute.acute.judge import agreement as acute_agreement
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
    captured = capsys.readouterr()
    out = captured.out
    # --judge is a model everywhere else; the judge's table is --judge-table, the people's --people; the old
    # spellings still work
    assert "--judge is now spelled --judge-table" in captured.err and "--human is now spelled --people" in captured.err
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
    # the paragraph a paper's methods section takes: what was compared, the measures and their intervals
    assert "We compared the labels of a model judge" in html and "kappa over pairs of labels of one item" in html
    assert (tmp_path / "a" / "figures" / "kappa.svg").is_file()


def test_report_flags_a_judge_that_failed_onboarding(tmp_path, capsys):
    pairings = three_model_pairings()
    human_path = tmp_path / "human.jsonl"
    human_path.write_text("".join(json.dumps(r) + "\n" for r in human_judgments(pairings)))
    path = write_pairings(tmp_path / "p.jsonl", pairings)
    assert main(["judge", "acute", "--pairings", path, "--judge", f"{SCRIPTED} --script first", "--inconsistent", "tie",
                 "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(tmp_path / "j")]) == 0
    assert main(["judge", "agreement", "--protocol", "acute", "--people", str(human_path), "--judge-table",
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
    assert main(["judge", "agreement", "--protocol", "per-turn", "--people", path, "--judge-table",
                 str(tmp_path / "j" / "turns.csv"), "--outdir", str(tmp_path / "a"), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    s = json.loads((tmp_path / "a" / "agreement.json").read_text())
    # no swap, one seeded random order per turn: "always the first" agrees where the draw showed the good reply
    # first (2 of the 4 turns with seed 0)
    assert s["judge_vs_human"]["percent_agreement"] == 0.5
    assert "not available (no item was judged by two or more people)" in out
    assert s["ranking"]["systems"] == 2


def test_a_one_label_judge_gets_no_kappa_and_no_zero_width_interval():
    """A judge that says "yes" to everything: kappa is 0 by construction, so it is undefined, said why."""
    human = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4], "rater": ["h1", "h2"] * 4,
                          "label": ["yes", "yes", "no", "no", "yes", "no", "no", "no"]})
    judge = pd.DataFrame({"item": [1, 2, 3, 4], "rater": ["j"] * 4, "label": ["yes"] * 4})
    s = ra.summary(ra.judge_human_pairs(human, judge), 200, seed=0)
    assert s["percent_agreement"] == pytest.approx(3 / 8)
    assert all(v != v for v in [s["kappa"], *s["kappa_ci"]])  # the old output: +0.00 [+0.00, +0.00]
    assert "the judge gave one label ('yes') to every item" in s["kappa_note"] and "by construction" in s["kappa_note"]
    tau = ra.rank_correlation({"a": 0.2, "b": 0.7}, {"a": 1.0, "b": 1.0})
    assert tau["kendall_tau"] != tau["kendall_tau"] and "the judge gave every system the same score" in tau["note"]
    assert "only 3 systems" in ra.rank_correlation({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 3, "c": 2})["note"]


def test_perfect_agreement_keeps_an_exact_bound_over_items_instead_of_a_point():
    human = pd.DataFrame({"item": [1, 1, 2, 2, 3, 3, 4, 4, 5, 5], "rater": ["h1", "h2"] * 5,
                          "label": ["x", "x", "y", "y", "x", "x", "y", "y", "x", "x"]})
    s = ra.summary(ra.human_pairs(human), 200, seed=0, sides=("a person", "the other person"))
    low, high = s["percent_ci"]
    assert s["percent_agreement"] == 1.0 and high == 1.0
    assert low == pytest.approx(0.025 ** (1 / 5))  # Clopper-Pearson 5 of 5 items, not [100, 100]
    assert "every pair agreed" in s["percent_note"]
    assert s["kappa"] == 1.0 and s["kappa_ci"][0] != s["kappa_ci"][0] and s["kappa_note"]


def test_tied_items_left_out_are_said_where_the_agreement_is_printed(tmp_path, capsys):
    pairings = three_model_pairings()
    human_path = tmp_path / "human.jsonl"
    human_path.write_text("".join(json.dumps(r) + "\n" for r in human_judgments(pairings)))
    path = write_pairings(tmp_path / "p.jsonl", pairings)
    assert main(["judge", "acute", "--pairings", path, "--judge", f"{SCRIPTED} --script first", "--inconsistent", "tie",
                 "--no-onboarding", "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(tmp_path / "j")]) == 0
    capsys.readouterr()
    assert main(["judge", "agreement", "--protocol", "acute", "--people", str(human_path), "--judge-table",
                 str(tmp_path / "j" / "judgments.csv"), "--outdir", str(tmp_path / "a"), "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert "no items: the 6 items the judge answered both ways" in out and "were left out" in out
    assert "Kendall's tau undefined over 3 systems (the judge gave every system the same score" in out
    page = (tmp_path / "a" / "report.html").read_text()
    assert "6 item(s) the judge answered both ways" in page
    assert "no items to compare" in page and "no items to compare; no items to compare" not in page  # said once
