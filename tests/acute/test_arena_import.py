"""The Arena importer read as one table (acute/imports.py): same table as the one validator makes,
Parquet and JSON lines, errors naming the line, and the replies' style for style control."""
import json

import numpy as np
import pandas as pd
import pytest

from parlai_acute.acute.imports import arena_judgments, arena_replies, arena_tables
from parlai_acute.acute.judgments import judgments_table
from parlai_acute.acute.simulate import arena_battles
from parlai_acute.errors import UserError


def battles(n=200):
    out = arena_battles({"gpt-4": 1.0, "claude-2": 0.6, "vicuna-13b": 0.0}, n, seed=0)
    out[3]["question_id"] = ""  # falls back to its position
    out[5]["model_b"] = out[5]["model_a"]  # one model on both sides: its winner side is kept
    out[5]["winner"] = "model_b"
    return out


def test_the_table_is_what_the_validator_makes_of_it(tmp_path):
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(b) + "\n" for b in battles()))
    table = arena_judgments(tmp_path / "b.jsonl")
    again = judgments_table(table)
    pd.testing.assert_frame_equal(table, again)
    assert table.loc[3, "pair_id"] == "battle-4" and table.loc[3, "dialogue_right"] == "battle-4:b"
    assert table.loc[5, "winner_side"] == "right"


def test_parquet_and_json_list_read_the_same(tmp_path):
    rows = battles()
    (tmp_path / "b.json").write_text(json.dumps(rows))
    pd.DataFrame(rows).to_parquet(tmp_path / "b.parquet")
    pd.testing.assert_frame_equal(arena_judgments(tmp_path / "b.json"), arena_judgments(tmp_path / "b.parquet"))
    kept = arena_judgments(tmp_path / "b.parquet", languages=["English"], max_turns=1)
    assert list(kept["pair_id"]) == [b["question_id"] or f"battle-{i + 1}" for i, b in enumerate(rows)
                                     if b["language"] == "English" and b["turn"] <= 1]


def test_an_error_names_the_line_of_a_json_lines_file(tmp_path):
    rows = battles(20)
    rows[7]["winner"] = "draw"
    (tmp_path / "b.jsonl").write_text("\n".join(json.dumps(b) + "\n" for b in rows))  # a blank line between
    with pytest.raises(UserError, match=r"b\.jsonl:15: field 'winner' is 'draw'"):
        arena_judgments(tmp_path / "b.jsonl")
    rows[7]["winner"], rows[9]["tstamp"] = "tie", -3
    (tmp_path / "b.json").write_text(json.dumps(rows))
    with pytest.raises(UserError, match=r"record 10: field 'tstamp' must be a number of seconds"):
        arena_judgments(tmp_path / "b.json")
    rows[9]["tstamp"], rows[2]["turn"] = 1.0, "two"
    (tmp_path / "b.json").write_text(json.dumps(rows))
    with pytest.raises(UserError, match=r"record 3: field 'turn' must be a whole number"):
        arena_judgments(tmp_path / "b.json", max_turns=2)
    (tmp_path / "b.parquet").write_bytes(b"not parquet")
    with pytest.raises(UserError, match="not a readable Parquet file"):
        arena_judgments(tmp_path / "b.parquet")


def test_replies_from_the_conversations_and_from_conv_metadata(tmp_path):
    rows = battles(8)
    for b in rows:
        b["conversation_a"] = [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "# Hi\n- a"}]
        b["conversation_b"] = [{"role": "user", "content": "hi there"}, {"role": "assistant", "content": "Hello."}]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(b) + "\n" for b in rows))
    judgments, replies = arena_tables(tmp_path / "c.jsonl")
    assert set(replies["dialogue"]) == set(judgments["dialogue_left"]) | set(judgments["dialogue_right"])
    a = replies.set_index("dialogue").loc[judgments.loc[0, "dialogue_left"]]
    assert (a["headers"], a["lists"], a["tokens"], a["source"]) == (1, 1, 4, "text")  # "#", "Hi", "-", "a"
    for b in rows:
        del b["conversation_a"], b["conversation_b"]
        b["conv_metadata"] = {"sum_assistant_a_tokens": 120, "sum_assistant_b_tokens": 30,
                              "header_count_a": {"h1": 1, "h2": 2}, "header_count_b": {"h1": 0},
                              "list_count_a": {"ordered": 0, "unordered": 4}, "list_count_b": {"ordered": 1},
                              "bold_count_a": {"**": 2, "__": 0}, "bold_count_b": {"**": 0}}
    (tmp_path / "m.json").write_text(json.dumps(rows))
    meta = arena_replies(tmp_path / "m.json").set_index("dialogue")
    first = meta.loc[judgments.loc[0, "dialogue_left"]]
    assert (first["tokens"], first["headers"], first["lists"], first["bold"]) == (120, 3, 4, 2)
    assert np.all(meta["source"] == "conv_metadata")
    (tmp_path / "plain.json").write_text(json.dumps(battles(8)))
    with pytest.raises(UserError, match="neither conv_metadata nor conversation_a"):
        arena_replies(tmp_path / "plain.json")


def test_a_file_arrow_cannot_type_is_read_line_by_line(tmp_path):
    rows = battles(30)
    rows[20]["judge"] = 17  # a number among names: pyarrow refuses the column, the line reader takes it
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(b) + "\n" for b in rows))
    (tmp_path / "b.json").write_text(json.dumps(rows))
    table = arena_judgments(tmp_path / "b.jsonl")
    assert table.loc[20, "worker"] == "17"
    pd.testing.assert_frame_equal(table, arena_judgments(tmp_path / "b.json"))
    pd.testing.assert_frame_equal(table, judgments_table(table))
