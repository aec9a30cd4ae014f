"""`parlai-acute demo`: bad arguments fail before the self-chats; every announced simulated worker judges."""
import shutil
import socket
import subprocess
import sys

import pytest

from parlai_acute.scripts.main import main


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_bad_port_fails_at_once_with_one_line(tmp_path):
    workdir = tmp_path / "demo"
    result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "demo", "--port", "-1",
                             "--workdir", str(workdir)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "--port -1 is outside the TCP range" in result.stderr and "1 to 65535" in result.stderr
    assert result.stdout == ""  # no self-chat started
    assert not workdir.exists()


@pytest.mark.parametrize("args,message", [
    (["--port", "70000"], "--port 70000 is outside the TCP range"),
    (["--port", "BUSY"], "already in use; choose another with --port"),
    (["--workers", "7"], "--workers 7 is more than the 6 comparisons"),
    (["--workers", "-2"], "must be 0 or more"),
    (["--num-self-chats", "0"], "--num-self-chats must be at least 1"),
    (["--max-turns", "0"], "--max-turns must be at least 1"),
])
def test_every_argument_is_checked_before_slow_work(tmp_path, capsys, args, message):
    workdir = tmp_path / "demo"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        args = [str(busy.getsockname()[1]) if a == "BUSY" else a for a in args]
        assert main(["demo", "--workdir", str(workdir), *args]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and len(captured.err.strip().splitlines()) == 1
    assert captured.out == "" and not workdir.exists()


@pytest.mark.timeout(900)
def test_three_announced_workers_all_judge(tmp_path, capsys, monkeypatch):
    """The demo with its logs already made (GenericBot self-chats stand in for both models' logs)."""
    import pandas as pd

    from parlai_acute.scripts.demo import MODELS

    monkeypatch.setenv("PARLAI_ACUTE_DATA", str(tmp_path / "parlai_data"))
    workdir = tmp_path / "demo"
    logs = workdir / "logs"
    first, second = (logs / f"{name}.jsonl" for name in MODELS)
    assert main(["self-chat", "-m", "parlai_acute.agents.generic_bot:GenericBotAgent", "-n", "6", "--max-turns", "3",
                 "--no-progress", "--datapath", str(tmp_path / "parlai_data"), "-o", str(first)]) == 0
    shutil.copy(first, second)
    shutil.copy(first.with_suffix(".metadata"), second.with_suffix(".metadata"))
    capsys.readouterr()

    assert main(["demo", "--workdir", str(workdir), "--workers", "3", "--port", str(free_port())]) == 0
    out = capsys.readouterr().out
    assert "3 SIMULATED workers will judge" in out
    judged = pd.read_csv(workdir / "results" / "judgments.csv")
    workers = judged["worker"].str.replace("_sandbox", "")
    assert sorted(workers.unique()) == ["simulated-worker1", "simulated-worker2", "simulated-worker3"]
    assert len(judged) == 6 and workers.value_counts().tolist() == [2, 2, 2]
    assert "[fast] 3 of 3 simulated workers made" in out
