"""`parlai-acute acute fast` end to end: self-chats of two ParlAI agents, pairings, the real
Mephisto task with scripted Chromium workers, and the analysis; then a rerun that reuses it all."""
import json
import socket

import pandas as pd
import pytest

from parlai_acute.acute.fast import simulated_judge
from parlai_acute.scripts.main import main

MODELS = ["--model", "generic=-m parlai_acute.agents.generic_bot:GenericBotAgent",
          "--model", "echo=-m repeat_query"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def view(left_words: list[str], right_words: list[str]) -> dict:
    side = lambda words: {"turns": [{"evaluated": True, "text": " ".join(words)},  # noqa: E731
                                    {"evaluated": False, "text": "many many other words here"}]}
    return {"comparison": {"sides": [side(left_words), side(right_words)]}}


def test_simulated_judge_prefers_more_distinct_words_and_says_it_is_simulated():
    side, reason = simulated_judge(view(["ok", "ok"], ["I", "love", "hiking"]))
    assert side == "right"
    assert reason.startswith("Simulated worker")
    assert simulated_judge(view(["we", "went", "north"], ["ok"]))[0] == "left"


def distinct_words(dialogue: dict, model: str) -> int:
    return len({w.lower().strip(".,!?") for t in dialogue["dialogue"] if t["id"] == model for w in t["text"].split()})


@pytest.mark.timeout(900)
def test_fast_runs_the_whole_loop_and_reuses_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PARLAI_ACUTE_DATA", str(tmp_path / "parlai_data"))
    workdir = tmp_path / "run"
    argv = ["acute", "fast", *MODELS, "--workdir", str(workdir), "-n", "4", "--max-turns", "3",
            "--comparisons-per-pair", "4", "--simulated-workers", "2", "--port", str(free_port()),
            "--bootstrap", "50", "--max-per-worker", "4",
            "mephisto.blueprint.comparisons_per_unit=2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "SIMULATED" in out

    # every comparison was judged, and each stored winner is what the scripted judge saw on that side
    pairings = [json.loads(line) for line in (workdir / "pairings.jsonl").read_text().splitlines()]
    dialogues = {d["id"]: d for p in pairings if not p["is_onboarding"] for d in p["dialogue_dicts"]}
    judged = pd.read_csv(workdir / "results" / "judgments.csv")
    assert len(judged) == 4
    assert set(judged["worker"].str.replace("_sandbox", "")) <= {"simulated-worker1", "simulated-worker2"}
    for row in judged.itertuples():
        left = distinct_words(dialogues[row.dialogue_left], row.model_left)
        right = distinct_words(dialogues[row.dialogue_right], row.model_right)
        assert row.winner == (row.model_left if left >= right else row.model_right)
    matchups = pd.read_csv(workdir / "results" / "matchups.csv")
    assert int(matchups["n"].sum()) == 4
    run = json.loads((workdir / "results" / "run.json").read_text())
    assert "version" in json.dumps(run)

    # a rerun reuses the logs and finds the run already complete
    assert main(argv) == 0
    again = capsys.readouterr().out
    assert again.count("reusing") == 2
    assert "nothing to launch" in again
    assert len(pd.read_csv(workdir / "results" / "judgments.csv")) == 4


def test_fast_refuses_the_same_name_twice(tmp_path, capsys):
    code = main(["acute", "fast", "--workdir", str(tmp_path), "--model", "a=repeat_query", "--log", "a=x.jsonl"])
    assert code == 2
    assert "is in both --model and --log" in capsys.readouterr().err
