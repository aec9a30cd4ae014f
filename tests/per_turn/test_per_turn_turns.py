"""The turns table: reading (.csv with BOM, .jsonl), writing, and the consistency checks."""
import json

import pandas as pd
import pytest

from parlai_acute.errors import UserError
from parlai_acute.per_turn.turns import COLUMNS, read_turns, turns_table, write_turns
from per_turn_helpers import table_rows, turn


def jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_table_has_schema_and_derives_fallback():
    rows = (turn("d1", 0, "AB", picked=["A"]) + turn("d1", 1, "AB", picked=["A", "B"], continued="B")
            + turn("d1", 2, "AB", picked=[]))
    df = turns_table(rows)
    assert list(df.columns) == list(COLUMNS) and len(df) == 6
    assert df.groupby("turn")["fallback"].first().tolist() == ["picked", "random_picked", "random_all"]
    assert df["position"].dtype == "Int64" and df["picked"].dtype == bool


def test_roundtrip_csv_with_bom_and_jsonl(tmp_path):
    rows = turn("d1", 0, "ABC", picked=["B"], protocol="soba") + turn("d2", 0, "ABC", picked=["C"], protocol="soba",
                                                                      incomplete=["A"], positions={"B": 1, "C": 0})
    df = turns_table(rows)
    write_turns(tmp_path / "t.csv", df)
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + (tmp_path / "t.csv").read_bytes())
    for name in ("t.csv", "bom.csv"):
        back = read_turns(tmp_path / name)
        pd.testing.assert_frame_equal(back, df)
    write_turns(tmp_path / "t.jsonl", df)
    pd.testing.assert_frame_equal(read_turns(tmp_path / "t.jsonl"), df)


def test_empty_and_missing_files(tmp_path):
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(UserError, match=r"e\.csv is empty"):
        read_turns(tmp_path / "e.csv")
    (tmp_path / "h.csv").write_text(",".join(COLUMNS) + "\n")
    with pytest.raises(UserError, match=r"h\.csv is empty"):
        read_turns(tmp_path / "h.csv")
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(UserError, match=r"e\.jsonl is empty"):
        read_turns(tmp_path / "e.jsonl")
    with pytest.raises(UserError, match="does not exist"):
        read_turns(tmp_path / "none.csv")
    (tmp_path / "x.txt").write_text("a")
    with pytest.raises(UserError, match=r"must end in \.csv, \.jsonl or \.parquet"):
        read_turns(tmp_path / "x.txt")


def test_csv_header_and_bad_json_name_the_line(tmp_path):
    (tmp_path / "h.csv").write_text("dialogue,worker\nd1,w1\n")
    with pytest.raises(UserError, match=r"h\.csv:1: missing column 'turn'"):
        read_turns(tmp_path / "h.csv")
    rows = turn("d1", 0, "AB", picked=["A"])
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1]) + "\n{oops\n")
    with pytest.raises(UserError, match=r"b\.jsonl:3: not valid JSON"):
        read_turns(path)


@pytest.mark.parametrize("change, pattern", [
    (lambda r: r[3].update(setting="xm"), r"t\.jsonl:4: field 'setting' must be one of pm, mm, sm, got 'xm'"),
    (lambda r: r[2].update(picked="maybe"), r"t\.jsonl:3: field 'picked' must be true or false"),
    (lambda r: r[1].update(turn=-1), r"t\.jsonl:2: field 'turn' must be a whole number"),
    (lambda r: r[1].update(decision_seconds="slow"), r"t\.jsonl:2: field 'decision_seconds' must be a number"),
    (lambda r: r[0].update(model=""), r"t\.jsonl:1: field 'model' is empty"),
    (lambda r: r[0].pop("worker"), r"t\.jsonl:1: field 'worker' is missing"),
    (lambda r: r[2].update(model="Z"), r"t\.jsonl:3: field 'model' is 'Z', not one of the model_set 'A\|B'"),
    (lambda r: r[2].update(protocol="sm"), r"t\.jsonl:3: field 'protocol' is 'sm' with setting 'pm'"),
    (lambda r: r[3].update(worker="w9"), r"t\.jsonl:4: field 'worker' is 'w9' but earlier rows of dialogue 'd1'"),
    (lambda r: r[1].update(position=0), r"t\.jsonl:1: dialogue 'd1' turn 0: field 'position' values are not 0\.\.1"),
    (lambda r: r[1].update(position=None), r"t\.jsonl:1: dialogue 'd1' turn 0: field 'position' is set for 1 of the 2"),
    (lambda r: r[3].update(fallback="user"), r"t\.jsonl:4: field 'fallback' is 'user' but the picks .* mean 'random_picked'"),
    (lambda r: r[3].update(continued=False), r"t\.jsonl:3: dialogue 'd1' turn 1: field 'continued': 0 candidates"),
])
def test_bad_rows_name_row_and_field(tmp_path, change, pattern):
    rows = turn("d1", 0, "AB", picked=["A"]) + turn("d1", 1, "AB", picked=["A", "B"], continued="B")
    change(rows)
    with pytest.raises(UserError, match=pattern):
        read_turns(jsonl(tmp_path / "t.jsonl", rows))


def test_protocol_rules():
    with pytest.raises(UserError, match="a SOBA turn has 2 picked candidates; exactly one"):
        turns_table(turn("d1", 0, "AB", picked=["A", "B"], protocol="soba"))
    with pytest.raises(UserError, match="a SOBA turn has 0 picked"):
        turns_table(turn("d1", 0, "AB", picked=[], protocol="soba", continued="A"))
    with pytest.raises(UserError, match="setting sm shows exactly 1 per turn"):
        turns_table(turn("d1", 0, "AB", picked=["A"], setting="sm", protocol="sm"))
    with pytest.raises(UserError, match="setting mm shows at least 3"):
        turns_table(turn("d1", 0, "AB", picked=["A"], setting="mm"))
    with pytest.raises(UserError, match="candidate the worker did not pick"):
        turns_table(turn("d1", 0, "ABC", picked=["A"], continued="B"))
    with pytest.raises(UserError, match="true for an incomplete candidate"):
        turns_table(turn("d1", 0, "ABC", picked=["A"], incomplete=["A"], positions={"B": 0, "C": 1}))
    rows = turn("d1", 0, "ABC", picked=[])
    rows = [r for r in rows if r["model"] != "C"]
    with pytest.raises(UserError, match="2 candidate rows but model_set 'A\\|B\\|C' has 3"):
        turns_table(rows)
    # SATA-User: nobody picked -> the worker's reply continued, no candidate did
    df = turns_table(turn("d1", 0, "ABC", picked=[], protocol="sata_user", continued=None, user_reply="mine"))
    assert set(df["fallback"]) == {"user"} and not df["continued"].any()
    with pytest.raises(UserError, match="expected 0"):
        turns_table(turn("d1", 0, "ABC", picked=[], protocol="sata_user", continued="A"))
    # SM: the one candidate continues whether appropriate or not
    df = turns_table(turn("d1", 0, "A", picked=[], protocol="sm", continued="A"))
    assert df["continued"].all() and df["fallback"].iloc[0] == "picked"


def test_every_model_failed_is_fallback_none():
    df = turns_table(turn("d1", 0, "AB", picked=[], protocol="soba", incomplete=["A", "B"], continued=None))
    assert set(df["fallback"]) == {"none"} and df["position"].isna().all()
