"""Multi-reference collection analysis against sacrebleu called directly and n-grams counted by hand."""
import json

import numpy as np
import pytest
import sacrebleu

from parlai_acute.errors import UserError
from parlai_acute import api
from parlai_acute.multiref.analysis import MultirefConfig, analyze, contexts_by_mode
from parlai_acute.multiref.references import collection_records, references_table
from parlai_acute.scripts.main import main

DIALOGUES = [
    [{"text": "Do you like hiking?", "responses": ["Yes, I love hiking in the mountains.",
                                                    "Not really, I prefer swimming.",
                                                    "Sometimes, when the weather is nice.",
                                                    "Yes, I love hiking in the hills."]},
     {"text": "Yes, I hike every weekend.", "responses": []}, {"text": "Nice!"}],
    {"dialogue": [{"text": "What did you eat today?"},
                  {"text": "Just some toast.", "responses": ["That sounds light.", "Only toast? Are you hungry?",
                                                             "Toast is fine.", "Did you have butter on it?"]},
                  {"text": "Only toast, I was in a hurry."}]},
]
SAME = [[{"text": "Hi there", "responses": ["Hello friend", "Hello friend", "Hello friend", "Hello friend"]},
         {"text": "Hello friend"}]]


def write(path, dialogues):
    path.write_text("".join(json.dumps(d) + "\n" for d in dialogues))
    return path


def sentence(hyp, refs):
    return sacrebleu.sentence_bleu(hyp, refs, smooth_method="exp", lowercase=True, tokenize="13a").score / 100


def test_statistics_match_sacrebleu_and_hand_counts(tmp_path):
    records = collection_records(write(tmp_path / "a.jsonl", DIALOGUES), "4R1W")
    contexts = contexts_by_mode(references_table(records))["4R1W"]
    assert [c["original"] for c in contexts] == ["Yes, I hike every weekend.", "Only toast, I was in a hurry."]
    table = references_table(records + collection_records(write(tmp_path / "s.jsonl", SAME), "same"))
    result = analyze(table, MultirefConfig(bootstrap=200))
    table = result.contexts[result.contexts["mode"] == "4R1W"].set_index("context_id")
    for c in contexts:
        row = table.loc[c["context_id"]]
        replies = c["collected"]
        gt = np.mean([sentence(r, [c["original"]]) for r in replies])
        assert row["gt_bleu4"] == pytest.approx(gt, abs=1e-9)
        self_bleu = np.mean([sentence(r, replies[:i] + replies[i + 1:]) for i, r in enumerate(replies)])
        assert row["self_bleu4"] == pytest.approx(self_bleu, abs=1e-9)
    first = table.loc[contexts[0]["context_id"]]
    words = {w.strip(",.?").lower() for r in contexts[0]["collected"] for w in r.split()}
    assert first["unique1_collected"] == len(words)
    assert first["unique1_original"] == 5
    assert first["unique1_new"] == len(words - {"yes", "i", "hike", "every", "weekend"})
    modes = result.modes.set_index("mode")
    assert modes.at["same", "self_bleu4"] == pytest.approx(1.0) and modes.at["same", "gt_bleu4"] == pytest.approx(1.0)
    assert modes.at["4R1W", "self_bleu4"] < 0.5
    assert "smooth:exp" in result.signature


def test_cli_and_errors(tmp_path, capsys):
    good = write(tmp_path / "a.jsonl", DIALOGUES)
    assert main(["multiref", "analyze", "--collection", f"4R1W={good}", "--collection", f"1R4W={good}",
                 "--outdir", str(tmp_path / "out"), "--bootstrap", "50"]) == 0
    assert "4R1W: 2 contexts" in capsys.readouterr().out
    assert json.loads((tmp_path / "out" / "run.json").read_text())["config"]["modes"] == ["4R1W", "1R4W"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps([{"text": "hi", "responses": "hello"}, {"text": "x"}]) + "\n")
    with pytest.raises(UserError, match=r"bad.jsonl:1: turn 1's 'responses' must be a list"):
        collection_records(bad, "4R1W")
    none = write(tmp_path / "none.jsonl", [[{"text": "hi"}, {"text": "ho"}]])
    assert main(["multiref", "analyze", "--collection", f"4R1W={none}", "--outdir", str(tmp_path / "o")]) == 2
    assert "nothing to analyse" in capsys.readouterr().err


def test_the_references_table_is_a_protocol_of_the_python_api(tmp_path, capsys):
    """A collection as a table (file with a byte-order mark, DataFrame, records) gives one analysis; the
    command reads the table file too; a context whose rows disagree on its original is named."""
    records = collection_records(write(tmp_path / "a.jsonl", DIALOGUES), "4R1W")
    path = tmp_path / "references.csv"
    assert api.write_table("multiref", records, path) == 8
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    from_file = api.analyze("multiref", api.load_table("multiref", path), bootstrap=50, seed=1)
    from_records = api.analyze("multiref", records, bootstrap=50, seed=1)
    import pandas as pd
    pd.testing.assert_frame_equal(from_file.modes, from_records.modes)
    assert from_file.modes.at[0, "contexts"] == 2 and from_file.config["source"] == str(path)
    paths = api.write_outputs("multiref", from_file, tmp_path / "out", report=False)
    assert set(paths) == {"summary.csv", "contexts.csv", "modes.csv", "results.json", "run.json"}
    assert main(["multiref", "analyze", "--references", str(path), "--outdir", str(tmp_path / "cli"),
                 "--bootstrap", "50", "--no-report"]) == 0
    assert "4R1W: 2 contexts" in capsys.readouterr().out
    bad = [dict(records[0]), dict(records[1], original="something else")]
    with pytest.raises(UserError, match=r"row 2: field 'original' differs .* one context has one original"):
        api.load_table("multiref", bad)
    with pytest.raises(UserError, match="missing column 'reply'"):
        api.load_table("multiref", pd.DataFrame(records).drop(columns="reply"))
    assert main(["multiref", "analyze", "--references", str(path), "--collection", f"4R1W={path}",
                 "--outdir", str(tmp_path / "x")]) == 2
