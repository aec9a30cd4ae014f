"""Logs appear complete or not at all, whoever writes them (our CLI or ParlAI's script)."""
from __future__ import annotations

import json

import pytest
from parlai.scripts.self_chat import SelfChat
from parlai.utils.conversations import Conversations

from parlai_acute.agents.generic_bot import GenericBotAgent
from parlai_acute.logs import read_log
from parlai_acute.worlds import conversations_log
from parlai_acute.worlds.conversations_log import save_conversations

GENERIC = "parlai_acute.agents.generic_bot:GenericBotAgent"
EPISODE = [[{"id": "a", "text": "hi", "episode_done": False}, {"id": "b", "text": "ok", "episode_done": False}]]


def test_save_writes_both_files_and_no_staging_leftovers(tmp_path):
    path = save_conversations([EPISODE, EPISODE], tmp_path / "sub" / "log", {"task": "t"}, self_chat=True, extra=1)
    assert path == tmp_path / "sub" / "log.jsonl"
    assert sorted(p.name for p in path.parent.iterdir()) == ["log.jsonl", "log.metadata"]
    line = json.loads(path.read_text().splitlines()[0])
    assert line["metadata_path"] == str(tmp_path / "sub" / "log.metadata")
    conv = Conversations(str(path))
    assert len(conv) == 2 and conv.metadata.extra_data == {"extra": 1} and conv.metadata.self_chat


def test_failed_save_keeps_the_previous_log(tmp_path):
    target = tmp_path / "log.jsonl"
    save_conversations([EPISODE], target, {"task": "old"}, self_chat=True)
    before = target.read_text()
    with pytest.raises(TypeError):  # ParlAI cannot serialise this opt: the save fails midway
        save_conversations([EPISODE, EPISODE], target, {"task": object()}, self_chat=True)
    assert target.read_text() == before and len(read_log(target)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl", "log.metadata"]


def test_interrupt_before_the_log_is_renamed_leaves_no_log(tmp_path, monkeypatch):
    real = conversations_log.atomic_write

    def interrupted(path, *args, **kwargs):
        if str(path).endswith(".jsonl"):
            raise KeyboardInterrupt
        return real(path, *args, **kwargs)

    monkeypatch.setattr(conversations_log, "atomic_write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_conversations([EPISODE], tmp_path / "log.jsonl", {"task": "t"}, self_chat=True)
    assert not (tmp_path / "log.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["log.metadata"]


def test_parlai_self_chat_that_crashes_writes_nothing(tmp_path, datapath, monkeypatch, quiet):
    calls = []

    def failing_act(self):
        calls.append(1)
        if len(calls) > 5:
            raise RuntimeError("model crashed")
        return GenericBotAgent.__dict__["act"](self)

    out = tmp_path / "crash.jsonl"
    monkeypatch.setattr(GenericBotAgent, "act", failing_act)
    with pytest.raises(RuntimeError, match="model crashed"), quiet():
        SelfChat.main(model=GENERIC, task="parlai_acute.tasks.chitchat", num_self_chats=3, selfchat_max_turns=3,
                      outfile=str(out), datapath=datapath)
    assert calls and list(tmp_path.glob("crash*")) == [] and list(tmp_path.glob(".crash*")) == []


def test_interrupted_self_chat_keeps_finished_conversations_apart(tmp_path, datapath, monkeypatch, capsys):
    from parlai_acute.scripts.main import main

    calls = []
    real_batch_act = GenericBotAgent.batch_act

    def failing_batch_act(self, observations):
        calls.append(1)
        if len(calls) > 7:  # 3 batch_acts per conversation pair: the 3rd pair fails midway
            raise KeyboardInterrupt
        return real_batch_act(self, observations)

    monkeypatch.setattr(GenericBotAgent, "batch_act", failing_batch_act)
    out = tmp_path / "run.jsonl"
    code = main(["self-chat", "-m", GENERIC, "-n", "6", "-b", "2", "--max-turns", "2", "-o", str(out),
                 "--datapath", datapath, "--no-progress"])
    assert code == 130
    assert not out.exists() and not out.with_suffix(".metadata").exists()
    partial = tmp_path / "run.partial.jsonl"
    assert len(read_log(partial)) == 4 and Conversations(str(partial)).metadata.extra_data["interrupted"] is True
    assert f"4 finished conversation(s) kept in {partial}" in capsys.readouterr().err
