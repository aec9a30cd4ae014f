"""The README's "Python API" examples run as written (each block in a fresh namespace, in a temporary directory)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def api_blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_section_has_examples():
    assert len(api_blocks()) >= 3


@pytest.mark.parametrize("index", range(len(api_blocks())))
def test_readme_python_api_example_runs(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(api_blocks()[index], f"README.md Python API block {index + 1}", "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out.strip()  # every example shows something
