"""Installable as a package: setup.py's ranges admit the lock's pins (``make install`` uses the
lock with --no-deps), the analysis core needs none of ParlAI, Mephisto or torch, a wheel built
from the checkout carries every file the package reads, and ``pip install .`` into a fresh
``python -m venv`` (through the configured package index, held to ParlAI's own pins) gives a
working ``parlai-acute`` and runs the Python API examples of docs/python_api.md."""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def setup_arguments() -> dict:
    """What setup.py passes to setuptools.setup, without running setuptools."""
    captured = {}
    import setuptools

    real = setuptools.setup
    setuptools.setup = lambda **kwargs: captured.update(kwargs)
    try:
        exec(compile((ROOT / "setup.py").read_text(), "setup.py", "exec"), {"__name__": "__main__"})
    finally:
        setuptools.setup = real
    return captured


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)", line)
        if match:
            pins[match[1].lower().replace("_", "-")] = match[2]
    return pins


def test_every_declared_range_admits_the_locked_version():
    args, pins = setup_arguments(), lock_pins()
    every = args["install_requires"] + [r for extra in args["extras_require"].values() for r in extra]
    assert set(args["extras_require"]) == {"live", "models", "metrics", "all"}
    for text in every:
        req = Requirement(text)
        name = req.name.lower().replace("_", "-")
        assert name in pins, f"{name} is declared but not in requirements/lock.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"{text} excludes the lock's {pins[name]}"
    torch = [Requirement(r) for r in every if Requirement(r).name == "torch"]
    assert torch and {str(r.specifier) for r in torch} == {"==2.13.0"}  # never a range that admits another torch


def test_the_core_holds_no_model_or_crowdsourcing_stack():
    core = {Requirement(r).name.lower() for r in setup_arguments()["install_requires"]}
    assert core >= {"numpy", "scipy", "pandas", "statsmodels"}
    assert not core & {"torch", "parlai", "mephisto", "transformers", "xllamacpp", "hydra-core"}


BLOCKED = """
import importlib.abc, sys
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("parlai", "mephisto", "torch", "hydra", "transformers", "xllamacpp", "omegaconf"):
            raise ModuleNotFoundError(f"No module named {name!r} (an analysis-only install)")
sys.meta_path.insert(0, Blocked())
"""


def test_the_python_api_runs_without_parlai_mephisto_or_torch(tmp_path):
    """An analysis-only install, as a notebook user has: every protocol's table, analysis and outputs."""
    script = BLOCKED + f"""
import warnings
from parlai_acute import api
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.per_turn.simulate import simulate_turns
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute.convai2.simulate import simulate_ratings
tables = {{"acute": simulate_judgments({{"a": 0.3, "b": -0.3}}, 60, seed=0, workers=20),
          "per-turn": simulate_turns({{"a": 0.6, "b": 0.4}}, "pm", "soba", dialogues=10, seed=0),
          "ssa": simulate_labels({{"a": (0.8, 0.5), "b": (0.6, 0.3)}}, 10, seed=0),
          "convai2": simulate_ratings({{"a": 3.0, "b": 2.5}}, 10, 4, seed=0, rounded=True)}}
for name, table in tables.items():
    result = api.analyze(name, table, bootstrap=20, seed=0, **({{"max_per_worker": 10}} if name == "acute" else {{}}))
    paths = api.write_outputs(name, result, {str(tmp_path)!r} + "/" + name)
    assert "report.html" in paths and "run.json" in paths, (name, sorted(paths))
    print(name, "ok")
print(sorted(m for m in sys.modules if m.split(".")[0] in ("parlai", "mephisto", "torch")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["acute", "ok", "per-turn", "ok", "ssa", "ok", "convai2", "ok", "[]"]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(requirements) -> set[str]:
    """The installed distributions ``requirements`` bring, with their own requirements (markers
    evaluated, no extras of theirs): what pip would install for them, read from installed metadata."""
    import importlib.metadata as md

    seen, todo = set(), [Requirement(r) for r in requirements]
    while todo:
        req = todo.pop()
        if _norm(req.name) in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            continue
        seen.add(_norm(req.name))
        todo += [Requirement(r) for r in dist.requires or []]
    return seen


#: In every venv whatever it installs (python -m venv, and pytest's own).
_ANY_VENV = {"pip", "setuptools", "pkg_resources", "_distutils_hack"}


def plain_absent() -> list[str]:
    """The top-level modules ``pip install .`` does not give: those of every distribution the extras
    bring (with their requirements) and the core does not -- from setup.py and installed metadata,
    not from ``parlai_acute.extras`` (which this must check, not repeat)."""
    import importlib.metadata as md

    args = setup_arguments()
    extra_only = _closure(args["extras_require"]["all"]) - _closure(args["install_requires"])
    return sorted(m for m, dists in md.packages_distributions().items()
                  if "/" not in m and m not in _ANY_VENV and any(_norm(d) in extra_only for d in dists))


def plain_blocker() -> str:
    """Code that makes this Python an analysis-core install: each of :func:`plain_absent` is None in
    ``sys.modules``, so importing it fails and ``importlib.util.find_spec`` finds nothing, as where it
    is not installed (libraries probe optional packages with find_spec)."""
    return f"""
import sys
sys.modules.update(dict.fromkeys({plain_absent()!r}))
"""


def test_every_module_the_package_imports_is_the_cores_or_named_with_its_extra():
    """``parlai_acute.extras.MODULES`` (what the one-line "needs the X extra" says) is true to setup.py:
    each third-party module the package imports is the core's, or mapped to the extra that brings it."""
    import ast
    import importlib.metadata as md

    from parlai_acute import extras

    args, distributions = setup_arguments(), md.packages_distributions()
    imported = set()
    for path in (ROOT / "parlai_acute").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("find_spec", "import_module") \
                    and node.args and isinstance(node.args[0], ast.Constant):
                imported.add(node.args[0].value.split(".")[0])  # find_spec("chitchat_dataset") and the like
    imported = {m for m in imported if m not in sys.stdlib_module_names and m != "parlai_acute"}
    core = _closure(args["install_requires"])
    for module in sorted(imported):
        dists = {_norm(d) for d in distributions.get(module, [])}
        if dists & core:
            assert not extras.extras_of(module), f"{module} is the core's, yet extras.MODULES names it"
            continue
        assert extras.extras_of(module), f"{module} is imported but neither the core's nor in extras.MODULES"
        for extra in extras.extras_of(module):
            assert dists & _closure(args["extras_require"][extra]), f"{module} is not brought by the {extra} extra"


def test_every_command_on_the_analysis_core_works_or_names_its_extra(tmp_path):
    """The install table, true on an analysis-core install (the extras' packages blocked; the fresh
    venv below runs the same calls): every command's --help works; a command needing nothing beyond
    the core does its cheap call; one needing an extra (or an option of it that does) stops with one
    line naming ``pip install "parlai_acute[...]"`` and exits 2."""
    done = subprocess.run([sys.executable, "-c", plain_blocker() + _RUN_CALLS, str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    check_plain_calls(done.stdout, tmp_path)


_RUN_CALLS = f"\nimport runpy; runpy.run_path({str(Path(__file__).with_name('plain_commands.py'))!r}, " \
             "run_name='__main__')\n"


def check_plain_calls(stdout: str, directory: Path) -> None:
    """The rows ``plain_commands.py`` printed: each as the install table says."""
    import importlib
    import json

    from parlai_acute import extras
    from parlai_acute.scripts.main import COMMANDS
    from plain_commands import CALLS

    rows = [json.loads(line) for line in stdout.splitlines()]
    assert len(rows) == len(CALLS)

    def leaves(table, prefix=()):
        for name, entry in table.items():
            if isinstance(entry, dict):
                yield from leaves(entry, prefix + (name,))
            elif name != "_help":
                yield " ".join(prefix + (name,)), entry[0]

    modules = dict(leaves(COMMANDS))
    assert {row["command"] for row in rows if row["main"]} == set(modules)  # one main call for every command
    for row in rows:
        assert row.get("help", 0) == 0, row
        if row["main"]:
            assert row["needs"] == list(getattr(importlib.import_module(modules[row["command"]]), "NEEDS", ())), row
        if not row["needs"]:
            assert row["code"] == 0, row
            continue
        said = {e for e in extras.MODULES if f"the {e} extra" in row["stderr"]}
        assert row["code"] == 2 and row["stderr"].count("\n") == 1, row
        assert said == set(row["needs"]) and extras.pip_line(row["needs"]) in row["stderr"], row
    for made in ("acute_out", "perturn_out", "ssa_out", "convai2_out", "agreement", "logs", "correlate"):
        assert (directory / made / "report.html").is_file(), made


def test_the_blocker_does_block():
    done = subprocess.run([sys.executable, "-c", BLOCKED + "import parlai_acute.mephisto_tasks.live.json_state"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "an analysis-only install" in done.stderr


@pytest.mark.timeout(300)
def test_a_wheel_carries_every_file_the_package_reads_and_its_extras(tmp_path):
    """A wheel built from the checkout (what a lab installs from a wheel file) holds the package data
    (onboarding items, pages, Hydra configs) and declares the core and the extras."""
    wheels = tmp_path / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(wheels), str(_source_copy(tmp_path))], capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr[-2000:]
    [wheel] = wheels.glob("parlai_acute-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("parlai_acute/api.py", "parlai_acute/acute/onboarding/default.jsonl",
                   "parlai_acute/mephisto_tasks/live/frontend/mephisto_live.js",
                   "parlai_acute/mephisto_tasks/per_turn/hydra_configs/conf/default.yaml"):
        assert needed in names, needed
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "Requires-Dist: statsmodels" in metadata and "Provides-Extra: live" in metadata


#: What ``pip install .`` needs of the project directory (no checkout state: .venv, build/, caches).
_SOURCE_IGNORE = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "tests", "benchmarks", "docs",
                  ".*cache")


def _source_copy(tmp_path: Path) -> Path:
    """The project directory as a user has it, copied: a setuptools build writes build/ and *.egg-info
    beside the source, which must not land in this checkout (nor race another test's build)."""
    import shutil

    project = tmp_path / "project"
    shutil.copytree(ROOT, project, ignore=shutil.ignore_patterns(*_SOURCE_IGNORE), symlinks=True)
    return project


def parlai_pins_on_the_core() -> list[str]:
    """ParlAI 1.7.2's own requirements on packages the analysis core also needs (numpy~=1.23.0,
    tqdm~=4.62.1), from the installed ParlAI's metadata: what a lab's ParlAI environment holds."""
    import importlib.metadata as md

    core = {Requirement(r).name.lower() for r in setup_arguments()["install_requires"]}
    pins = [Requirement(r) for r in md.requires("parlai") or []]
    return [str(r) for r in pins if r.name.lower() in core and str(r.specifier) and not r.marker]


@pytest.mark.timeout(900)
def test_pip_install_dot_into_a_fresh_venv_gives_a_working_cli_and_the_documented_api(tmp_path):
    """The user's way: ``python -m venv`` (with pip), then ``pip install .`` from the project directory
    through the configured package index, resolver and all (not the lock): the default install is the
    analysis-only one, so the same venv shows both that ``parlai-acute`` works (``--help``, and every
    command's cheap call as the install table says: plain_commands.py) and that a notebook user's Python API
    examples (docs/python_api.md) run, with ParlAI, Mephisto and torch absent and ``pip check`` content. The
    venv first gets ParlAI's own pins on the core's packages (numpy~=1.23.0, tqdm~=4.62.1), as a lab's
    ParlAI environment has them, and the install is constrained by them as the install table's
    ``pip install . parlai`` makes pip
    keep ParlAI's requirements: the core's ranges must admit them and the package must run on them.
    """
    import os

    project = _source_copy(tmp_path)
    venv = tmp_path / "fresh"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(venv)], check=True, timeout=180)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    lab = parlai_pins_on_the_core()
    assert any(r.startswith("numpy") for r in lab), lab
    done = subprocess.run(pip + ["install", "-q", *lab], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    before = subprocess.run(pip + ["freeze"], capture_output=True, text=True, timeout=120, env=env).stdout.split()
    (tmp_path / "lab.txt").write_text("\n".join(before) + "\n")
    done = subprocess.run(pip + ["install", "-q", ".", "-c", str(tmp_path / "lab.txt")], cwd=project,
                          capture_output=True, text=True, timeout=540, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    done = subprocess.run(pip + ["check"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    after = subprocess.run(pip + ["freeze"], capture_output=True, text=True, timeout=120, env=env).stdout.split()
    kept = [line for line in before if Requirement(line.split("==")[0]).name.lower() in
            {Requirement(r).name.lower() for r in lab}]
    assert kept and set(kept) <= set(after), (kept, after)  # ParlAI's numpy and tqdm, kept

    cli = str(venv / "bin" / "parlai-acute")
    done = subprocess.run([cli, "--help"], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 0 and "ssa" in done.stdout and "acute" in done.stdout, done.stderr[-2000:]
    done = subprocess.run([cli, "multiref", "analyze", "--collection", "4R1W=refs.jsonl", "-o", "out"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 2 and 'pip install "parlai_acute[metrics]"' in done.stderr, done.stderr[-2000:]
    # every command as the install table says (the calls the blocked test above runs, here for real)
    done = subprocess.run([str(venv / "bin" / "python"), str(Path(__file__).with_name("plain_commands.py")),
                           str(tmp_path / "calls")], capture_output=True, text=True, timeout=400, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    check_plain_calls(done.stdout, tmp_path / "calls")

    page = (ROOT / "docs" / "python_api.md").read_text(encoding="utf-8")
    script = "\n".join(re.findall(r"```python\n(.*?)```", page, flags=re.S))
    probe = ("import importlib.util as u, parlai_acute\n"
             "print('absent', [m for m in ('parlai', 'mephisto', 'torch', 'transformers') if u.find_spec(m) is None])\n"
             "print('from', parlai_acute.__file__)\n")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe + script], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "absent ['parlai', 'mephisto', 'torch', 'transformers']" in done.stdout
    assert f"from {venv}" in done.stdout  # the installed package, not the checkout
    assert (tmp_path / "ssa_out" / "report.html").is_file()
