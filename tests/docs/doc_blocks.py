"""The code blocks of the documentation, as the docs tests read them.

The documentation is README.md, every page under docs/ and the README of every live task folder
(parlai_acute/mephisto_tasks/<task>/README.md). A fenced block is ```LANG ... ```; the HTML
comment on the line before it (blank lines between allowed) may mark it:

* ``<!-- not run: REASON -->`` before a ```python block: shown, never executed;
* ``<!-- parse only: REASON -->`` before a shell block: its ``parlai-acute`` commands are parsed
  by the real parser but not run, although every one of them is cheap (e.g. they read files made
  elsewhere: the reason says where).

A shell block (```bash, ```console, ```sh, ```shell or a bare ```) holds commands: a line
``$ COMMAND`` (its output follows, up to the next ``$`` line) or a line starting
``parlai-acute `` (no output shown); a line ending in ``\\`` continues on the next.

After a change that alters what a cheap command prints, the pages' shown output is brought up to
date by running the blocks again (the same way the tests run them) and writing what they print:

    PYTHONPATH=. python tests/docs/doc_blocks.py --refresh

It rewrites only the output lines of executed blocks, and refuses a block that elides output
(a ``...`` line): such a block is edited by hand.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL = {"", "bash", "console", "sh", "shell"}
MARKER = re.compile(r"<!--\s*(not run|parse only):\s*(.*?)\s*-->\s*$")
SEPARATORS = {"|", "||", "&&", ";", "&"}
CHEAP = {"analyze", "status", "ppi", "power", "pairings", "export", "import"}  # leaf commands run on the block's files
HELP = ("-h", "--help", "--help-blueprint")


def doc_files() -> list[Path]:
    """README.md, docs/**/*.md and the live tasks' READMEs, in a fixed order."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "parlai_acute" / "mephisto_tasks").glob("*/README.md"))]
    return [f for f in files if f.is_file()]


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@dataclass
class Command:
    text: str                 # the command as written (continuations joined)
    line: int                 # its first line in the file
    output: list[str] = field(default_factory=list)  # the lines shown after a `$ ` command

    def segments(self) -> list[list[str]]:
        """The simple commands of a pipeline or list (``a | b``, ``a && b``, ``a; b``), each as words."""
        lexer = shlex.shlex(self.text, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        words, out = list(lexer), [[]]
        for word in words:
            if word in SEPARATORS:
                out.append([])
            else:
                out[-1].append(word)
        return [segment for segment in out if segment]

    def cli_args(self) -> list[list[str]]:
        """The arguments after ``parlai-acute`` of each of its simple commands that runs parlai-acute
        (environment assignments before it skipped)."""
        found = []
        for words in self.segments():
            while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                words = words[1:]
            if words and words[0] == "parlai-acute":
                found.append(words[1:])
        return found

    def python_code(self) -> str | None:
        """The code of a ``python -c CODE`` command, else None."""
        words = self.segments()
        if len(words) == 1 and words[0][:2] == ["python", "-c"] and len(words[0]) == 3:
            return words[0][2]
        return None


@dataclass
class Block:
    path: Path
    line: int                 # line of the opening fence
    lang: str
    lines: list[str]
    mark: str | None = None   # "not run" / "parse only"
    reason: str = ""

    @property
    def name(self) -> str:
        return f"{rel(self.path)}:{self.line}"

    def commands(self) -> list[Command]:
        commands: list[Command] = []
        current: Command | None = None  # the `$` command whose output lines follow
        i = 0
        while i < len(self.lines):
            line, number = self.lines[i], self.line + 1 + i
            if line.startswith("$ ") or line.startswith("parlai-acute "):
                text = line[2:] if line.startswith("$ ") else line
                while text.endswith("\\") and i + 1 < len(self.lines):
                    i += 1
                    text = text[:-1] + " " + self.lines[i].strip()
                command = Command(text.strip(), number)
                commands.append(command)
                current = command if line.startswith("$ ") else None
            elif current is not None:
                current.output.append(line.rstrip())
            i += 1
        for command in commands:  # blank lines closing a block's output are not output
            while command.output and not command.output[-1]:
                command.output.pop()
        return commands


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the marker on the line before it."""
    found, lines = [], path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```\s*([A-Za-z0-9_+-]*)\s*$", lines[i])
        if fence:
            start, body = i, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            block = Block(path, start + 1, fence.group(1).lower(), body)
            before = start - 1
            while before >= 0 and not lines[before].strip():
                before -= 1
            mark = MARKER.match(lines[before].strip()) if before >= 0 else None
            if mark:
                block.mark, block.reason = mark.group(1), mark.group(2)
            found.append(block)
        i += 1
    return found


def markers(path: Path) -> list[tuple[int, str, str]]:
    """Every marker comment of a file: (line, kind, reason)."""
    return [(n, m.group(1), m.group(2)) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if (m := MARKER.match(line.strip()))]


def all_blocks() -> list[Block]:
    return [block for path in doc_files() for block in blocks(path)]


def python_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang == "python"]


def shell_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang in SHELL and b.commands()]


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether printed lines are what a block shows: line for line (trailing spaces ignored), where a
    shown line ``...`` stands for any number of printed lines."""
    printed = [line.rstrip() for line in printed]
    reach = {0}  # positions in printed reachable after the shown lines so far
    for want in shown:
        if want.strip() == "...":
            reach = set(range(min(reach), len(printed) + 1)) if reach else set()
        else:
            reach = {i + 1 for i in reach if i < len(printed) and printed[i] == want}
    return len(printed) in reach


def command_path(args: list[str]) -> list[str]:
    """The subcommand words of ``args`` (as main.build_parser finds them)."""
    from parlai_acute.scripts.main import COMMANDS

    entry, path = COMMANDS, []
    for token in args:
        if isinstance(entry, dict) and token in entry and token != "_help":
            entry, path = entry[token], path + [token]
        elif not token.startswith("-"):
            break
    return path


def cheap(args: list[str]) -> bool:
    """A command that reads tables or prints help: seconds, no model, no server."""
    path = command_path(args)
    return bool(path) and (path[-1] in CHEAP or any(a in HELP for a in args))


def executed(block: Block) -> bool:
    """Whether the tests run a shell block: no marker, and every command ``python -c`` or one
    cheap ``parlai-acute`` command."""
    if block.mark or block.lang not in SHELL:
        return False
    for command in block.commands():
        if command.python_code() is not None:
            continue
        args = command.cli_args()
        if len(args) != 1 or not command.text.startswith("parlai-acute ") or not cheap(args[0]):
            return False
    return bool(block.commands())


@dataclass
class Ran:
    command: Command
    status: int
    out: list[str]
    err: list[str]


def run_block(block: Block, directory: Path) -> list[Ran]:
    """Run an executed block's commands in order in ``directory`` (``python -c`` as exec, parlai-acute
    through ``scripts.main.main``), each with its exit status and printed lines."""
    from parlai_acute.scripts.main import main

    results, here = [], os.getcwd()
    os.chdir(directory)
    try:
        for command in block.commands():
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = command.python_code()
                if code is not None:
                    exec(compile(code, f"{rel(block.path)}:{command.line}", "exec"), {"__name__": "__main__"})
                    status = 0
                else:
                    try:
                        status = main(command.cli_args()[0])
                    except SystemExit as stop:  # --help
                        status = int(stop.code or 0)
            results.append(Ran(command, status, out.getvalue().splitlines(), err.getvalue().splitlines()))
    finally:
        os.chdir(here)
    return results


def refresh(path: Path) -> int:
    """Write what each executed block of ``path`` prints now as its shown output; the number of
    commands whose shown output changed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    changed = 0
    for block in reversed(blocks(path)):  # from the end, so earlier line numbers stay right
        if not executed(block):
            continue
        shown = [c for c in block.commands() if c.output]
        if any(line.strip() == "..." for c in shown for line in c.output):
            print(f"{block.name}: elides output with '...'; left as it is (edit it by hand)")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            ran = {r.command.line: r for r in run_block(block, Path(tmp))}
        for command in reversed(shown):
            r = ran[command.line]
            now = [line.rstrip() for line in (r.err if any(
                line.startswith("parlai-acute: error:") for line in command.output) else r.out)]
            last = next(i for i in range(command.line, len(lines) + 1) if not lines[i - 1].rstrip().endswith("\\"))
            first = last + 1  # the first output line, after the command's continuation lines
            if lines[first - 1:first - 1 + len(command.output)] != now:
                lines[first - 1:first - 1 + len(command.output)] = now
                changed += 1
    if changed:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


if __name__ == "__main__":
    if sys.argv[1:] != ["--refresh"]:
        raise SystemExit("usage: PYTHONPATH=. python tests/docs/doc_blocks.py --refresh")
    for page in doc_files():
        if (n := refresh(page)):
            print(f"{rel(page)}: {n} command(s) now show what they print")
