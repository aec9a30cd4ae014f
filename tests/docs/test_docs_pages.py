"""The pages themselves: the README is a short door, every relative link leads somewhere, and the
CLI reference is what the parsers print now."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from doc_blocks import ROOT, blocks, doc_files, rel

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"^#{1,6}\s+(.*)$", line)):
            found.add(slug(heading.group(1)))
    return found


def links(path: Path) -> list[tuple[int, str]]:
    """Relative links outside code blocks and inline code: (line, target)."""
    out, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: are not files
                out.append((number, target))
    return out


@pytest.mark.parametrize("path", doc_files(), ids=rel)
def test_every_relative_link_resolves(path):
    for number, target in links(path):
        file, _, anchor = target.partition("#")
        goal = (path.parent / file).resolve() if file else path
        assert goal.exists(), f"{rel(path)}:{number}: {target} does not exist"
        if anchor and goal.suffix == ".md":
            assert anchor in anchors(goal), f"{rel(path)}:{number}: no heading #{anchor} in {rel(goal)}"


def test_the_readme_is_a_door():
    """At most 250 lines; the name, one sentence, then the two commands (make demo, make test)."""
    readme = ROOT / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
    assert lines[0] == "# parlai_acute"
    first = blocks(readme)[0]
    assert first.line <= 6, "the two commands come right after the sentence"
    assert [line.split()[:2] for line in first.lines if line.startswith("make")] == [["make", "demo"], ["make", "test"]]
    for page in ("docs/index.md", "docs/install.md", "docs/cli.md", "docs/python_api.md"):
        assert f"({page})" in readme.read_text(encoding="utf-8"), f"the README links {page}"


def test_the_cli_reference_is_what_the_parsers_print():
    from parlai_acute.scripts import cli_reference

    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == cli_reference.reference(), (
        "docs/cli.md is out of date: python -m parlai_acute.scripts.cli_reference --write")


def test_the_cli_reference_has_every_command():
    from parlai_acute.scripts import cli_reference

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for path, _ in cli_reference.commands():
        assert f"\n## parlai-acute {' '.join(path)}\n" in text
        assert f"usage: parlai-acute {' '.join(path)}" in text
