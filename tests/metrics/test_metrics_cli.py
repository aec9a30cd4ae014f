"""``parlai-acute metrics score|rank|logs|correlate`` end to end, in process, on fixtures written here."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import parlai_acute
from parlai_acute.scripts.main import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def replies_file(dailydialog_file, tmp_path):
    path = tmp_path / "replies.jsonl"
    rows = [{"id": "1:0", "reply": "I'm fine thanks, and you?"}, {"id": "1:1", "reply": "no, who won the game?"},
            {"id": "2:0", "reply": "Let's eat Italian food."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_score_writes_tables_and_signatures(capsys, dailydialog_file, replies_file, tmp_path):
    out = tmp_path / "out"
    code, stdout, _ = run_cli(capsys, "metrics", "score", "--data", str(dailydialog_file), "--replies",
                              str(replies_file), "--bootstrap", "50", "--bleu-smoothing", "floor", "-o", str(out))
    assert code == 0 and "3 contexts, 9 references" in stdout and "single-ref" in stdout
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 16 and (summary["multi"] >= summary["single"] - 1e-12).all()
    assert summary["signature"].str.contains("nrefs:2-4").all()
    run = json.loads((out / "run.json").read_text())
    assert run["version"] == parlai_acute.__version__ and run["seed"] == 0
    assert run["signatures"]["bleu"]["smooth"] == "floor" and run["signatures"]["bleu"]["sacrebleu"]
    assert "wordnet" in run["signatures"]["meteor"] and run["signatures"]["embedding"]["dim"] == 384
    assert (out / "tables" / "summary.md").read_text().count("\n|") >= 16
    assert "\\begin{tabular}" in (out / "tables" / "summary.tex").read_text()
    page = (out / "report.html").read_text()
    assert "bootstrap interval over contexts" in page and "<svg" in page and (out / "figures" / "scores.pdf").exists()
    per_item = pd.read_csv(out / "per_item.csv")
    assert list(per_item["id"]) == ["1:0", "1:1", "2:0"] and "emb_greedy_multi" in per_item
    assert json.loads((out / "diversity.json").read_text())["distinct1_across"] > 0


def test_score_generated_by_the_toy_baseline_from_a_csv(capsys, tmp_path):
    data = tmp_path / "set.csv"
    data.write_text("context,response,references\nhi how are you?,i am fine,\"[\"\"good and you\"\"]\"\n"
                    "what do you do?,i am a teacher,\nwhere are you from?,i am from paris,\n", encoding="utf-8")
    code, stdout, _ = run_cli(capsys, "metrics", "score", "--data", str(data), "--metrics", "f1", "--model",
                              "parlai_acute.agents.constant_reply:ConstantReplyAgent", "--save-replies",
                              str(tmp_path / "toy.jsonl"), "-o", str(tmp_path / "toy"))
    assert code == 0
    saved = [json.loads(line) for line in (tmp_path / "toy.jsonl").read_text().splitlines()]
    assert {r["reply"] for r in saved} == {"i am you to do and your is like"}
    f1 = pd.read_csv(tmp_path / "toy" / "per_item.csv")["f1_single"]
    assert (f1 > 0).all()  # "i am" overlaps every reference: the toy baseline's trick


@pytest.mark.parametrize("argv, message", [
    (["--data", "missing.jsonl", "--replies", "r.jsonl"], "test set missing.jsonl does not exist"),
    (["--data", "DD", "--replies", "r.jsonl", "--metrics", "f1,bleurt"], "unknown metric 'bleurt'"),
    (["--data", "DD"], "no replies"),
    (["--data", "DD", "--replies", "REPLIES", "--bleu-tokenize", "nonsense"], "--bleu-tokenize 'nonsense'"),
])
def test_score_mistakes_are_one_line(capsys, dailydialog_file, replies_file, tmp_path, argv, message):
    argv = [str(dailydialog_file) if a == "DD" else str(replies_file) if a == "REPLIES" else a for a in argv]
    code, _, err = run_cli(capsys, "metrics", "score", *argv, "-o", str(tmp_path / "o"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o" / "summary.csv").exists()


def test_rank_with_a_local_transformers_model(capsys, dailydialog_file, tiny_gpt2, tmp_path):
    model = f"-m parlai_acute.agents.hf_transformers:HfTransformersAgent --hf-model {tiny_gpt2}"
    code, stdout, _ = run_cli(capsys, "metrics", "rank", "--data", str(dailydialog_file), f"--model={model}",
                              "--candidates", "3", "--bootstrap", "50", "-o", str(tmp_path / "rank"))
    assert code == 0 and "perplexity" in stdout and "hits@1/3+parrot" in stdout
    run = json.loads((tmp_path / "rank" / "run.json").read_text())
    assert run["summary"]["contexts"] == 3 and run["signatures"]["tokenisation"]["model"] == tiny_gpt2
    assert "chance" in (tmp_path / "rank" / "report.html").read_text()
    code, _, err = run_cli(capsys, "metrics", "rank", "--data", str(dailydialog_file), "--model",
                           "parlai_acute.agents.constant_reply:ConstantReplyAgent", "-o", str(tmp_path / "r2"))
    assert code == 2 and "cannot score a given reply" in err


def test_logs_table(capsys, tmp_path):
    log = tmp_path / "chat.jsonl"
    log.write_text(json.dumps({"dialog": [[{"id": "localHuman", "text": "hi! how are you?"},
                                           {"id": "<b>Bot</b>", "text": "Fine. What about you?"}]]}) + "\n",
                   encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hi how are you\nfine thanks\n", encoding="utf-8")
    code, stdout, _ = run_cli(capsys, "metrics", "logs", f"me={log}", "--reference-corpus", str(corpus),
                              "-o", str(tmp_path / "logs"))
    assert code == 0 and "human" in stdout and "model" in stdout
    table = pd.read_csv(tmp_path / "logs" / "logs_table.csv").set_index("role")
    assert table.loc["model", "question_word"] == 0 and table.loc["model", "question_mark"] == 1
    assert table.loc["human", "freq1h"] == 1.0  # every word is rare in a two-line corpus
    assert json.loads((tmp_path / "logs" / "run.json").read_text())["config"]["reference_corpus"] == str(corpus)
    page = (tmp_path / "logs" / "report.html").read_text()
    assert "&lt;b&gt;Bot&lt;/b&gt;" in page and "<b>Bot</b>" not in page  # names are text, never markup
    assert "descriptive, no interval" in page and (tmp_path / "logs" / "tables" / "logs_table.tex").exists()
    code, _, err = run_cli(capsys, "metrics", "logs", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "x"))
    assert code == 2 and "does not exist" in err


def test_correlate_ratings_and_perplexity(capsys, tmp_path):
    ratings = tmp_path / "ratings.csv"
    rows = [("Hi how are you?", "I'm fine thanks and you?", 5, "a", "I'm fine, thank you.", '["Good, you?"]'),
            ("Hi how are you?", "the cat sat on the mat", 1, "b", "I'm fine, thank you.", ""),
            ("Where do you live?", "I live in Paris", 4, "a", "I live in London.", '["In Paris, France."]'),
            ("Where do you live?", "bananas are yellow", 1, "b", "I live in London.", ""),
            ("What is your job?", "I am a teacher", 5, "c", "I work as a nurse.", '["I am a teacher at a school."]'),
            ("What is your job?", "ok", 2, "c", "I work as a nurse.", "")]
    pd.DataFrame(rows, columns=["context", "response", "score", "system", "reference", "references"]).to_csv(
        ratings, index=False)
    systems = tmp_path / "systems.csv"
    systems.write_text("system,perplexity,ssa\na,10,0.7\nb,14,0.6\nc,20,0.45\nd,25,0.4\n", encoding="utf-8")
    code, stdout, _ = run_cli(capsys, "metrics", "correlate", "--ratings", str(ratings), "--rating-column", "score",
                              "--model-column", "system", "--metrics", "f1,rouge", "--bootstrap", "100",
                              "--system-scores", str(systems), "-o", str(tmp_path / "corr"))
    assert code == 0, _
    assert "per response (6 responses)" in stdout and "R^2" in stdout
    table = pd.read_csv(tmp_path / "corr" / "correlations_response.csv").set_index("metric")
    assert table.loc["f1", "pearson_multi"] > 0
    assert (tmp_path / "corr" / "tables" / "perplexity_vs_human.tex").exists()
    page = (tmp_path / "corr" / "report.html").read_text()
    assert "Spearman correlation" in page
    # the paragraph a paper's methods section takes: the levels, the correlations, their intervals and units
    assert "We correlated the scores of" in page and "percentile bootstrap intervals over responses" in page
    code, _, err = run_cli(capsys, "metrics", "correlate", "--ratings", str(ratings), "-o", str(tmp_path / "c2"))
    assert code == 2 and "missing column 'rating'" in err
