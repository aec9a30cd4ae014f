"""ConvAI2 ratings table and the `convai2 analyze` command."""
import json

import pytest

from parlai_acute.convai2.ratings import ratings_table, read_ratings, write_ratings
from parlai_acute.convai2.simulate import simulate_ratings
from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main


def row(**kw):
    base = {"dialogue": "d1", "worker": "w1", "model": "m", "question": "engagingness", "score": 3}
    base.update(kw)
    return base


@pytest.mark.parametrize("rows,message", [
    ([row(score="great")], "row 1: field 'score' must be a number"),
    ([row(), row()], "row 2: dialogue 'd1' answers question 'engagingness' twice"),
    ([row(), row(question="fluency", model="other")], "row 2: field 'model' is 'other'"),
    ([row(persona_choice_correct="yes"), row(question="fluency", persona_choice_correct="no")],
     "row 2: field 'persona_choice_correct' differs"),
    ([row(worker="")], "row 1: field 'worker' is empty"),
])
def test_bad_rows(rows, message):
    with pytest.raises(UserError) as info:
        ratings_table(rows)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_cli_writes_tables_json_run_and_report(tmp_path, capsys):
    df = simulate_ratings({"a": 3.0, "b": 2.5}, annotators=20, per_annotator=4, persona_rate={"a": 0.9, "b": 0.6},
                          seed=1)
    path = tmp_path / "ratings.csv"
    write_ratings(path, df)
    assert read_ratings(path)["persona_choice_correct"].notna().all()
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    out = tmp_path / "out"
    assert main(["convai2", "analyze", "--ratings", str(bom), "--outdir", str(out), "--bootstrap", "100",
                 "--gibbs", "400"]) == 0
    printed = capsys.readouterr().out
    assert "Gibbs check" in printed and "Clopper-Pearson" in printed
    results = json.loads((out / "results.json").read_text())
    assert {r["model"] for r in results["likert"]} == {"a", "b"}
    assert json.loads((out / "run.json").read_text())["version"]
    for name in ("likert.csv", "persona.csv", "annotators.csv", "report.html"):
        assert (out / name).is_file()
    empty = tmp_path / "empty.csv"
    empty.write_text("dialogue,worker,model,question,score\n")
    assert main(["convai2", "analyze", "--ratings", str(empty), "--outdir", str(out)]) == 2
    assert "is empty" in capsys.readouterr().err
