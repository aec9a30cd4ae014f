"""`parlai-acute judge ssa`: sensible then specific, the judge's labels in the SSA labels table, gold items scored."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from judge_fixtures import SCRIPTED, read_jsonl, summary_of
from parlai_acute.judges.parse import parse_reply
from parlai_acute.ssa.judge import SsaProtocol, speakers
from parlai_acute.ssa.items import read_items
from parlai_acute.scripts.main import main
from parlai_acute.ssa.labels import COLUMNS, read_labels

JUDGE = "judge:tests.judges.scripted_judge:ScriptedJudgeAgent"
# (item id, context, reply, model): the "ssa" scripted judge finds the last one nonsensical,
# and the generic "ok" / "I don't know" sensible but not specific
ITEMS = [
    ("c1:smart", ["Hi! What do you do for fun?"], "I love hiking in the hills near my town.", "smart"),
    ("c1:generic", ["Hi! What do you do for fun?"], "ok", "generic"),
    ("c2:smart", ["I baked bread.", "Nice, which kind?", "Sourdough, it took two days."],
     "Two days! Did the crust come out crunchy?", "smart"),
    ("c2:generic", ["I baked bread.", "Nice, which kind?", "Sourdough, it took two days."], "I don't know", "generic"),
    ("c3:generic", ["My cat is ill."], "Purple bananas sing loudly.", "generic"),
]


def write_items(path, items=ITEMS):
    with open(path, "w", encoding="utf-8") as fh:
        for item_id, context, reply, model in items:
            fh.write(json.dumps({"item_id": item_id, "context": context, "reply": reply, "model": model,
                                 "context_id": item_id.split(":")[0]}) + "\n")
    return str(path)


def run_judge(tmp_path, script, *extra, name="out", items=ITEMS):
    outdir = tmp_path / name
    code = main(["judge", "ssa", "--items", write_items(tmp_path / f"{name}.jsonl", items),
                 "--judge", f"{SCRIPTED} --script {script}", "--cache", str(tmp_path / "cache.sqlite"),
                 "--outdir", str(outdir), "--backoff", "0", *extra])
    assert code == 0
    return outdir


def test_prompts_show_the_context_and_ask_in_order(tmp_path):
    protocol = SsaProtocol()
    items = read_items(write_items(tmp_path / "i.jsonl"))
    assert speakers(["a", "b", "c"]) == ["A", "B", "A"] and speakers(["a"]) == ["A"]
    text = protocol.render(protocol.items(items)[2], (0,))
    assert "A: I baked bread.\nB: Nice, which kind?\nA: Sourdough" in text
    assert "Does the response make sense?" in text and "Two days!" in text
    specific = protocol.items(items, "specific")[0]
    assert specific.template.id == "ssa_specific@1" and "Is the response specific?" in protocol.render(specific, (0,))


def test_scripted_judge_labels_join_the_table_and_ssa_analyze_reads_them(tmp_path, capsys):
    outdir = run_judge(tmp_path, "ssa")
    out = capsys.readouterr().out
    assert "no position swap" in out
    assert "sensible: 5 asked, 5 answered (4 yes), 0 missing" in out
    assert "specific: 4 asked, 4 answered (2 yes)" in out and "WARNING" not in out  # the nonsensical reply is not asked about
    assert "onboarding: 3/3 gold items right (0 missing): passed" in out
    table = read_labels(outdir / "labels.csv")
    assert list(table.columns) == list(COLUMNS) and len(table) == 5
    assert set(table["worker"]) == {JUDGE} and set(table["source"]) == {"static"}
    by_item = table.set_index("item")
    assert by_item.loc["c1:smart", ["sensible", "specific"]].tolist() == [True, True]
    assert by_item.loc["c1:generic", ["sensible", "specific"]].tolist() == [True, False]
    assert by_item.loc["c2:generic", ["sensible", "specific"]].tolist() == [True, False]
    assert by_item.loc["c3:generic", ["sensible", "specific"]].tolist() == [False, False]
    assert by_item.loc["c2:smart", "context"] == "I baked bread.\nNice, which kind?\nSourdough, it took two days."
    assert by_item.loc["c2:smart", "context_id"] == "c2"
    summary = summary_of(outdir)
    assert summary["templates"] == ["ssa_sensible@1", "ssa_specific@1"]
    assert summary["judge_config"] and summary["seed"] == 0 and summary["settings"]["retries"] == 2
    records = read_jsonl(outdir / "items.jsonl")
    assert all(len(r["orders"]) == 1 for r in records)  # one reply, one order
    assert any("Purple bananas" in r["orders"][0]["attempts"][0]["prompt"] for r in records)
    assert main(["ssa", "analyze", "--labels", str(outdir / "labels.csv"), "--outdir", str(tmp_path / "analysis"),
                 "--bootstrap", "50", "--no-report"]) == 0
    models = {m["model"]: m for m in json.loads((tmp_path / "analysis" / "results.json").read_text())["models"]}
    assert models["smart"]["sensibleness"] == 1.0 and models["smart"]["specificity"] == 1.0
    assert models["generic"]["sensibleness"] == 2 / 3 and models["generic"]["specificity"] == 0.0
    # a rerun asks nothing again
    capsys.readouterr()
    run_judge(tmp_path, "ssa", name="out")
    assert "calls: 0 made, 12 from cache" in capsys.readouterr().out


def test_garbage_answers_are_missing_and_a_failing_judge_is_flagged(tmp_path, capsys):
    outdir = run_judge(tmp_path, "garbage", "--retries", "1")
    out = capsys.readouterr().out
    assert "sensible: 5 asked, 0 answered (0 yes), 5 missing (5 unparseable, 0 failed)" in out
    assert "specific: 0 asked" in out and "labels: 0 of 5 items" in out
    assert "onboarding: 0/3 gold items right (3 missing): FAILED" in out
    assert pd.read_csv(outdir / "labels.csv").empty
    records = read_jsonl(outdir / "items.jsonl")
    assert all(len(r["orders"][0]["attempts"]) == 2 and r["status"] == "missing" for r in records)
    outdir = run_judge(tmp_path, "first", name="one")  # "Answer: 1" is not yes or no: missing too
    assert summary_of(outdir)["labels_written"] == 0 and summary_of(outdir)["onboarding"]["passed"] is False


def test_always_yes_fails_gold_and_always_no_is_warned_about(tmp_path, capsys):
    outdir = run_judge(tmp_path, "yes", name="yes")  # calls nonsense sensible
    out = capsys.readouterr().out
    assert "onboarding: 0/3 gold items right (0 missing): FAILED" in out
    assert "WARNING: the judge answered yes to every sensible question" in out
    assert read_labels(outdir / "labels.csv")["specific"].all()
    outdir = run_judge(tmp_path, "no", name="no")  # the gold items are all nonsense: it passes them
    out = capsys.readouterr().out
    assert "onboarding: 3/3 gold items right (0 missing): passed" in out
    assert "WARNING: the judge answered no to every sensible question" in out
    assert summary_of(outdir)["warning"].startswith("the judge answered no")
    assert "specific: 0 asked" in out and not read_labels(outdir / "labels.csv")["sensible"].any()


def test_bad_arguments_are_one_line_errors(tmp_path, capsys):
    path = write_items(tmp_path / "i.jsonl")
    with pytest.raises(SystemExit):  # one reply per item: nothing to swap, so no --orders / --inconsistent
        main(["judge", "ssa", "--items", path, "--outdir", str(tmp_path / "o"), "--inconsistent", "tie"])
    assert "unrecognized arguments: --inconsistent tie" in capsys.readouterr().err
    assert main(["judge", "ssa", "--items", path, "--outdir", str(tmp_path / "o"),
                 "--sensible-template", "perturn_sm@1"]) == 2
    assert "not an SSA template" in capsys.readouterr().err


def test_embedded_smollm2_judge(tmp_path, capsys, embedded_judge):
    """A real (weak) judge on two items; whatever it says is parsed strictly or recorded missing."""
    outdir = tmp_path / "real"
    code = main(["judge", "ssa", "--items", write_items(tmp_path / "real.jsonl", ITEMS[:2]), "--no-onboarding",
                 "--judge", "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 16", "--retries", "0", "--concurrency", "2", "--no-cache",
                 "--outdir", str(outdir)])
    assert code == 0
    out = capsys.readouterr().out
    summary = summary_of(outdir)
    asked = summary["answers"]["sensible"]
    assert asked["items"] == 2 and asked["consistent"] + asked["missing"] == 2
    table = pd.read_csv(outdir / "labels.csv")
    assert len(table) == summary["labels_written"] <= 2 and f"labels: {len(table)} of 2 items" in out
    for record in read_jsonl(outdir / "items.jsonl"):
        attempt = record["orders"][0]["attempts"][0]
        assert "Does the response make sense?" in attempt["prompt"] or "Is the response specific?" in attempt["prompt"]
        parsed = parse_reply(attempt["text"], "yes_no", ["yes", "no"], False)
        if record["status"] == "consistent":
            assert parsed is not None and parsed.value == record["verdict"]
        else:  # e.g. "The answer to the question is yes." -- prose, never read as an answer
            assert parsed is None and record["verdict"] is None
    assert summary["costs"]["calls"] >= 2 and summary["costs"]["prompt_tokens"] > 100 and summary["judge_config"]
    print(out)


def human_labels(path, items=ITEMS, dissent=("c1:smart",)):
    """Three scripted people label every item as the "ssa" scripted judge would, except that w3
    calls the ``dissent`` items not specific."""
    rows = []
    for item_id, context, reply, model in items:
        sensible = "Purple" not in reply
        specific = sensible and reply not in ("ok", "I don't know")
        for worker in ("w1", "w2", "w3"):
            rows.append({"item": item_id, "model": model, "worker": worker, "sensible": sensible,
                         "specific": specific and not (worker == "w3" and item_id in dissent),
                         "context_id": item_id.split(":")[0], "context": "\n".join(context), "reply": reply})
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_agreement_with_people_on_sensible_and_specific(tmp_path, capsys):
    outdir = run_judge(tmp_path, "ssa")
    human = human_labels(tmp_path / "human.csv")
    capsys.readouterr()
    assert main(["judge", "agreement", "--protocol", "ssa", "--people", human, "--judge-table", str(outdir / "labels.csv"),
                 "--outdir", str(tmp_path / "agree"), "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    s = json.loads((tmp_path / "agree" / "agreement.json").read_text())
    sensible, specific = s["questions"]
    assert sensible["question"] == "sensible" and specific["question"] == "specific"
    # the judge agrees with everyone on sensible; on specific it disagrees with w3 on one item of five
    assert sensible["judge_vs_human"]["pairs"] == 15 and sensible["judge_vs_human"]["percent_agreement"] == 1.0
    assert specific["judge_vs_human"]["percent_agreement"] == 14 / 15
    hh = specific["on_items_with_two_or_more_humans"]["human_vs_human"]
    assert hh["pairs"] == 30 and hh["percent_agreement"] == 26 / 30  # c1:smart: 4 of its 6 ordered pairs disagree
    assert s["judge_vs_human"]["percent_agreement"] == 14 / 15  # both answers together
    assert "sensible: judge vs human: 100.0%" in out and "(ceiling)" in out
    scores = pd.read_csv(tmp_path / "agree" / "scores.csv").set_index("model")
    assert scores.loc["smart", "ssa_judge"] == 1.0 and scores.loc["smart", "ssa_human"] == pytest.approx((1 + 5 / 6) / 2)
    html = (tmp_path / "agree" / "report.html").read_text()
    assert "specific: human vs human" in html and "ssa_specific@1" in html


def test_reads_the_items_ssa_generate_writes(tmp_path, capsys):
    """`ssa generate` names the id ``item``; the judge (and the labelling task) read it."""
    from parlai_acute.ssa.generate import packaged_contexts
    from parlai_acute.ssa.items import human_items, write_items as write_generated

    path = tmp_path / "generated.jsonl"
    write_generated(path, human_items(packaged_contexts(2)))
    generated = [json.loads(line) for line in path.read_text().splitlines()]
    assert "item" in generated[0] and "item_id" not in generated[0]
    assert main(["judge", "ssa", "--items", str(path), "--judge", f"{SCRIPTED} --script ssa", "--no-onboarding",
                 "--no-cache", "--outdir", str(tmp_path / "o")]) == 0
    table = read_labels(tmp_path / "o" / "labels.csv")
    assert sorted(table["item"]) == sorted(g["item"] for g in generated)
    assert sorted(table["context_id"]) == sorted(g["context_id"] for g in generated)
