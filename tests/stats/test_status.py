"""``parlai-acute status`` on tidy tables of the three protocols (parlai_acute.monitoring.status)."""
import json

import numpy as np
import pytest

from parlai_acute.acute.judgments import write_judgments
from parlai_acute.errors import UserError
from parlai_acute.per_turn.simulate import simulate_turns
from parlai_acute.per_turn.turns import turns_table, write_turns
from parlai_acute.scripts.main import main
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.monitoring.status import detect_protocol, status, status_lines


def test_acute_a_clear_winner_is_decided_and_equal_models_are_not():
    # 3 judgments per worker: within the protocol's default cap (one per model pair and question)
    df = simulate_judgments({"strong": 1.0, "x": 0.0, "y": 0.0}, 1500, seed=0, workers=500)
    result = status(df)
    rows = {r["comparison"]: r for r in result["rows"]}  # "B vs A": B's win rate, B the later name
    assert result["protocol"] == "acute" and result["per_comparison_alpha"] == pytest.approx(0.05 / 3)
    assert rows["x vs strong"]["decided"] == "below" and rows["x vs strong"]["upper"] < 0.5
    assert rows["x vs strong"]["decided_at_judgments"] <= 1500 and rows["x vs strong"]["unit"] == "worker"
    assert rows["y vs x"]["decided"] == "undecided" and rows["y vs x"]["lower"] < 0.5 < rows["y vs x"]["upper"]
    assert rows["x vs strong"]["model_a"] == "strong" and rows["x vs strong"]["model_b"] == "x"
    text = "\n".join(status_lines(result))
    assert "DECIDED: strong ahead" in text and "x vs strong" in text


def test_acute_undecided_comparison_projects_the_judgments_still_needed():
    df = simulate_judgments({"a": 0.35, "b": 0.0}, 60, seed=1, workers=60)  # one judgment per worker
    row = status(df)["rows"][0]
    assert row["comparison"] == "b vs a"
    assert row["decided"] == "undecided" and row["estimate"] < 0.4 and 1 <= row["more"] < 1000
    # with the data to come, it is decided about when projected
    later = status(simulate_judgments({"a": 0.35, "b": 0.0}, 3000, seed=1, workers=3000))["rows"][0]
    assert later["decided"] == "below"


def test_per_turn_sata_differences_are_on_their_own_scale_and_soba_wins_are_rates():
    sata = turns_table(simulate_turns({"m1": 0.8, "m2": 0.0, "m3": 0.0}, "mm", "sata_user", dialogues=200,
                                      turns_per_dialogue=8, workers=40, dialogue_sd=0.5, seed=0, validate=False))
    # 40 workers did 200 dialogues: the worker is the unit, as in analyze (per_turn.analysis.resolve_cluster)
    assert {(r["unit"], r["clusters"]) for r in status(sata)["rows"]} == {("worker", 40)}
    sata["worker"] = "w-" + sata["dialogue"].astype(str)  # one dialogue per worker: the dialogue is the unit
    rows = {r["comparison"]: r for r in status(sata)["rows"]}
    assert set(rows) == {"m2 vs m1", "m3 vs m1", "m3 vs m2"}  # B minus A, B the later name
    assert rows["m2 vs m1"]["m0"] == 0.0 and rows["m2 vs m1"]["upper"] < 0 and rows["m2 vs m1"]["decided"] == "below"
    assert -1 <= rows["m3 vs m2"]["lower"] < 0 < rows["m3 vs m2"]["upper"] <= 1
    assert rows["m2 vs m1"]["unit"] == "dialogue" and rows["m2 vs m1"]["clusters"] == 200
    soba = turns_table(simulate_turns({"m1": 0.0, "m2": 0.0}, "pm", "soba", dialogues=50, turns_per_dialogue=10,
                                      workers=10, dialogue_sd=0.5, seed=0, validate=False))
    row = status(soba)["rows"][0]  # PM-SOBA: the pick rate difference is 2 x B's win rate - 1
    assert row["m0"] == 0.0 and -1 < row["lower"] < 0 < row["upper"] < 1 and row["decided"] == "undecided"


def test_ssa_rates_have_intervals_and_model_pairs_are_decided_apart():
    labels = simulate_labels({"good": (0.9, 0.7), "bad": (0.3, 0.2)}, contexts=150, labels_per_item=3, workers=30)
    rows = {(r["group"], r["comparison"]): r for r in status(labels)["rows"]}
    good = rows[("sensibleness", "good")]
    assert good["lower"] < good["estimate"] < good["upper"] and good["decided"] == "rate (no null)"
    pair = rows[("sensibleness", "good vs bad")]  # good minus bad
    assert pair["decided"] == "above" and pair["lower"] > 0


def test_protocol_is_told_from_the_columns_and_bad_input_is_one_line():
    assert detect_protocol(simulate_judgments({"a": 0, "b": 0}, 10)) == "acute"
    with pytest.raises(UserError, match="none of"):
        detect_protocol(simulate_judgments({"a": 0, "b": 0}, 10).drop(columns="winner"))
    with pytest.raises(UserError, match="alpha"):
        status(simulate_judgments({"a": 0, "b": 0}, 10), alpha=0)


def test_cli_from_table_files_prints_and_writes_json(tmp_path, capsys):
    judgments = tmp_path / "judgments.csv"
    write_judgments(judgments, simulate_judgments({"a": 1.0, "b": 0.0}, 400, seed=2, workers=400))
    out_json = tmp_path / "status.json"
    assert main(["status", "--table", str(judgments), "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "acute: 400 rows" in text and "b vs a" in text and "DECIDED" in text
    saved = json.loads(out_json.read_text())
    assert saved["rows"][0]["decided"] == "below" and saved["version"] and saved["source"] == str(judgments)
    turns = tmp_path / "turns.jsonl"
    write_turns(turns, turns_table(simulate_turns({"m1": 0.0, "m2": 0.0}, "pm", "soba", dialogues=20,
                                                  turns_per_dialogue=5, workers=5, seed=1, validate=False)))
    assert main(["status", "--table", str(turns)]) == 0
    assert "per-turn:" in capsys.readouterr().out


def test_cli_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "other.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["status", "--table", str(bad)]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--protocol" in err
    assert main(["status", "--table", str(bad), "--alpha", "2", "--protocol", "acute"]) != 0
    assert "error" in capsys.readouterr().err
