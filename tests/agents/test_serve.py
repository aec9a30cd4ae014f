"""``parlai-acute serve``: the embedded model as an OpenAI-compatible endpoint, started as a user
starts it (its own process, a free loopback port), answering OpenAICompatAgent, stopped by SIGTERM."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from parlai.core.params import ParlaiParser

from parlai_acute.agents.llama_engine import DEFAULT_NICE
from parlai_acute.agents.openai_compat import OpenAICompatAgent
from parlai_acute.scripts.main import main

COMMAND = [sys.executable, "-m", "parlai_acute.scripts.main", "serve", "--llama-slots", "1", "--llama-threads", "1"]


def test_serve_answers_a_chat_completion_and_stops_on_sigterm():
    server = subprocess.Popen(COMMAND + ["--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [server.stdout.readline() for _ in range(3)]
        url = lines[-1].strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1"), (lines, server.stderr.read()
                                                                             if server.poll() is not None else "")
        assert f"--openai-base-url {url}" in lines[1]  # what to pass to a model or a judge
        if os.geteuid() == 0:  # as CI runs: llama.cpp's threads at the default --llama-nice, the rest untouched
            nice = {int(t): os.getpriority(os.PRIO_PROCESS, int(t)) for t in os.listdir(f"/proc/{server.pid}/task")}
            assert nice[server.pid] == os.getpriority(os.PRIO_PROCESS, 0) and DEFAULT_NICE in nice.values(), nice
        parser = ParlaiParser(False, False)
        OpenAICompatAgent.add_cmdline_args(parser)
        agent = OpenAICompatAgent(parser.parse_args(["--openai-base-url", url, "--inference", "greedy",
                                                     "--max-new-tokens", "8"]))
        agent.observe({"text": "Hi! What is your favourite food?", "episode_done": False})
        act = agent.act()
        assert act["text"].strip() and act["decoding"]["endpoint"] == url + "/chat/completions"
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=120)
    assert server.returncode == 0, err[-2000:]
    assert out.strip().splitlines()[-1] == "stopped"


def test_a_port_in_use_is_one_line(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--llama-slots", "1", "--llama-threads", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"port {port} on 127.0.0.1 is already in use" in err


def test_a_niceness_out_of_range_is_one_line(capsys):
    assert main(["serve", "--llama-nice", "40", "--port", "0", "--llama-slots", "1", "--llama-threads", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--llama-nice 40 is not a niceness; use -20..19" in err
