"""The library speaks Python, the CLI speaks flags: a library error names the parameter a caller
passed (``max_per_worker must be at least 1, got 0``) and says so in ``UserError.param``; the
``parlai-acute`` command line prints the flag of the command that was run instead
(``--max-per-worker must be at least 1, got 0``)."""
from __future__ import annotations

import argparse
import ast
import pickle
import re
from pathlib import Path

import pytest

import parlai_acute
from parlai_acute.errors import UserError, param_pattern
from parlai_acute.scripts.main import flag_message, main
from parlai_acute.scripts.options import DeprecatedAlias

ROOT = Path(parlai_acute.__file__).parent
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")
#: Command lines of other tools quoted in a message (not options of ours): ParlAI's own help, pip.
ALLOWED = ["`parlai self_chat -m AGENT --help`", "pip install --force-reinstall"]


def library_modules() -> list[Path]:
    """Every module outside the command line (``parlai_acute/scripts``, a protocol's ``cli/``)."""
    return sorted(p for p in ROOT.rglob("*.py")
                  if "scripts" not in p.relative_to(ROOT).parts[:1] and "cli" not in p.relative_to(ROOT).parts[:-1])


def flags_in_raises(source: str, name: str) -> list[str]:
    """``--flag`` spellings in the string constants and f-strings of ``raise UserError(...)``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
            continue
        func = node.exc.func
        if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")) != "UserError":
            continue
        for sub in ast.walk(node.exc):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                text = sub.value
                for allowed in ALLOWED:
                    text = text.replace(allowed, "")
                found += [f"{name}:{sub.lineno}: {flag}" for flag in FLAG.findall(text)]
    return found


def test_no_library_error_names_a_command_line_flag():
    modules = library_modules()
    assert len(modules) > 100 and not any(p.parts[-2] == "scripts" for p in modules)
    hits = [hit for path in modules
            for hit in flags_in_raises(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT.parent)))]
    assert hits == []


def test_the_scan_sees_a_flag_in_an_f_string_but_not_an_allowed_command_line():
    source = ('raise UserError(f"{n} is not valid; use --max-per-worker 1", param="x")\n'
              'raise errors.UserError("see `parlai self_chat -m AGENT --help`")\n'
              'raise ValueError("--not-a-user-error")\n')
    assert flags_in_raises(source, "m.py") == ["m.py:1: --max-per-worker"]


def test_a_user_error_names_its_parameters_and_keeps_them_across_processes():
    exc = UserError("max_per_worker must be at least 1, got 0", param="max_per_worker")
    assert exc.params == ("max_per_worker",) and str(exc) == "max_per_worker must be at least 1, got 0"
    again = pickle.loads(pickle.dumps(exc))
    assert again.params == ("max_per_worker",) and str(again) == str(exc)
    assert UserError("a or b", param=("a", "b")).params == ("a", "b") and UserError("plain").params == ()
    with pytest.raises(ValueError, match="one line"):
        UserError("two\nlines")


def unnamed_params(source: str, name: str) -> list[str]:
    """``UserError(message, param=...)`` calls whose message (its literal text) does not name one of the
    literal parameters: the CLI would have nothing to rewrite."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "UserError"):
            continue
        given = [kw.value for kw in node.keywords if kw.arg == "param"] + node.args[1:2]
        if not given or not node.args:
            continue
        try:
            params = ast.literal_eval(given[0])
        except ValueError:  # a variable: checked where it is made
            continue
        params = (params,) if isinstance(params, str) else tuple(params or ())
        message = node.args[0]
        parts = message.values if isinstance(message, ast.JoinedStr) else [message]
        text = "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in parts)
        found += [f"{name}:{node.lineno}: {p}" for p in params if not param_pattern(p).search(text)]
    return found


def test_every_library_error_names_the_parameters_it_declares():
    hits = [hit for path in library_modules()
            for hit in unnamed_params(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT.parent)))]
    assert hits == []
    assert unnamed_params('raise UserError(f"the level {x} is wrong", param="alpha")', "m.py") == ["m.py:1: alpha"]


def parser_with_flags() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("-o", "--output-dir", "--outdir", dest="outdir")
    parser.add_argument("--num-items", dest="limit", type=int)
    parser.add_argument("--limit", dest="limit", type=int, action=DeprecatedAlias, preferred="--num-items",
                        help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int)
    return parser


@pytest.mark.parametrize("message,param,printed", [
    ("limit 0 must be at least 1", "limit", "--num-items 0 must be at least 1"),  # the visible spelling
    ("outdir out: out exists and is not a directory", "outdir", "--output-dir out: out exists and is not a directory"),
    ("port 0 is outside the TCP range (e.g. port=3000)", "port",
     "--port 0 is outside the TCP range (e.g. --port 3000)"),
    ("hf_model is required", "hf_model", "--hf-model is required"),  # not the command's: ParlAI's spelling
    # only the parameter itself: not a config key, a path, a quoted field or a longer name
    ("see mephisto.architect.port, /tmp/port, port.txt, 'port' and portly; check port",
     "port", "see mephisto.architect.port, /tmp/port, port.txt, 'port' and portly; check --port"),
])
def test_the_command_line_prints_the_flag_of_each_parameter(message, param, printed):
    assert flag_message(UserError(message, param=param), parser_with_flags()) == printed


def _cli_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_acute_analyze_says_max_per_worker_as_its_flag(tmp_path, capsys):
    err = _cli_error(capsys, ["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "--max-per-worker", "0",
                              "-o", str(tmp_path / "out")])
    assert "error: --max-per-worker must be at least 1, got 0" in err
    with pytest.raises(UserError, match=r"^max_per_worker must be at least 1, got 0$"):  # what Python says
        from parlai_acute.acute.analysis import AnalysisConfig

        AnalysisConfig(max_per_worker=0)


def test_convai2_analyze_says_the_scale_as_its_flag(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    path.write_text("dialogue,worker,model,question,score\nd1,w1,m,engagingness,5\n", encoding="utf-8")
    err = _cli_error(capsys, ["convai2", "analyze", "--ratings", str(path), "-o", str(tmp_path / "out")])
    assert "field 'score' must be a whole number from 1 to 4, got '5'" in err and "--scale (LOW, HIGH)" in err
    from parlai_acute import api

    with pytest.raises(UserError, match=r"scale=\(LOW, HIGH\)"):  # a notebook user is told the parameter
        api.load_table("convai2", str(path))


def test_status_says_alpha_as_its_flag(tmp_path, capsys):
    from parlai_acute.acute.judgments import write_judgments
    from parlai_acute.acute.simulate import simulate_judgments

    table = tmp_path / "judgments.csv"
    write_judgments(table, simulate_judgments({"a": 0.0, "b": 0.5}, 40, workers=10))
    err = _cli_error(capsys, ["status", "--table", str(table), "--alpha", "2"])
    assert "error: --alpha 2.0 must be strictly between 0 and 1" in err


def test_a_parameter_spelled_differently_on_the_command_line_is_said_as_that_flag(tmp_path, capsys):
    """``demo --workers`` is FastConfig's simulated_workers; ``judge --num-items`` is the runner's limit."""
    err = _cli_error(capsys, ["demo", "--workdir", str(tmp_path / "d"), "--workers", "-2"])
    assert "error: --workers must be 0 or more, got -2" in err
