"""The parlai-acute self-chat / chat commands: results, help, and one-line errors (exit 2)."""
from __future__ import annotations

import json

import pytest
from parlai.utils.conversations import Conversations

from parlai_acute.logs import read_log
from parlai_acute.scripts.main import main

GENERIC = "parlai_acute.agents.generic_bot:GenericBotAgent"


def test_self_chat_command_writes_log(tmp_path, datapath, capsys):
    out = tmp_path / "logs" / "run.jsonl"
    code = main(["self-chat", "-m", GENERIC, "-p", "repeat_query", "-t", "persona", "-n", "3", "--max-turns", "3",
                 "-b", "2", "--seed", "4", "-o", str(out), "--datapath", datapath, "--no-progress"])
    assert code == 0
    assert f"wrote 3 conversations to {out}" in capsys.readouterr().out
    episodes = read_log(out)
    assert len(episodes) == 3 and all(e.speakers == ["GenericBot_1", "RepeatQueryAgent_2"] for e in episodes)
    meta = Conversations(str(out)).metadata
    assert meta.extra_data["partner_model_spec"] == "repeat_query" and meta.opt["batchsize"] == 2
    assert meta.extra_data["parlai_acute_version"]


def test_progress_bar_on_stderr_when_asked_or_on_a_terminal(tmp_path, datapath, capsys):
    argv = ["self-chat", "-m", GENERIC, "-n", "2", "--max-turns", "1", "--datapath", datapath]
    assert main(argv + ["-o", str(tmp_path / "x.jsonl"), "--progress"]) == 0
    assert "self-chat: 100%" in capsys.readouterr().err
    assert main(argv + ["-o", str(tmp_path / "y.jsonl")]) == 0  # stderr is not a terminal here: no bar
    assert "self-chat:" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["self-chat", "chat"])
def test_help_explains_the_command(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "Conversations log" in text and "--model" in text and "examples:" in text.lower()


BAD = [
    (["self-chat", "-n", "0"], "--num-self-chats must be at least 1"),
    (["self-chat", "--max-turns", "0"], "--max-turns must be at least 1"),
    (["self-chat", "-b", "-3"], "--batchsize must be at least 1"),
    (["self-chat", "-m", "no_such_pkg.agents:Nope"], "cannot load model 'no_such_pkg.agents:Nope'"),
    (["self-chat", "-m", "/nonexistent/model.gguf"], "GGUF model file /nonexistent/model.gguf does not exist"),
    (["self-chat", "-m", "/nonexistent/model"], "has no /nonexistent/model.opt beside it"),
    (["self-chat", "-m", "repeat_query", "-p", "repeat_query --no-such-flag 1"],
     "ParlAI rejected --partner-model 'repeat_query --no-such-flag 1': unrecognized arguments: --no-such-flag 1"),
    (["self-chat", "-m", "repeat_query", "-t", "no_such_task"], "cannot load the task"),
    (["self-chat", "-m", "repeat_query", "-t", "parlai_acute.tasks.static_contexts", "-b", "2"],
     "--batchsize > 1 needs a parlai_acute task"),
    (["chat", "-m", "no_such_agent"], "cannot load model 'no_such_agent'"),
]


@pytest.mark.parametrize("argv,message", BAD)
def test_bad_input_is_one_line_exit_2(argv, message, tmp_path, datapath, capsys):
    out = tmp_path / "never.jsonl"
    code = main(argv + ["-o", str(out), "--datapath", datapath] + (["--no-progress"] if argv[0] == "self-chat" else []))
    err = capsys.readouterr().err.strip()
    assert code == 2
    lines = [line for line in err.splitlines() if line.startswith("parlai-acute: error: ")]
    assert len(lines) == 1 and "Traceback" not in err
    assert message in lines[0]
    assert not out.exists() and not out.with_suffix(".metadata").exists()


def test_out_of_range_seed_turns(tmp_path, datapath, capsys):
    code = main(["self-chat", "--model=-m repeat_query --chitchat-seed-turns 9", "-o", str(tmp_path / "x.jsonl"),
                 "--datapath", datapath, "--no-progress"])
    assert code == 2
    assert "--chitchat-seed-turns must be between 1 and 3, got 9" in capsys.readouterr().err


def test_outfile_that_is_a_directory(tmp_path, datapath, capsys):
    assert main(["self-chat", "-m", "repeat_query", "-o", str(tmp_path), "--datapath", datapath]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_unwritable_outfile_fails_before_running(tmp_path, datapath, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "file").write_text("")
    assert main(["self-chat", "-m", "repeat_query", "-o", str(locked / "file" / "x.jsonl"),
                 "--datapath", datapath]) == 2
    assert "cannot write --output" in capsys.readouterr().err


@pytest.mark.parametrize("content,problem", [
    ("{not json\n", "not valid JSON"),
    (json.dumps({"no": "dialog"}) + "\n", "missing field 'dialog'"),
    ("", "is empty"),
])
def test_malformed_logs_are_user_errors(tmp_path, content, problem):
    from parlai_acute.errors import UserError

    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(UserError, match=problem):
        read_log(path)


def test_partner_given_as_a_parlai_model_file(tmp_path, datapath):
    model_file = tmp_path / "partner" / "model"
    model_file.parent.mkdir()
    (tmp_path / "partner" / "model.opt").write_text(json.dumps({"model": "repeat_query"}))
    model_file.write_text("")  # ParlAI requires the model file itself to exist
    out = tmp_path / "mf.jsonl"
    assert main(["self-chat", "-m", GENERIC, "-p", str(model_file), "-t", "topics", "-n", "1", "--max-turns", "2",
                 "-o", str(out), "--datapath", datapath, "--no-progress"]) == 0
    (episode,) = read_log(out)
    assert episode.speakers == ["GenericBot_1", "RepeatQueryAgent_2"]
    assert Conversations(str(out)).metadata.extra_data["partner_opt"]["model_file"] == str(model_file)
