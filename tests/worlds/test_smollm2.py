"""The worlds and CLI with the real SmolLM2-135M-Instruct GGUF (llama.cpp agent); short chats."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from parlai.scripts.self_chat import SelfChat
from parlai.utils.conversations import Conversations

from parlai_acute.logs import read_log
from parlai_acute.scripts.main import main
from parlai_acute.tasks import sources

LLAMA = "parlai_acute.agents.llama_cpp:LlamaCppAgent"
SHORT = "--max-new-tokens 16 --llama-threads 1"
ROOT = Path(__file__).resolve().parents[2]


def test_parlai_self_chat_script_with_smollm2(tmp_path, datapath, quiet):
    out = tmp_path / "smollm2.jsonl"
    with quiet():
        SelfChat.main(model=LLAMA, task="parlai_acute.tasks.chitchat", num_self_chats=1, selfchat_max_turns=2,
                      outfile=str(out), datapath=datapath)  # the default budget
    (episode,) = read_log(out)
    assert episode.speakers == ["LlamaCpp_1", "LlamaCpp_2"] and len(episode.turns) == 4
    seed = episode.turns[0]
    conv = next(c for c in sources.chitchat("train") if c.id == seed["seed"]["conversation_id"])
    assert seed["text"] == conv.turns[0]
    model_turns = [t["text"] for t in episode.turns[1:]]
    assert all(text.strip() for text in model_turns) and len(set(model_turns)) == 3
    assert len(list(Conversations(str(out)))) == 1


def test_batched_persona_self_chat_with_smollm2(tmp_path, datapath):
    out = tmp_path / "batched.jsonl"
    assert main(["self-chat", "-t", "persona", "-n", "2", "-b", "2", "--max-turns", "2",
                 f"--model={LLAMA} {SHORT}", "-o", str(out), "--datapath", datapath, "--no-progress"]) == 0
    episodes = read_log(out)
    assert len(episodes) == 2
    for episode in episodes:
        assert len(episode.context) == 2 and all(c["text"].startswith("your persona: ") for c in episode.context)
        assert len(episode.turns) == 2 and all(t["text"].strip() for t in episode.turns)
    # two conversations, two different persona pairs and two different first replies
    assert episodes[0].context[0]["text"] != episodes[1].context[0]["text"]
    assert episodes[0].turns[0]["text"] != episodes[1].turns[0]["text"]


def test_smollm2_against_a_partner(tmp_path, datapath):
    out = tmp_path / "partner.jsonl"
    assert main(["self-chat", "-t", "topics", "-n", "1", "--max-turns", "3", f"--model={LLAMA} {SHORT}",
                 "-p", "parlai_acute.agents.generic_bot:GenericBotAgent", "-o", str(out), "--datapath", datapath,
                 "--no-progress"]) == 0
    (episode,) = read_log(out)
    assert episode.speakers == ["LlamaCpp_1", "GenericBot_2"]
    assert {t["text"] for t in episode.turns if t["id"] == "GenericBot_2"} <= {"ok", "I don't know"}


def test_chat_with_the_default_model_piped(tmp_path, datapath):
    out = tmp_path / "human_smollm2.jsonl"
    result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "chat", "-o", str(out),
                             "--datapath", datapath], input="Hi! What do you like to cook?\n", text=True,
                            capture_output=True, cwd=str(ROOT), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    (episode,) = read_log(out)
    assert [t["id"] for t in episode.turns] == ["localHuman", "LlamaCpp"]
    assert episode.turns[0]["text"] == "Hi! What do you like to cook?" and episode.turns[1]["text"].strip()
