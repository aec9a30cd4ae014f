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
    ([row(score="great")], "row 1: field 'score' must be a whole number from 1 to 4, got 'great'"),
    ([row(score="nan")], "row 1: field 'score' must be a whole number from 1 to 4"),
    ([row(score="inf")], "row 1: field 'score' must be a whole number from 1 to 4"),
    ([row(), row(question="fluency", score=7)], "row 2: field 'score' must be a whole number from 1 to 4, got 7"),
    ([row(score=0)], "row 1: field 'score' must be a whole number from 1 to 4, got 0"),
    ([row(score=-3)], "row 1: field 'score' must be a whole number from 1 to 4, got -3"),
    ([row(score=2.5)], "row 1: field 'score' must be a whole number from 1 to 4, got 2.5"),
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
                          seed=1, rounded=True)
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
    assert json.loads((out / "run.json").read_text())["parlai_acute_version"]
    for name in ("summary.csv", "models.csv", "pairs.csv", "persona.csv", "workers.csv", "report.html"):
        assert (out / name).is_file()
    # the report ends with the paragraph a paper's methods section takes: its unit, tests and intervals
    page = (out / "report.html").read_text()
    assert "We analysed 80 end-of-chat Likert ratings of 2 models by 20 workers" in page
    assert "sign-flip test of the worker totals" in page and "Kulikov et al. (2018)" in page
    empty = tmp_path / "empty.csv"
    empty.write_text("dialogue,worker,model,question,score\n")
    assert main(["convai2", "analyze", "--ratings", str(empty), "--outdir", str(out)]) == 2
    assert "is empty" in capsys.readouterr().err


def test_the_study_scale_is_honoured_and_out_of_scale_scores_stop_the_cli(tmp_path, capsys):
    import pandas as pd

    path = tmp_path / "ratings.csv"
    with pytest.raises(UserError, match="row 1: field 'score' must be a whole number from 1 to 4, got 5"):
        write_ratings(path, [row(score=5)])  # records are validated before they are written
    write_ratings(path, pd.DataFrame([row(score=5), row(dialogue="d2", worker="w2", model="n", score=1)]))
    assert ratings_table([row(score=5)], scale=(1, 5))["score"].tolist() == [5.0]
    code = main(["convai2", "analyze", "--ratings", str(path), "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"{path}:2: field 'score' must be a whole number from 1 to 4" in err
    assert not (tmp_path / "out").exists()
    assert main(["convai2", "analyze", "--ratings", str(path), "--scale", "1", "5", "-o", str(tmp_path / "out"),
                 "--bootstrap", "0", "--no-report"]) == 0
