"""The judgments table is checked by columns, and says what the row-by-row check said: each kind of
bad value names the same first bad row in the same words, whether the rows come as dicts, a
DataFrame, a CSV or a Parquet file; a good table comes out cell for cell as the row-by-row check
made it; a Parquet file goes through ``api.load_table`` and ``acute analyze`` as a CSV does."""
import csv
import json

import numpy as np
import pandas as pd
import pytest

from parlai_acute import api
from parlai_acute.acute.judgments import judgments_table, normalize_row, read_judgments, to_frame
from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main
from parlai_acute.table_files import RowLabels, read_rows

GOOD = {"worker": "w1", "model_left": "A", "model_right": "B", "dialogue_left": "a1", "dialogue_right": "b1",
        "winner": "B", "reason": "more fun", "question_key": "engaging", "is_onboarding": False}

#: every kind of bad value the row-by-row check refuses (the cases tests/acute/test_analysis.py and
#: tests/acute/test_ties.py cover, and the rest of normalize_row's rules)
BAD = {
    "missing reason": {"reason": None},  # None here: the key is dropped below
    "bad is_onboarding": {"is_onboarding": "maybe"},
    "winner not shown": {"winner": "C"},
    "unknown outcome": {"outcome": "draw"},
    "tie with a winner": {"outcome": "tie"},
    "no winner, no tie": {"winner": ""},
    "blank worker": {"worker": "   "},
    "blank model": {"model_left": ""},
    "blank question key": {"question_key": "none"},
    "bad side": {"winner_side": "middle"},
    "side against winner": {"winner_side": "left"},
    "same model, no side": {"model_left": "B"},
    "loser wrong": {"loser": "Z"},
    "onboarding without answer": {"is_onboarding": "yes"},
    "bad onboarding answer": {"is_onboarding": True, "onboarding_correct": "perhaps"},
    "duration not a number": {"duration": "long"},
    "negative timestamp": {"timestamp": -1},
    "infinite duration": {"duration": "inf"},
}


def rows_with(bad: dict, at: int, n: int = 6) -> list[dict]:
    """``n`` good rows, of many spellings, with the bad one at ``at`` and another bad row after it."""
    spellings = [{}, {"is_onboarding": "FALSE", "timestamp": " 12.5 ", "duration": 3},
                 {"winner": "A", "outcome": " WIN ", "onboarding_correct": "null", "duration": ""},
                 {"winner": "", "outcome": "both_bad", "loser": "", "winner_side": None, "pair_id": "p"},
                 {"is_onboarding": 1, "onboarding_correct": " True ", "question": 7, "run_id": None},
                 {"model_left": "B", "winner_side": "right", "timestamp": 1e16, "reason": "NaN"}]
    rows = [{**GOOD, **spellings[i % len(spellings)]} for i in range(n)]
    rows[at] = {**rows[at], **bad}
    rows[-1] = {**rows[-1], "winner": "nobody"}
    for row in rows:
        if "reason" in row and row["reason"] is None:
            del row["reason"]
    return rows


def one_by_one(rows: list[dict], where) -> pd.DataFrame:
    """The row-by-row check, as the table was read before it went by columns."""
    return to_frame(normalize_row(row, w) for row, w in zip(rows, where))


def message(call) -> str:
    with pytest.raises(UserError) as err:
        call()
    return str(err.value)


@pytest.mark.parametrize("kind", sorted(BAD))
@pytest.mark.parametrize("at", [0, 1])
def test_each_bad_value_names_the_same_first_row_in_the_same_words(kind, at, tmp_path):
    rows = rows_with(BAD[kind], at)
    labels = [f"row {i + 1}" for i in range(len(rows))]
    expected = message(lambda: one_by_one(rows, labels))
    assert expected.startswith(f"row {at + 1}: ") and "\n" not in expected
    assert message(lambda: judgments_table(rows)) == expected
    if kind != "missing reason":  # a DataFrame has every column; a missing one is its own message
        frame = pd.DataFrame(rows)
        assert message(lambda: judgments_table(frame)) == message(
            lambda: one_by_one(frame.to_dict(orient="records"), labels))
    # the same rows in a CSV file: the line, as the row-by-row reader numbers it
    path = tmp_path / "j.csv"
    names = list(dict.fromkeys(name for row in rows for name in row))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        writer.writerows(rows)
    records, where = read_rows(path, noun="judgments file", row="judgment", required=[], missing_hint="",
                               empty_hint="")
    assert message(lambda: read_judgments(path)) == message(lambda: one_by_one(records, where))


def test_a_bad_row_in_a_parquet_file_is_named_by_its_row(tmp_path):
    rows = [{**GOOD, "timestamp": float(i)} for i in range(5)]
    rows[3]["winner"] = "C"
    pd.DataFrame(rows).to_parquet(tmp_path / "j.parquet")
    said = message(lambda: api.load_table("acute", tmp_path / "j.parquet"))
    assert said == message(lambda: one_by_one(rows, RowLabels(5, str(tmp_path / "j.parquet"))))
    assert said.startswith(f"{tmp_path / 'j.parquet'} row 4: field 'winner' is 'C'")


def test_a_multi_line_cell_moves_the_line_a_csv_message_names(tmp_path):
    rows = [{**GOOD, "reason": "two\nlines"}, GOOD, {**GOOD, "winner": "C"}]
    path = tmp_path / "j.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert message(lambda: read_judgments(path)).startswith(f"{path}:5: field 'winner' is 'C'")


def test_a_good_table_is_cell_for_cell_what_the_row_by_row_check_made(tmp_path):
    rows = [{**row, "unit_id": i} for i, row in enumerate(rows_with({}, 0, n=60)[:-1])]
    labels = [f"row {i + 1}" for i in range(len(rows))]
    expected = one_by_one(rows, labels)
    pd.testing.assert_frame_equal(judgments_table(rows), expected)
    frame = pd.DataFrame(rows)
    pd.testing.assert_frame_equal(judgments_table(frame), one_by_one(frame.to_dict(orient="records"), labels))
    # as text in a CSV file, through the one reader
    frame.to_csv(tmp_path / "j.csv", index=False)
    records, where = read_rows(tmp_path / "j.csv", noun="judgments file", row="judgment", required=[],
                               missing_hint="", empty_hint="")
    pd.testing.assert_frame_equal(read_judgments(tmp_path / "j.csv"), one_by_one(records, where))
    (tmp_path / "j.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    pd.testing.assert_frame_equal(read_judgments(tmp_path / "j.jsonl"), expected)


def test_many_distinct_values_and_a_few_odd_cells_read_as_one_by_one(tmp_path):
    """Columns of many distinct values take Arrow's path, not the once-per-value one: the same cells."""
    n = 3000
    rng = np.random.default_rng(0)
    frame = pd.DataFrame([GOOD] * n).assign(
        worker=[f"w{i}" for i in range(n)], unit_id=[f"  u{i}" if i % 7 else " NULL " for i in range(n)],
        timestamp=[f"{t:.6f}" for t in rng.random(n) * 1e9], reason=[f"r{i}é" if i % 5 else "nan" for i in range(n)])
    frame.loc[11, "timestamp"] = "1_000.5"  # Python's float reads it; Arrow's cast does not
    frame.loc[12, "unit_id"] = "\u3000none\u2003"
    frame.to_csv(tmp_path / "j.csv", index=False)
    records, where = read_rows(tmp_path / "j.csv", noun="judgments file", row="judgment", required=[],
                               missing_hint="", empty_hint="")
    table = read_judgments(tmp_path / "j.csv")
    pd.testing.assert_frame_equal(table, one_by_one(records, where))
    assert table.loc[11, "timestamp"] == 1000.5 and table.loc[12, "unit_id"] == "" and table.loc[0, "reason"] == ""


def test_arrow_trims_what_python_strips():
    """The columnar check trusts Arrow's trimming to be ``str.strip``'s: every code point, checked."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    trimmed = pc.utf8_trim_whitespace(pa.array(["x" + ch + "x" + ch for ch in chars])).to_pylist()
    assert [ch for ch, t in zip(chars, trimmed) if (t == "x" + ch + "x") != ch.isspace()] == []


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_a_parquet_table_round_trips_through_load_table_and_the_cli(tmp_path, suffix, capsys):
    from parlai_acute.acute.simulate import simulate_judgments

    table = api.load_table("acute", simulate_judgments({"a": 0.0, "b": 0.4, "c": 0.8}, 300, seed=2, workers=30,
                                                       tie=0.5))
    path = tmp_path / f"judgments{suffix}"
    assert api.write_table("acute", table, path) == 300
    back = api.load_table("acute", path)
    pd.testing.assert_frame_equal(back, table)
    assert back.attrs["source"] == str(path)
    assert main(["acute", "analyze", "--judgments", str(path), "--outdir", str(tmp_path / "out"), "--bootstrap", "50",
                 "--no-report"]) == 0
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    expected = api.analyze("acute", table, bootstrap=50, warn=False).summary()
    assert len(summary) == len(expected) and list(summary["estimate"].round(9)) == list(
        expected["estimate"].astype(float).round(9))


def test_a_parquet_file_that_is_not_one_is_one_line(tmp_path):
    (tmp_path / "j.parquet").write_text("worker,winner\n")
    said = message(lambda: read_judgments(tmp_path / "j.parquet"))
    assert said.startswith(f"cannot read judgments file {tmp_path / 'j.parquet'}: ") and "\n" not in said
    pd.DataFrame([GOOD]).drop(columns="winner").to_parquet(tmp_path / "k.parquet")
    assert message(lambda: read_judgments(tmp_path / "k.parquet")).startswith(
        f"{tmp_path / 'k.parquet'}: missing column 'winner'")
