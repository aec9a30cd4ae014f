"""The README's analysis example, run exactly as written: every printed line must match."""
import shlex
from pathlib import Path

from parlai_acute.scripts.main import main

README = Path(__file__).resolve().parents[2] / "README.md"


def example_block() -> list[str]:
    """The code block of the README that makes judgments.csv and analyses it."""
    blocks, current = [], None
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("```") and current is None:
            current = []
        elif line.startswith("```"):
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line)
    for block in blocks:
        if block and block[0].startswith("$ python -c") and any("acute analyze --judgments" in b for b in block):
            return block
    raise AssertionError("the README has no analysis example starting with `$ python -c`")


def test_readme_analysis_example_prints_what_the_readme_says(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    lines = example_block()
    commands = [i for i, line in enumerate(lines) if line.startswith("$ ")]
    assert len(commands) == 2
    make, analyze = (shlex.split(lines[i][2:]) for i in commands)
    assert make[:2] == ["python", "-c"] and analyze[:3] == ["parlai-acute", "acute", "analyze"]
    exec(make[2], {})  # noqa: S102 - the README's own one-liner, as `python -c` runs it
    assert lines[commands[0] + 1] == lines[commands[1]]  # the first command prints nothing
    capsys.readouterr()
    assert main(analyze[1:]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == lines[commands[1] + 1:]
    assert (tmp_path / "acute_out" / "report.html").is_file()
