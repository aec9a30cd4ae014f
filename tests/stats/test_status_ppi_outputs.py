"""``status`` and ``ppi`` write a results directory like every analysis (``-o DIR``): results.json,
run.json (configuration, version), the rows as CSV and report.html through the one report layer;
``--no-report`` leaves the page out, ``--json`` still writes the result alone. No NaN anywhere."""
import json

import pandas as pd
import pytest

from parlai_acute.acute.judgments import write_judgments
from parlai_acute.scripts.main import main
from parlai_acute.acute.simulate import simulate_judgments


@pytest.fixture
def judgments(tmp_path):
    path = tmp_path / "judgments.csv"
    write_judgments(path, simulate_judgments({"a": 0.0, "b": 0.8, "c": 0.0}, 300, workers=30, seed=1))
    return path


def no_nan(*paths) -> bool:
    return all("nan" not in p.read_text(encoding="utf-8").lower().replace("nano", "") for p in paths)


def test_status_writes_results_run_rows_and_a_report(tmp_path, judgments, capsys):
    out = tmp_path / "status"
    assert main(["status", "--table", str(judgments), "--top-k", "1", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"to {out}" in printed
    rows = pd.read_csv(out / "status.csv")
    results = json.loads((out / "results.json").read_text())
    assert len(rows) == len(results["rows"]) == 3 and sorted(rows["comparison"]) == ["a vs b", "a vs c", "b vs c"]
    assert results["top_k"]["k"] == 1 and results["source"] == str(judgments)
    run = json.loads((out / "run.json").read_text())
    assert run["command"] == "status" and run["version"] and run["config"]["alpha"] == 0.05
    assert run["config"]["top_k"] == 1 and "seed" in run
    page = (out / "report.html").read_text(encoding="utf-8")
    for comparison, measure in zip(rows["comparison"], rows["measure"]):
        assert comparison in page and measure in page
    assert "Top 1" in page and "confidence sequence" in page
    assert no_nan(out / "status.csv", out / "results.json", out / "report.html")


def test_status_without_a_report_and_json_alone(tmp_path, judgments, capsys):
    out = tmp_path / "status"
    assert main(["status", "--table", str(judgments), "--output-dir", str(out), "--no-report",
                 "--json", str(tmp_path / "s.json")]) == 0
    assert {p.name for p in out.iterdir()} == {"results.json", "run.json", "status.csv"}
    alone, written = (json.loads(p.read_text())["rows"] for p in (tmp_path / "s.json", out / "results.json"))
    assert alone == written
    assert main(["status", "--table", str(judgments)]) == 0  # print only: nothing written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["judgments.csv", "s.json", "status"]


def test_status_refuses_an_output_dir_that_is_a_file_before_reading(tmp_path, judgments, capsys):
    (tmp_path / "taken").write_text("x")
    assert main(["status", "--table", str(judgments), "-o", str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--output-dir" in err and "is not a directory" in err


@pytest.fixture
def ppi_tables(tmp_path):
    people = simulate_judgments({"a": 0.5, "b": 0.0, "c": 0.0}, 2000, seed=0, workers=100)
    judged = people.drop_duplicates("pair_id").assign(worker="judge")  # agrees with the first person asked
    write_judgments(tmp_path / "people.csv", people[people["pair_id"].isin(judged["pair_id"].iloc[::5])])
    write_judgments(tmp_path / "judge.csv", judged)
    return tmp_path / "people.csv", tmp_path / "judge.csv"


def test_ppi_writes_results_run_rows_ranking_and_a_report(tmp_path, ppi_tables, capsys):
    people, judge = ppi_tables
    out = tmp_path / "ppi"
    assert main(["ppi", "--people", str(people), "--judge-table", str(judge), "--confidence", "0.9",
                 "-o", str(out), "--json", str(tmp_path / "ppi.json")]) == 0
    printed = capsys.readouterr().out
    assert "intervals 90%" in printed and f"to {out}" in printed
    rows = pd.read_csv(out / "ppi.csv")
    results = json.loads((out / "results.json").read_text())
    assert results["confidence"] == 0.9 and len(rows) == len(results["rows"]) == 3
    assert results == json.loads((tmp_path / "ppi.json").read_text())
    ranking = pd.read_csv(out / "ranking.csv")
    assert sorted(ranking["model"]) == ["a", "b", "c"]
    run = json.loads((out / "run.json").read_text())
    assert run["command"] == "ppi" and run["config"]["confidence"] == 0.9 and run["version"]
    page = (out / "report.html").read_text(encoding="utf-8")
    for group in rows["group"]:
        assert group in page
    assert "Bradley-Terry" in page and "90%" in page
    assert no_nan(out / "ppi.csv", out / "ranking.csv", out / "results.json", out / "report.html")


def test_ppi_old_alpha_is_read_as_the_interval_level_with_a_note(tmp_path, ppi_tables, capsys):
    people, judge = ppi_tables
    assert main(["ppi", "--people", str(people), "--judge-table", str(judge), "--alpha", "0.1",
                 "--json", str(tmp_path / "old.json")]) == 0
    captured = capsys.readouterr()
    assert "--alpha is now --confidence" in captured.err and "--alpha 0.1 was read as --confidence 0.9" in captured.err
    assert "intervals 90%" in captured.out
    assert json.loads((tmp_path / "old.json").read_text())["confidence"] == pytest.approx(0.9)
    assert main(["ppi", "--people", str(people), "--judge-table", str(judge), "--confidence", "0.9",
                 "--json", str(tmp_path / "new.json")]) == 0
    old, new = (json.loads((tmp_path / f"{n}.json").read_text())["rows"] for n in ("old", "new"))
    assert old == new


def test_ppi_refuses_a_bad_plan_and_level_in_one_line(tmp_path, ppi_tables, capsys):
    people, judge = ppi_tables
    for argv, message in ((["--plan", "0"], "--plan must be a positive difference"),
                          (["--confidence", "1.5"], "--confidence must be between 0 and 1")):
        assert main(["ppi", "--people", str(people), "--judge-table", str(judge), *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err
