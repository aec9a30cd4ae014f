"""parlai_acute.api: every protocol's table from a file, a DataFrame or records, analysed and written
through the same four functions; what is wrong with a DataFrame is named in one line."""
from __future__ import annotations

import warnings

import pandas as pd
import pytest

from parlai_acute import api
from parlai_acute.convai2.simulate import simulate_ratings
from parlai_acute.errors import UserError
from parlai_acute.per_turn.simulate import simulate_turns
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute.acute.simulate import simulate_judgments

TABLES = {
    "acute": lambda: simulate_judgments({"a": 0.4, "b": -0.4}, 80, seed=1, workers=40),
    "per-turn": lambda: simulate_turns({"a": 0.7, "b": 0.3}, "pm", "soba", dialogues=12, seed=1),
    "ssa": lambda: simulate_labels({"a": (0.9, 0.6), "b": (0.5, 0.2)}, 12, seed=1),
    "convai2": lambda: simulate_ratings({"a": 3.2, "b": 2.1}, 12, 4, seed=1, rounded=True),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_dataframe_a_file_and_records_give_the_same_analysis(name, tmp_path):
    frame = TABLES[name]()
    path = tmp_path / "table.csv"
    assert api.write_table(name, frame, path) == len(frame)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # as a spreadsheet saves "CSV UTF-8"
    options = {"bootstrap": 50, "seed": 3, **({"max_per_worker": 10} if name == "acute" else {})}
    results = [api.analyze(name, source, **options) for source in
               (frame, api.load_table(name, path), frame.to_dict(orient="records"))]
    first = {"acute": lambda r: r.questions[0].matchups, "per-turn": lambda r: r.designs[0].comparisons,
             "ssa": lambda r: r.models, "convai2": lambda r: r.likert}[name]
    for other in results[1:]:
        pd.testing.assert_frame_equal(first(results[0]), first(other), check_dtype=False)
    paths = api.write_outputs(name, results[1], tmp_path / "out", report=False)
    assert "run.json" in paths and "report.html" not in paths and all(p.exists() for p in paths.values())


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_dataframe_missing_columns_is_one_line_naming_them_all(name):
    frame = TABLES[name]()
    required = list(api.protocol(name).get("required"))
    with pytest.raises(UserError) as info:
        api.load_table(name, frame.drop(columns=required[:2]))
    message = str(info.value)
    assert "\n" not in message and all(repr(c) in message for c in required[:2]), message


def test_bad_values_in_a_dataframe_name_the_row_and_column():
    frame = TABLES["ssa"]().astype({"sensible": object})  # as a spreadsheet's column of words would be
    frame.loc[3, "sensible"] = "maybe"
    with pytest.raises(UserError, match=r"^row 4: field 'sensible' must be true or false, got 'maybe'"):
        api.load_table("ssa", frame)
    ratings = TABLES["convai2"]()
    ratings.loc[0, "score"] = float("inf")
    with pytest.raises(UserError, match=r"^row 1: field 'score' must be a whole number from 1 to 4"):
        api.analyze("convai2", ratings)


def test_the_acute_per_worker_cap_is_explicit():
    judgments = simulate_judgments({"a": 0.3, "b": -0.3}, 48, seed=0, workers=6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        capped = api.analyze("acute", judgments, bootstrap=0)
        chosen = api.analyze("acute", judgments, bootstrap=0, max_per_worker=8)
    assert len(caught) == 1 and "excluded 42 of 48 judgments" in str(caught[0].message)
    assert len(capped.kept) == 6 and len(chosen.kept) == 48 and chosen.config.cap_source == "max_per_worker"


def test_mistakes_in_calls_are_one_line():
    frame = TABLES["ssa"]()
    with pytest.raises(UserError, match="unknown protocol 'likert'"):
        api.load_table("likert", frame)
    with pytest.raises(UserError, match="either a source"):
        api.load_table("ssa", frame, task_name="t")
    with pytest.raises(UserError, match="unknown option bootstraps for the ssa analysis"):
        api.analyze("ssa", frame, bootstraps=10)
    with pytest.raises(UserError, match="has no rows"):
        api.load_table("ssa", frame.iloc[:0])
