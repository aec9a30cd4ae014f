"""The SSA labels table: schema, normalisation (not sensible -> not specific), files, errors."""
import json

import pandas as pd
import pytest

from parlai_acute.errors import UserError
from parlai_acute.ssa.labels import COLUMNS, labels_table, read_labels, write_labels


def row(**kw):
    base = {"item": "i1", "model": "m", "worker": "w1", "sensible": True, "specific": False}
    base.update(kw)
    return base


def test_not_sensible_is_never_specific_and_counted():
    df = labels_table([row(worker="a", sensible=True, specific=True), row(worker="b", sensible=False, specific=True),
                       row(worker="c", sensible="false", specific="")])
    assert df["specific"].tolist() == [True, False, False]
    assert df.attrs["normalised_specific"] == 1
    assert list(df.columns) == list(COLUMNS)
    assert df["source"].tolist() == ["static"] * 3


def test_sensible_reply_needs_a_specific_answer():
    with pytest.raises(UserError, match=r"row 2: field 'specific' is missing for a sensible reply"):
        labels_table([row(worker="a"), row(worker="b", specific="")])


@pytest.mark.parametrize("bad,message", [
    (row(sensible="maybe"), "field 'sensible' must be true or false, got 'maybe'"),
    (row(worker=""), "field 'worker' is empty"),
    (row(source="chat"), "field 'source' must be one of static, interactive, log"),
    (row(source="interactive"), "field 'conversation' is empty for a interactive item"),
    (row(turn="1.5"), "field 'turn' must be a whole number"),
    (row(worker="w9", model="other"), "field 'model' is 'other' but an earlier label of item 'i1' says 'm'"),
    (row(worker="w0"), "worker 'w0' labelled item 'i1' twice"),
])
def test_bad_rows_are_one_line_errors_naming_row_and_field(bad, message):
    with pytest.raises(UserError) as info:
        labels_table([row(worker="w0"), bad])
    assert str(info.value).startswith("row 2: ") and message in str(info.value)
    assert "\n" not in str(info.value)


def test_csv_with_bom_and_jsonl_round_trip(tmp_path):
    df = labels_table([row(worker="a", reply="I don't know, \"really\"", context="Hi\nHow are you?"),
                       row(worker="b", sensible=False, specific=False, turn=3, conversation="c1", source="log",
                           item="i2")])
    for name in ("labels.csv", "labels.jsonl"):
        write_labels(tmp_path / name, df)
        back = read_labels(tmp_path / name)
        pd.testing.assert_frame_equal(back, df, check_dtype=False)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + (tmp_path / "labels.csv").read_bytes())
    assert read_labels(bom)["reply"].iloc[0] == "I don't know, \"really\""
    lines = (tmp_path / "labels.jsonl").read_text().splitlines()
    assert json.loads(lines[1])["turn"] == 3


def test_file_errors(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("item,model,worker,sensible,specific\n")
    with pytest.raises(UserError, match="is empty"):
        read_labels(empty)
    (tmp_path / "nothing.jsonl").write_text("")
    with pytest.raises(UserError, match="is empty"):
        read_labels(tmp_path / "nothing.jsonl")
    header = tmp_path / "header.csv"
    header.write_text("item,model,worker,sensible\ni,m,w,true\n")
    with pytest.raises(UserError, match=r"header.csv:1: missing column 'specific'"):
        read_labels(header)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row()) + "\n{oops\n")
    with pytest.raises(UserError, match=r"bad.jsonl:2: not valid JSON"):
        read_labels(bad)
    line = tmp_path / "line.csv"
    line.write_text("item,model,worker,sensible,specific\ni,m,w,yes,no\ni,m,w2,yes,perhaps\n")
    with pytest.raises(UserError, match=r"line.csv:3: field 'specific' must be true or false"):
        read_labels(line)
    with pytest.raises(UserError, match="does not exist"):
        read_labels(tmp_path / "missing.csv")
