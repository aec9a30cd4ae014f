"""The documentation's code runs as written: README.md, docs/**/*.md and the live tasks' READMEs.

* Every ```python block executes in a fresh namespace in a temporary directory, unless a
  ``<!-- not run: REASON -->`` comment precedes it (few such blocks, each with its reason).
* Every ``parlai-acute`` command of a shell block is parsed by the real parser of its subcommand
  (``scripts/main.build_parser``, which adds that subcommand's arguments, then ``parse_args``), so
  an option that does not exist, a missing required one or a bad choice fails here; a command shown
  failing at parse time must fail with the message shown. A launch command's Hydra overrides are
  composed with its task's config, so a ``mephisto.blueprint.*`` option that does not exist fails too.
* A block whose commands are all cheap (``python -c ...`` and ``parlai-acute`` analyze, status,
  ppi, power, pairings, export, ``--help`` / ``--help-blueprint``) is executed in a temporary
  directory, in order, on the files the block itself makes; where it shows a command's output, the
  printed lines must be those (a line ``...`` stands for any lines; a shown
  ``parlai-acute: error: ...`` is compared with what the command printed to stderr, exit status 2).
  Expensive commands (launch, demo, self-chat, chat, fast, generate, judge, metrics with a model)
  are parse-checked only: they load models or serve Mephisto tasks for minutes. A block of cheap
  commands on files made elsewhere says so with ``<!-- parse only: REASON -->``.
"""
from __future__ import annotations

import argparse

import pytest

from doc_blocks import (ROOT, Command, all_blocks, cheap, command_path, doc_files, executed, markers, matches, python_blocks,
                        rel, run_block, shell_blocks)

MAX_NOT_RUN = 4  # python blocks that are shown but not run
MAX_PARSE_ONLY = 12  # shell blocks of cheap commands that read files made elsewhere


def shown_errors(command: Command) -> list[str]:
    return [line for line in command.output if line.startswith("parlai-acute: error:")]


PY = python_blocks()
SHELL = shell_blocks()
RUN = [b for b in SHELL if executed(b)]


def test_the_documentation_has_code_to_check():
    assert len(PY) >= 4 and len(SHELL) >= 30 and len(RUN) >= 10, (len(PY), len(SHELL), len(RUN))


def test_marked_blocks_are_few_and_say_why():
    marks = [(rel(path), line, kind, reason) for path in doc_files() for line, kind, reason in markers(path)]
    for where, line, kind, reason in marks:
        assert len(reason.split()) >= 3, f"{where}:{line}: a '{kind}' marker needs its reason in words"
    blocks = {(rel(b.path), b.line): b for b in all_blocks()}
    marked = [b for b in blocks.values() if b.mark]
    assert len(marked) == len(marks), "a marker comment must stand right before a code block"
    for block in marked:
        if block.mark == "not run":
            assert block.lang == "python", f"{block.name}: 'not run' marks a python block"
        else:
            assert block.lang != "python" and block.commands(), f"{block.name}: 'parse only' marks a shell block"
            assert all(cheap(a) for c in block.commands() for a in c.cli_args()), (
                f"{block.name}: 'parse only' is for cheap commands; expensive ones are parse-checked anyway")
    assert sum(b.mark == "not run" for b in marked) <= MAX_NOT_RUN
    assert sum(b.mark == "parse only" for b in marked) <= MAX_PARSE_ONLY


@pytest.mark.parametrize("block", [b for b in PY if b.mark != "not run"], ids=lambda b: b.name)
def test_python_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile("\n".join(block.lines) + "\n", block.name, "exec"), {"__name__": "__main__"})  # noqa: S102


TASK_CONFIGS = {"acute": "acute", "per-turn": "per_turn", "ssa": "ssa", "multiref": "multiref"}


def parse(args: list[str]) -> tuple[int, str]:
    """(exit status of argparse, its stderr) for the subcommand's real parser; 0 when it parses.
    A launch's Hydra overrides are composed too (a bad one raises the launcher's UserError)."""
    import contextlib
    import importlib
    import io

    from parlai_acute.scripts.main import build_parser

    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            namespace = build_parser(args).parse_args(args)
        except SystemExit as stop:
            return int(stop.code or 0), err.getvalue()
    assert isinstance(namespace, argparse.Namespace) and namespace._module
    path = command_path(args)
    if path[-1] == "launch" and getattr(namespace, "overrides", None):
        from parlai_acute.mephisto_tasks.live import launcher

        config = importlib.import_module(f"parlai_acute.mephisto_tasks.{TASK_CONFIGS[path[0]]}.config")
        launcher.compose(config.CONFIG_DIR, config.CONFIG_NAME, list(namespace.overrides))
    return 0, ""


@pytest.mark.parametrize("block", SHELL, ids=lambda b: b.name)
def test_shell_commands_parse(block):
    for command in block.commands():
        where = f"{rel(block.path)}:{command.line}"
        code = command.python_code()
        if code is not None:
            compile(code, where, "exec")
        for args in command.cli_args():
            status, err = parse(args)
            if status:
                said = err.strip().splitlines()[-1] if err.strip() else ""
                assert said in shown_errors(command), f"{where}: `parlai-acute {' '.join(args)}` does not parse: {said}"


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.name)
def test_cheap_block_prints_what_it_shows(block, tmp_path):
    for ran in run_block(block, tmp_path):
        where = f"{rel(block.path)}:{ran.command.line}"
        errors = shown_errors(ran.command)
        if errors:
            assert ran.status == 2, f"{where}: shown failing, exited {ran.status}"
            assert ran.err == errors, f"{where}: printed\n" + "\n".join(ran.err)
        else:
            assert ran.status == 0, f"{where}: exited {ran.status}: " + "\n".join(ran.err[-20:])
            if ran.command.output:
                assert matches(ran.command.output, ran.out), f"{where}: printed\n" + "\n".join(ran.out) + (
                    "\n(if that is right: PYTHONPATH=. python tests/docs/doc_blocks.py --refresh)")


def test_python_blocks_of_the_api_page_need_no_parlai_mephisto_or_torch():
    """docs/python_api.md is what tests/install/test_package.py runs in a plain `pip install .`."""
    page = [b for b in PY if b.path == ROOT / "docs" / "python_api.md"]
    assert len(page) >= 3 and not any(b.mark for b in page)
    for block in page:
        text = "\n".join(block.lines)
        assert not any(f"import {m}" in text or f"from {m}" in text for m in ("parlai.", "mephisto", "torch"))
