"""Installable as a package: setup.py's ranges admit the lock's pins (``make install`` uses the
lock with --no-deps), the analysis core needs none of ParlAI, Mephisto or torch, and a wheel
built from the checkout carries every file the package reads."""
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
from parlai_acute.stats.simulate import simulate_judgments
from parlai_acute.perturn.simulate import simulate_turns
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


def test_the_blocker_does_block():
    done = subprocess.run([sys.executable, "-c", BLOCKED + "import parlai_acute.mephisto_tasks.json_state"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "an analysis-only install" in done.stderr


def _core_closure() -> list:
    """The installed distributions the analysis core needs: setup.py's install_requires and theirs."""
    import importlib.metadata as md

    todo = [Requirement(r).name for r in setup_arguments()["install_requires"]]
    seen, found = set(), []
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        dist = md.distribution(name)
        found.append(dist)
        for text in dist.requires or []:
            req = Requirement(text)
            if not req.marker or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


@pytest.mark.timeout(600)
def test_a_wheel_installs_into_a_fresh_venv_with_the_core_only_and_the_readme_api_runs(tmp_path):
    """A plain venv (no system site-packages), our wheel installed by pip without an index, and of the
    third-party packages only the analysis core's closure (linked from this environment: this machine
    has no package index and pip's cache holds no wheels). ``pip check`` must find every requirement
    met, ParlAI, Mephisto and torch must be absent, and the README's Python API examples must run."""
    import os

    wheels = tmp_path / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(wheels), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    [wheel] = wheels.glob("parlai_acute-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("parlai_acute/api.py", "parlai_acute/acute/onboarding/default.jsonl",
                   "parlai_acute/mephisto_tasks/frontend/mephisto_live.js",
                   "parlai_acute/mephisto_tasks/per_turn/hydra_configs/conf/default.yaml"):
        assert needed in names, needed
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "Requires-Dist: statsmodels" in metadata and "Provides-Extra: live" in metadata

    venv = tmp_path / "fresh"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True, timeout=120)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # this checkout must not look installed
    done = subprocess.run(pip + ["install", "--no-index", "--no-deps", "-q", str(wheel)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    core = tmp_path / "core"
    core.mkdir()
    for dist in _core_closure():
        base = Path(dist.locate_file(""))
        for top in {str(f).split("/")[0] for f in dist.files or []}:
            if not top.startswith("..") and not top.endswith(".pth") and top != "__pycache__" \
                    and (base / top).exists() and not (core / top).exists():
                (core / top).symlink_to(base / top)
    site = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, check=True).stdout.strip()
    (Path(site) / "analysis_core.pth").write_text(str(core) + "\n")
    done = subprocess.run(pip + ["check"], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0 and "No broken requirements" in done.stdout, done.stdout + done.stderr

    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    script = "\n".join(re.findall(r"```python\n(.*?)```", readme, flags=re.S))
    probe = ("import importlib.util as u, parlai_acute\n"
             "print('absent', [m for m in ('parlai', 'mephisto', 'torch', 'transformers') if u.find_spec(m) is None])\n"
             "print('from', parlai_acute.__file__)\n")
    done = subprocess.run([str(python), "-c", probe + script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "absent ['parlai', 'mephisto', 'torch', 'transformers']" in done.stdout
    assert f"from {site}" in done.stdout  # the installed wheel, not the checkout
    assert (tmp_path / "ssa_out" / "report.html").is_file()
