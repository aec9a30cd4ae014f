"""Ties in ACUTE-Eval (issue 24): the judgments table holds a tie and "both bad", every surface
counts a tie as half a win through the one definition (acute/estimands.py), the analysis reports
win, tie and loss rates and Davidson's tie-aware ranking beside Bradley-Terry."""
from __future__ import annotations

import pandas as pd
import pytest

from parlai_acute.acute.judgments import judgments_table, read_judgments, write_judgments
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.errors import UserError


def judgment(**fields) -> dict:
    row = {"worker": "w1", "model_left": "a", "model_right": "b", "dialogue_left": "a-1", "dialogue_right": "b-1",
           "winner": "a", "reason": "more fun", "question_key": "engaging", "is_onboarding": False}
    return {**row, **fields}


def test_a_table_without_the_outcome_column_is_all_wins():
    table = judgments_table([judgment()])
    assert table.loc[0, "outcome"] == "win" and table.loc[0, "loser"] == "b" and table.loc[0, "winner_side"] == "left"


@pytest.mark.parametrize("outcome", ["tie", "both_bad"])
def test_a_tie_has_no_winner_and_reads_back_as_written(tmp_path, outcome):
    table = judgments_table([judgment(winner="", outcome=outcome), judgment(outcome="")])
    assert list(table["outcome"]) == [outcome, "win"]
    assert list(table.loc[0, ["winner", "loser", "winner_side"]]) == ["", "", ""]
    for name in ("j.csv", "j.jsonl"):
        write_judgments(tmp_path / name, table)
        assert read_judgments(tmp_path / name).equals(table)


@pytest.mark.parametrize("fields, words", [
    ({"outcome": "draw"}, "field 'outcome' must be one of win, tie, both_bad"),
    ({"outcome": "tie"}, "a tie has no winner"),
    ({"winner": ""}, "(a tie: set field 'outcome' to tie or both_bad)"),
])
def test_a_wrong_outcome_is_one_line_naming_the_field(fields, words):
    with pytest.raises(UserError) as err:
        judgments_table([judgment(**fields)])
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_live_task_saves_a_tie_as_an_outcome_without_a_choice():
    from parlai_acute.acute.judgments import judgments_from_unit_data

    pairing = {"dialogue_ids": ["a-1", "b-1"], "speakers_to_eval": ["a", "b"]}
    units = [{"worker_name": "w1", "unit_id": "1", "data": {"comparisons": [
        {"pairing": pairing, "left": 1, "choice": "", "outcome": "tie", "reason": "same", "question_key": "q"},
        {"pairing": pairing, "left": 0, "choice": "b", "reason": "better", "question_key": "q"},
        {"pairing": pairing, "left": 0, "choice": "", "reason": "", "question_key": "q"}]}}]  # unanswered
    table = judgments_from_unit_data(units)
    assert list(table["outcome"]) == ["tie", "win"] and list(table["winner"]) == ["", "b"]


def test_simulated_ties_follow_davidsons_model():
    table = simulate_judgments({"a": 0.0, "b": 0.0}, 4000, seed=1, tie=1.0, both_bad=0.25)
    ties = table["outcome"] != "win"
    assert abs(ties.mean() - 1 / 3) < 0.03  # equal strengths: nu / (2 + nu)
    assert abs((table["outcome"] == "both_bad").sum() / ties.sum() - 0.25) < 0.04
    assert (table.loc[ties, "winner"] == "").all()
    judgments_table(table)  # valid as a table
    assert simulate_judgments({"a": 0.0, "b": 1.0}, 50, seed=3).equals(
        simulate_judgments({"a": 0.0, "b": 1.0}, 50, seed=3, tie=0.0))
