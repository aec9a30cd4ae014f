"""Judge fixtures: the loopback llama.cpp server and fault-injecting proxy of tests/agents, and one
embedded SmolLM2 judge per session (CLI runs with --concurrency 2 reuse its loaded model)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

_spec = importlib.util.spec_from_file_location("agents_conftest_for_judges",
                                               Path(__file__).parent.parent / "agents" / "conftest.py")
_agents = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_agents)
llama_server = _agents.llama_server
flaky_proxy = _agents.flaky_proxy

@pytest.fixture(scope="session")
def embedded_judge():
    """The embedded SmolLM2 judge, loaded once (its llama.cpp engine is shared by CLI runs)."""
    from parlai_acute.judges.model import JudgeModel

    return JudgeModel(None, concurrency=2)

