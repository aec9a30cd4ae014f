"""Judges are flagged where their verdicts are used: the ACUTE analysis of a judge's judgments."""
from __future__ import annotations

from judge_fixtures import SCRIPTED, three_model_pairings, write_pairings
from parlai_acute.scripts.main import main


def test_a_failed_position_following_judge_gets_a_banner_where_its_verdicts_rank_models(tmp_path, capsys):
    path = write_pairings(tmp_path / "p.jsonl", three_model_pairings())
    out = tmp_path / "j"
    assert main(["judge", "acute", "--pairings", path, "--judge", f"{SCRIPTED} --script first", "--inconsistent", "tie",
                 "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(out), "--analyze"]) == 0
    html = (out / "analysis" / "report.html").read_text()
    assert "FAILED onboarding (5/10 gold orders correct" in html
    assert "chose the left (first shown) conversation in 12 of 12 judgments" in html
    capsys.readouterr()
    # `acute analyze` of the same table finds the judge's summary beside it
    assert main(["acute", "analyze", "--judgments", str(out / "judgments.csv"), "--outdir", str(tmp_path / "a"),
                 "--bootstrap", "50"]) == 0
    printed = capsys.readouterr().out
    assert "WARNING: judge:" in printed and "FAILED onboarding" in printed and "follow the position" in printed
    assert "FAILED onboarding" in (tmp_path / "a" / "report.html").read_text()


def test_an_order_invariant_judge_is_not_flagged(tmp_path, capsys):
    path = write_pairings(tmp_path / "p.jsonl", three_model_pairings())
    out = tmp_path / "j"
    assert main(["judge", "acute", "--pairings", path, "--judge", f"{SCRIPTED} --script longest", "--no-onboarding",
                 "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(out), "--analyze"]) == 0
    assert "WARNING" not in capsys.readouterr().out
    assert "untrustworthy" not in (out / "analysis" / "report.html").read_text()
