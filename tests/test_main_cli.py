"""The parlai-acute console script: every subcommand documents itself, user errors are one line."""
import subprocess
import sys

import pytest

from parlai_acute.scripts.main import COMMANDS, main


def leaves(table=COMMANDS, prefix=()):
    for name, entry in table.items():
        if name == "_help":
            continue
        if isinstance(entry, dict):
            yield from leaves(entry, prefix + (name,))
        else:
            yield prefix + (name,), entry[1]


@pytest.mark.parametrize("path,help_text", list(leaves()), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_subcommand_has_help(path, help_text, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*path, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: parlai-acute {' '.join(path)}" in out
    assert help_text.split()[0] in out
    examples = out.split("examples:\n", 1)[-1]
    assert "examples:" in out and f"parlai-acute {' '.join(path)} " in examples, "no example in --help"
    headings = [line for line in out.splitlines() if line.strip().lower().rstrip(":") in ("example", "examples")]
    assert headings == ["examples:"], "an empty or repeated examples heading"  # the epilog's, once


def test_top_level_help_lists_commands():
    result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "--help"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    for name in COMMANDS:
        assert name in result.stdout


def test_user_error_is_one_line_exit_2(capsys):
    code = main(["acute", "fast", "--workdir", "unused", "--model", "a=-m repeat_query"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.count("\n") == 0
    assert err.startswith("parlai-acute: error: ") and "at least two systems; give two or more in --model" in err


def test_unknown_command_is_rejected(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["no-such-command"])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_closed_pipe_is_a_quiet_exit_not_a_traceback():
    """`parlai-acute ... | head`: the reader closes the pipe before we write; no traceback."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # like `head` that has already exited: every write gets EPIPE
    try:
        result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "acute", "power", "--delta", "0.1"],
                                stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 1  # as Python itself exits on EPIPE
