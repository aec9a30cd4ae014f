"""Human-model chat in a real pseudo-terminal and with piped stdin; same log format as self-chat."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
from parlai.utils.conversations import Conversations

from parlai_acute.logs import read_log

GENERIC = "parlai_acute.agents.generic_bot:GenericBotAgent"
ROOT = Path(__file__).resolve().parents[2]
PARLAI = str(Path(sys.executable).parent / "parlai")


# a real terminal gets ParlAI's colours: allow ANSI codes between the words we expect
ANSI = r"(?:\x1b\[[0-9;]*m|\s)*"


def spawn_chat(*args):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # as a terminal starts it: Ctrl-C delivered (a CI job started in the background inherits SIGINT ignored)
    return pexpect.spawn(sys.executable, ["-m", "parlai_acute.scripts.main", "chat", *args], cwd=str(ROOT),
                         env=env, encoding="utf-8", timeout=120,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_chat_in_a_terminal_writes_a_conversations_log(tmp_path, datapath):
    out = tmp_path / "human.jsonl"
    child = spawn_chat("-m", GENERIC, "--context", "topics", "-o", str(out), "--datapath", datapath)
    child.expect(r"\[context\]:" + ANSI + r"Let's talk about ([^\r\n\x1b]+)\.")
    topic = child.match.group(1)
    child.expect("Enter Your Message:")
    child.sendline("Do you like music?")
    child.expect(r"\[GenericBot\]:" + ANSI + "I don't know")
    child.expect("Enter Your Message:")
    child.sendline("I play the piano.")
    child.expect(r"\[GenericBot\]:" + ANSI + "ok")
    child.expect("Enter Your Message:")
    child.sendline("[EXIT]")
    child.expect(r"saved 1 conversation\(s\) to")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    (episode,) = read_log(out)
    assert [(t["id"], t["text"]) for t in episode.turns] == [
        ("localHuman", "Do you like music?"), ("GenericBot", "I don't know"),
        ("localHuman", "I play the piano."), ("GenericBot", "ok")]
    # the topic both sides get is stored once
    assert [c["text"] for c in episode.context] == [f"Let's talk about {topic}."]
    meta = Conversations(str(out)).metadata
    assert meta.self_chat is False and meta.speakers == ["localHuman", "GenericBot"]


def test_ctrl_c_keeps_the_conversation(tmp_path, datapath):
    out = tmp_path / "interrupted.jsonl"
    child = spawn_chat("-m", GENERIC, "-o", str(out), "--datapath", datapath)
    child.expect("Enter Your Message:")
    child.sendline("hello there")
    child.expect(r"\[GenericBot\]:" + ANSI + "ok")
    child.expect("Enter Your Message:")
    child.kill(signal.SIGINT)
    child.expect("interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    (episode,) = read_log(out)
    assert [t["text"] for t in episode.turns] == ["hello there", "ok"] and episode.context == []


def test_piped_stdin_with_done_and_end_of_input(tmp_path, datapath):
    out = tmp_path / "piped.jsonl"
    lines = "first chat\n[DONE]\nsecond chat?\nstill here\n"
    result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "chat", "-m", GENERIC, "-c",
                             "persona", "-o", str(out), "--datapath", datapath], input=lines, text=True,
                            capture_output=True, cwd=str(ROOT), timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    first, second = read_log(out)
    assert [t["text"] for t in first.turns] == ["first chat", "ok"]
    assert [t["text"] for t in second.turns] == ["second chat?", "I don't know", "still here", "ok"]
    assert all(c["text"].startswith("your persona: ") for c in first.context + second.context)
    # the person and the model got different personas
    assert first.context[0]["text"] != first.context[1]["text"]


def test_parlai_interactive_with_our_task(tmp_path, datapath):
    out = tmp_path / "parlai_interactive.jsonl"
    result = subprocess.run([PARLAI, "interactive", "-m", GENERIC, "-t", "parlai_acute.tasks.topics",
                             "--outfile", str(out), "--datapath", datapath], input="what now?\n[EXIT]\n",
                            text=True, capture_output=True, cwd=str(ROOT), timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    (episode,) = read_log(out)
    assert [t["text"] for t in episode.turns] == ["what now?", "I don't know"]
    assert episode.context[0]["text"].startswith("Let's talk about ")
    assert len(list(Conversations(str(out)))) == 1
    # the final metadata path, and no staging directory left behind
    assert episode.raw["metadata_path"] == str(out.with_suffix(".metadata"))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_chitchat_context_suggests_a_real_opening_to_the_person(tmp_path, datapath):
    from parlai_acute.tasks import sources

    out = tmp_path / "suggested.jsonl"
    result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "chat", "-m", GENERIC, "-c",
                             "chitchat", "-o", str(out), "--datapath", datapath], input="sure, why not\n",
                            text=True, capture_output=True, cwd=str(ROOT), timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    (episode,) = read_log(out)
    (context,) = episode.context  # only the person gets it; the model starts from nothing
    prompt = context["seed"]["prompt"]
    assert context["text"] == f"Suggested opening: {prompt}" and f"Suggested opening: {prompt}" in result.stdout
    assert any(c.prompt == prompt for c in sources.chitchat("test"))
