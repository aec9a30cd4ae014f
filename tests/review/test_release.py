"""The release bundle: no original worker id in any byte of any file, stable pseudonyms with the
same salt, the salt kept out, e-mail addresses and phone numbers flagged (not changed), a datasheet."""
from __future__ import annotations

import json

import pytest

from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main
from review_helpers import add_unit, comparison, launched_run

WORKERS = ["A1B2C3D4E5F6G7", "A1B2C3D4E5F6G7X", "dave_sandbox"]  # an id inside another id, too


@pytest.fixture()
def run(tmp_path, monkeypatch):
    import mephisto.utils.dirs as dirs
    from mephisto.abstractions.databases.local_database import LocalMephistoDB

    data = tmp_path / "mephisto_data"
    data.mkdir()
    monkeypatch.setattr(dirs, "loaded_data_dir", str(data))
    db = LocalMephistoDB(database_path=str(data / "database.db"))
    task_id, requester_id, run_id = launched_run(db, "study", max_judgments_per_worker=20)
    for n, worker in enumerate(WORKERS):
        reasons = ["more engaging", f"I am {WORKERS[0]}, write me at jo.doe@example.org",
                   "call me on +1 415-555-0134 please"]
        add_unit(db, task_id, requester_id, run_id, worker,
                 [comparison(i, "smol", reason=reasons[n]) for i in range(4)], seconds=300 + 60 * n)
    return db, str(data / "database.db")


def every_byte(directory):
    return {path.name: path.read_bytes() for path in directory.rglob("*") if path.is_file()}


def test_the_bundle_holds_no_worker_id_anywhere(run, tmp_path, capsys):
    db, db_file = run
    bundle, salt = tmp_path / "bundle", tmp_path / "keep" / "study.salt"
    assert main(["release", "--task-name", "study", "--mephisto-db", db_file, "-o", str(bundle),
                 "--salt-file", str(salt)]) == 0
    out = capsys.readouterr().out
    assert f"salt generated in {salt}" in out and salt.is_file() and salt.stat().st_mode & 0o077 == 0
    files = every_byte(bundle)
    assert {"judgments.csv", "workers.csv", "pii_flags.json", "datasheet.json", "datasheet.md", "README.md"} <= set(files)
    import yaml

    card = yaml.safe_load((bundle / "README.md").read_text().split("---")[1])
    assert card["configs"][0] == {"config_name": "judgments", "data_files": "judgments.csv", "default": True}
    for name, data in files.items():
        for worker in WORKERS:
            assert worker.encode() not in data, f"{worker} in {name}"
        assert salt.read_bytes().strip() not in data
    import pandas as pd

    judgments = pd.read_csv(bundle / "judgments.csv")
    assert judgments["worker"].nunique() == 3 and judgments["worker"].str.match(r"^worker_[0-9a-f]{16}$").all()
    flags = json.loads((bundle / "pii_flags.json").read_text())
    assert {f["kind"] for f in flags} == {"email", "phone"} and len(flags) == 8
    assert "jo.doe@example.org" in (bundle / "judgments.csv").read_text()  # flagged, not changed
    sheet = json.loads((bundle / "datasheet.json").read_text())
    assert sheet["work"]["workers"] == 3 and sheet["work"]["judgments"] == 12 and sheet["pay"]["unit_pay"] == [0.5]
    assert sheet["package_version"] and "question_key: engaging" in sheet["asked"]
    assert sheet["configuration"][0]["blueprint"]["max_judgments_per_worker"] == 20

    # the same salt: the same pseudonyms in a later bundle
    assert main(["release", "--task-name", "study", "--mephisto-db", db_file, "-o", str(tmp_path / "again"),
                 "--salt-file", str(salt)]) == 0
    again = pd.read_csv(tmp_path / "again" / "judgments.csv")
    assert sorted(again["worker"].unique()) == sorted(judgments["worker"].unique())


def test_a_salt_inside_the_bundle_is_refused_and_nothing_is_written(run, tmp_path):
    db, _ = run
    from parlai_acute.mephisto_tasks.live.release import release

    with pytest.raises(UserError, match="inside the bundle"):
        release(db, "study", tmp_path / "bundle", tmp_path / "bundle" / "salt")
    assert not (tmp_path / "bundle").exists()


def test_the_scan_finds_addresses_and_numbers_not_dates():
    from parlai_acute.release.pii import scan

    assert scan("mail jo.doe@example.org or call (415) 555-0134") == [("email", "jo.doe@example.org"),
                                                                       ("phone", "(415) 555-0134")]
    assert scan("+44 20 7946 0958") == [("phone", "+44 20 7946 0958")]
    assert scan("on 2023-05-17, 17.05.2023 and 1999-2004 I judged 1200 pairs in 45 minutes") == []
