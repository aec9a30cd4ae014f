"""`parlai-acute judge per-turn`: context rebuilt from the turns table, the judge's rows in the same table."""
from __future__ import annotations

import pandas as pd

from judge_fixtures import SCRIPTED, read_jsonl, summary_of, turns_rows, write_turns
from parlai_acute.per_turn.judge import PerTurnProtocol
from parlai_acute.per_turn.turns import COLUMNS, read_turns
from parlai_acute.scripts.main import main


def run_judge(tmp_path, rows, script, *extra, name="out"):
    path = write_turns(tmp_path / f"{name}.jsonl", rows)
    outdir = tmp_path / name
    assert main(["judge", "per-turn", "--turns", path, "--judge", f"{SCRIPTED} --script {script}",
                 "--cache", str(tmp_path / "cache.sqlite"), "--outdir", str(outdir), "--backoff", "0", *extra]) == 0
    return outdir


def test_context_comes_from_earlier_rows(tmp_path):
    rows = turns_rows("sata_user")
    # turn 0 of d0: nothing picked, the worker's own reply continued the conversation
    for row in rows:
        if row["dialogue"] == "d0" and row["turn"] == 0:
            row.update(picked=False, continued=False, fallback="user", user_reply="I write poems, mostly.")
    protocol = PerTurnProtocol()
    items = protocol.items(read_turns(write_turns(tmp_path / "t.jsonl", rows)))
    assert [i.key for i in items] == ["per-turn:d0:0", "per-turn:d0:1", "per-turn:d1:0", "per-turn:d1:1"]
    assert items[1].data["context"] == [("User", "Hi! What do you do for fun?"), ("Bot", "I write poems, mostly."),
                                        ("User", "Yes, I walk my dog every morning.")]
    assert items[3].data["context"][1] == ("Bot", "Nice! Was it sourdough or a quick yeast loaf?")
    text = protocol.render(items[1], (1, 0))
    # the worker saw the bad reply first at this turn; order (1, 0) swaps them
    assert "1. What kind of dog" in text and "2. I don't know" in text
    assert items[1].template.id == "perturn_sata@1"


def test_soba_judge_rows_join_the_table(tmp_path, capsys):
    outdir = run_judge(tmp_path, turns_rows("soba"), "longest")
    assert "4 turns: 4 consistent" in capsys.readouterr().out
    table = read_turns(outdir / "turns.csv")
    assert list(table.columns) == list(COLUMNS) and len(table) == 8
    assert set(table["worker"]) == {"judge:tests.judges.scripted_judge:ScriptedJudgeAgent"}
    assert table.groupby(["dialogue", "turn"])["picked"].sum().eq(1).all()  # SOBA: exactly one pick
    assert table[table["picked"]]["model"].eq("smart").all()
    key = ["dialogue", "turn", "model"]
    human = read_turns(tmp_path / "out.jsonl").set_index(key).sort_index()
    assert table.set_index(key).sort_index()["continued"].equals(human["continued"])  # history as it happened
    summary = summary_of(outdir)
    assert summary["templates"] == ["perturn_soba@1"] and summary["position_bias"][0]["first_rate"] == 0.5


def test_a_judge_who_disagrees_continues_with_its_own_pick(tmp_path, capsys):
    rows = turns_rows("soba")
    for row in rows:  # the worker picked the generic reply, which continued the conversation
        row.update(picked=not row["picked"], continued=not row["continued"])
    outdir = run_judge(tmp_path, rows, "longest")
    table = read_turns(outdir / "turns.csv")  # the validated reader accepts the judge's table
    assert table[table["picked"]]["model"].eq("smart").all()
    assert table["continued"].equals(table["picked"]) and table["fallback"].eq("picked").all()
    assert str(table["position"].dtype) == "Int64" and table["picked"].dtype == bool


def test_sata_and_sm(tmp_path, capsys):
    outdir = run_judge(tmp_path, turns_rows("sata_random"), "longest", name="sata")
    table = read_turns(outdir / "turns.csv")
    assert table[table["picked"]]["model"].eq("smart").all() and table["picked"].sum() == 4
    sm = [r for r in turns_rows("sm") if r["model"] == "smart"]
    for r in sm:
        r.update(position=0, setting="sm", model_set="smart")
    outdir = run_judge(tmp_path, sm, "longest", name="sm")
    table = read_turns(outdir / "turns.csv")
    assert len(table) == 4 and table["picked"].all()
    assert summary_of(outdir)["templates"] == ["perturn_sm@1"]


def test_first_position_and_garbage_judges(tmp_path, capsys):
    outdir = run_judge(tmp_path, turns_rows("soba"), "first")
    out = capsys.readouterr().out
    assert "0 consistent, 4 inconsistent (4 followed the position; dropped)" in out
    assert "first position chosen 8/8 (100%, expected 50%" in out
    assert pd.read_csv(outdir / "turns.csv").empty
    outdir = run_judge(tmp_path, turns_rows("soba"), "garbage", "--retries", "1", name="garbage")
    assert "4 missing (8 unparseable and 0 failed orders)" in capsys.readouterr().out
    assert all(len(o["attempts"]) == 2 for i in read_jsonl(outdir / "items.jsonl") for o in i["orders"])


def test_incomplete_candidates_are_not_shown_and_ties_are_refused(tmp_path, capsys):
    rows = turns_rows("soba")
    # d0 turn 0: the smart model timed out, so only the generic reply was shown (and picked)
    rows[0].update(incomplete=True, position="", error="timeout", picked=False, continued=False)
    rows[1].update(position=0, picked=True, continued=True)
    items = PerTurnProtocol().items(read_turns(write_turns(tmp_path / "t.jsonl", rows)))
    assert len(items[0].options) == 1
    path = write_turns(tmp_path / "t2.jsonl", rows)
    assert main(["judge", "per-turn", "--turns", path, "--outdir", str(tmp_path / "o"), "--inconsistent", "tie"]) == 2
    assert "no ties" in capsys.readouterr().err
