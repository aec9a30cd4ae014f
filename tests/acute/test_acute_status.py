"""``parlai-acute status --task-name``: a live ACUTE run read from a real Mephisto database."""
from parlai_acute.scripts.main import main
from test_analyze_inputs import add_unit, comparison, launched_run, mephisto_db  # noqa: F401 (fixture)


def test_status_of_a_stored_run_counts_workers_and_decides_nothing_yet(tmp_path, capsys, mephisto_db):  # noqa: F811
    task_id, requester_id, run = launched_run(mephisto_db, "live", pairings_file=str(tmp_path / "p.jsonl"))
    for worker, choices in (("w1", ["smol", "smol", "generic"]), ("w2", ["smol", "smol", "smol"])):
        add_unit(mephisto_db, task_id, requester_id, run, worker, [comparison(i, c) for i, c in enumerate(choices)])
    db_file = str(tmp_path / "mephisto_data" / "database.db")
    assert main(["status", "--task-name", "live", "--mephisto-db", db_file]) == 0
    out = capsys.readouterr().out
    assert "acute: 6 rows, 1 comparison(s)" in out
    # the protocol's cap (one judgment per worker and model pair, the run set none) keeps 2 of the 6, as
    # `acute analyze` of the same run does; B's win rate over A, named "smol vs generic"
    assert "smol vs generic" in out and "2 workers, 2 judgments" in out and "undecided" in out
    assert main(["acute", "analyze", "--task-name", "live", "--mephisto-db", db_file, "--no-report",
                 "-o", str(tmp_path / "out")]) == 0
    assert "smol vs generic: 100.0% (2/2)" in capsys.readouterr().out
    assert main(["status", "--task-name", "nosuch", "--mephisto-db", db_file]) != 0
    assert "no Mephisto task named" in capsys.readouterr().err
