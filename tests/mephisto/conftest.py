"""Fixtures for the ACUTE-Eval Mephisto task tests (helpers in acute_task_helpers.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from acute_task_helpers import Launcher, free_port


@pytest.fixture()
def launch(tmp_path):
    """Start launchers; every one still running at the end is killed."""
    started: list[Launcher] = []

    def start(pairings: Path, *overrides: str, data_dir: Path | None = None, port: int | None = None,
              task_name: str = "acute_test") -> Launcher:
        launcher = Launcher(data_dir or tmp_path / "mephisto_data", pairings, port or free_port(),
                            tmp_path / f"launch{len(started)}.log", *overrides, task_name=task_name)
        started.append(launcher)
        return launcher

    yield start
    for launcher in started:
        launcher.kill_all()


@pytest.fixture(scope="module")
def chromium():
    from parlai_acute.mephisto_tasks.acute.simulated_workers import browser

    with browser() as instance:
        yield instance


@pytest.fixture()
def launch_per_turn(tmp_path):
    """Start ``parlai-acute per-turn launch`` subprocesses; every one still running at the end is killed."""
    from parlai_acute.mephisto_tasks.live.local_run import LocalRun

    started: list = []

    def start(*args: str, data_dir: Path | None = None, task_name: str = "per_turn_test", env: dict | None = None):
        run = LocalRun(data_dir or tmp_path / "per_turn_data", list(args), free_port(),
                       tmp_path / f"per_turn_launch{len(started)}.log", group="per-turn", task_name=task_name, env=env)
        started.append(run)
        return run

    yield start
    for run in started:
        run.kill_all()


@pytest.fixture()
def launch_task(tmp_path):
    """Start ``parlai-acute GROUP launch`` subprocesses (ssa, multiref, ...); every one still running is killed."""
    from parlai_acute.mephisto_tasks.live.local_run import LocalRun

    started: list = []

    def start(group: str, *args: str, data_dir: Path | None = None, task_name: str | None = None):
        run = LocalRun(data_dir or tmp_path / f"{group}_data", list(args), free_port(),
                       tmp_path / f"{group}_launch{len(started)}.log", group=group,
                       task_name=task_name or f"{group}_test")
        started.append(run)
        return run

    yield start
    for run in started:
        run.kill_all()


@pytest.fixture()
def runs():
    """LocalRun launchers a test starts (and relaunches); every one still running at the end is killed."""
    started: list = []
    yield started
    for run in started:
        run.kill_all()
