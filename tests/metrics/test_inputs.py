"""Test-set readers and reply files: the shapes they produce and their one-line errors."""
from __future__ import annotations

import json

import pytest

from parlai_acute.errors import UserError
from parlai_acute.metrics.inputs import load_items, read_csv, read_dailydialog, read_teacher
from parlai_acute.metrics.replies import generate_replies, read_replies


def test_dailydialog_layout(dailydialog_file):
    items = {it.id: it for it in read_dailydialog(dailydialog_file)}
    assert list(items) == ["1:0", "1:1", "2:0"]  # last turns without responses give no item
    assert items["1:0"].context == ["Hi, how are you doing today?"]
    assert items["1:0"].references == ["I'm great, thanks. Did you see the game last night?",
                                      "I'm fine, thanks. And you?", "Pretty good! You?"]
    assert items["1:1"].context[-1].startswith("I'm great") and len(items["1:1"].references) == 2
    assert items["2:0"].references[0] == "What about sushi?" and len(items["2:0"].references) == 4


def test_dailydialog_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('[{"text": "hi", "responses": ["a"]}]\n{"dialogue": [{"txt": "x"}]}\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.jsonl:2: a dialogue must be a list of turns"):
        read_dailydialog(bad)
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"bad.jsonl:1: not valid JSON"):
        read_dailydialog(bad)
    with pytest.raises(UserError, match="does not exist"):
        read_dailydialog(tmp_path / "missing.jsonl")


def test_csv_with_json_and_tab_references(tmp_path):
    path = tmp_path / "set.csv"
    path.write_text('id,context,response,references,reply\n'
                    'a,"hi\nhow are you?",fine thanks,"[""good"", ""ok""]",i am fine\n'
                    'b,where to? __eou__ the park,sounds good,"great\tsure",fine\n'
                    'c,hello,hey,,\n', encoding="utf-8")
    items = read_csv(path)
    assert [it.id for it in items] == ["a", "b", "c"]
    assert items[0].context == ["hi", "how are you?"] and items[0].references == ["fine thanks", "good", "ok"]
    assert items[1].context == ["where to?", "the park"] and items[1].references == ["sounds good", "great", "sure"]
    assert items[2].references == ["hey"] and items[0].extra["reply"] == "i am fine"
    with pytest.raises(UserError, match=r"set.csv:1: missing column 'answer'"):
        read_csv(path, response="answer")
    with pytest.raises(UserError, match="unknown format"):
        load_items(str(tmp_path / "x.txt"))
    with pytest.raises(UserError, match="exactly one of data=FILE"):
        load_items(None, None)


def test_replies_files(dailydialog_file, tmp_path):
    items = read_dailydialog(dailydialog_file)
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({"id": it.id, "reply": f"reply {it.id}"}) + "\n" for it in items)
                    + json.dumps({"id": "2:0", "replies": ["second", "third"]}) + "\n", encoding="utf-8")
    replies = read_replies(path, items)
    assert replies["1:0"] == ["reply 1:0"] and replies["2:0"] == ["reply 2:0", "second", "third"]
    text = tmp_path / "r.txt"
    text.write_text("a\nb\nc\n", encoding="utf-8")
    assert read_replies(text, items)["1:1"] == ["b"]
    text.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(UserError, match="has 2 lines but the test set has 3 contexts"):
        read_replies(text, items)
    path.write_text(json.dumps({"id": "1:0", "reply": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"no reply for 2 of 3 contexts \(first: '1:1'\)"):
        read_replies(path, items)
    path.write_text("".join(json.dumps({"id": it.id, "replies": []}) + "\n" for it in items), encoding="utf-8")
    with pytest.raises(UserError, match=r"no reply for 3 of 3 contexts"):
        read_replies(path, items)
    path.write_text(json.dumps({"id": "1:0", "reply": None}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"r.jsonl:1: needs an 'id' and a 'reply' string"):
        read_replies(path, items)
    path.write_text("".join(json.dumps({"id": it.id, "reply": "x"}) + "\n" for it in items)
                    + json.dumps({"id": "9:9", "reply": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match="'9:9', which is not a context"):
        read_replies(path, items)


def test_static_contexts_teacher_gives_its_contexts(datapath):
    from parlai_acute.tasks.static_contexts import static_contexts

    items = read_teacher("static_contexts", "valid", datapath, limit=5)
    expected = static_contexts(0, 200, 3, "valid")[:5]
    assert [it.id for it in items] == [c["context_id"] for c in expected]
    assert [it.context for it in items] == [c["context_turns"] for c in expected]
    assert [it.references for it in items] == [[c["reference"]] for c in expected]


def test_constant_reply_agent_answers_every_context(dailydialog_file, datapath):
    from parlai_acute.agents.constant_reply import CONVAI2_TOY_REPLY
    from parlai_acute.metrics.replies import build_agent

    items = read_dailydialog(dailydialog_file)
    agent = build_agent("parlai_acute.agents.constant_reply:ConstantReplyAgent", datapath)
    assert generate_replies(agent, items) == {it.id: [CONVAI2_TOY_REPLY] for it in items}
    other = build_agent("parlai_acute.agents.constant_reply:ConstantReplyAgent --constant-reply 'ok then'", datapath)
    assert set(r[0] for r in generate_replies(other, items).values()) == {"ok then"}
    with pytest.raises(UserError, match="cannot load model"):
        build_agent("no_such_agent_here", datapath)


def test_smollm2_generates_replies_to_contexts(dailydialog_file, datapath):
    """The default wrapper (SmolLM2 through llama.cpp) answers each context, batched."""
    from parlai_acute.metrics.replies import build_agent

    items = read_dailydialog(dailydialog_file)
    agent = build_agent("parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 16", datapath)
    replies = generate_replies(agent, items, batchsize=3)
    assert set(replies) == {it.id for it in items}
    assert all(len(r) == 1 and r[0].strip() for r in replies.values())


def test_any_parlai_teacher_with_episode_history(datapath):
    """ParlAI's own integration-test teacher (built in code, nothing downloaded): each
    example's context is its episode's earlier texts and labels, then its own text."""
    items = read_teacher("integration_tests:multiturn", "valid", datapath, limit=5)
    assert [it.id for it in items] == ["0:0", "0:1", "0:2", "0:3", "1:0"]
    first, second = items[0], items[1]
    assert second.context[:2] == [first.context[-1], first.references[0]]
    assert len(second.context) == 3 and items[4].context == [items[4].references[0]]
    with pytest.raises(UserError, match="cannot load the task"):
        read_teacher("no_such_task_anywhere", "valid", datapath)


def test_spreadsheet_csv_reply_column_and_bad_ratings_are_handled_by_the_one_reader(tmp_path, capsys):
    """A CSV with a byte-order mark, a reply column named by --reply-column, and ratings of nan/inf."""
    from parlai_acute.scripts.main import main

    rows = "context,response,answer\nHi there!,Hello! How are you?,Hello! How are you today?\n" \
           "Any plans?,A walk in the park.,Maybe a walk.\nNice day.,It really is.,ok\n"
    data = tmp_path / "data.csv"
    data.write_bytes(b"\xef\xbb\xbf" + rows.encode())
    assert main(["metrics", "score", "--data", str(data), "--reply-column", "answer", "--metrics", "f1",
                 "--bootstrap", "0", "-o", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "3 contexts" in out and "column answer" in out
    ratings = tmp_path / "ratings.csv"
    for bad in ("nan", "inf"):
        ratings.write_bytes(b"\xef\xbb\xbf" + (
            "context,response,reference,model,rating\n"
            "Hi,Hello,Hello there,a,4\nHey,Yo,Hi,a,2\n"
            f"Bye,See you,Goodbye,b,{bad}\nOk,Fine,Alright,b,3\n").encode())
        code = main(["metrics", "correlate", "--ratings", str(ratings), "--metrics", "f1", "--bootstrap", "0",
                     "-o", str(tmp_path / "c")])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        assert f"{ratings}:4: column 'rating': rating '{bad}' is not a finite number" in err
