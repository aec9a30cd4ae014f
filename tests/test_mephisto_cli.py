"""``parlai-acute mephisto``: Mephisto's own CLI, which crashes at start on Python 3.11 without
parlai_acute's compatibility fixes, runs through our console script."""
import subprocess
import sys

from parlai_acute.scripts.main import main


def test_mephisto_help_exits_0_and_lists_mephistos_commands(capsys):
    try:
        code = main(["mephisto", "--help"])
    except SystemExit as done:
        code = done.code
    out = capsys.readouterr().out
    assert code == 0
    assert "usage: parlai-acute mephisto" in out
    for command in ("review", "scripts", "check", "requesters", "wut"):
        assert f"│ {command} " in out, out


def test_arguments_reach_mephisto_unchanged_and_its_exit_code_comes_back(capsys):
    assert main(["mephisto", "review", "--help"]) == 0
    assert "Launch a local review UI server" in capsys.readouterr().out
    assert main(["mephisto", "no-such-command"]) == 2  # click's usage error, not a traceback


def test_the_console_script_starts_in_a_fresh_interpreter():
    """What a user types: a new process, nothing imported first by a test."""
    result = subprocess.run([sys.executable, "-m", "parlai_acute.scripts.main", "mephisto", "--help"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "mutable default" not in result.stderr and "review" in result.stdout
