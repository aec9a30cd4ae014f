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


@pytest.mark.timeout(600)
def test_a_wheel_of_the_checkout_carries_the_package_data(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    [wheel] = tmp_path.glob("parlai_acute-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("parlai_acute/api.py", "parlai_acute/acute/onboarding/default.jsonl",
                   "parlai_acute/mephisto_tasks/frontend/mephisto_live.js",
                   "parlai_acute/mephisto_tasks/per_turn/hydra_configs/conf/default.yaml"):
        assert needed in names, needed
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Requires-Dist: statsmodels" in text and 'Provides-Extra: live' in text
