"""Copy a task's page (plain HTML/CSS/JS, no build step, nothing from a CDN) into the router's build folder."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from mephisto.abstractions.blueprint import TaskBuilder

SHARED_FRONTEND_DIR = Path(__file__).parent / "frontend"


def page_builder(frontend_dir: Path) -> type:
    """A TaskBuilder class serving the shared scripts (``frontend/``) and the task's own ``frontend_dir``."""

    class PageBuilder(TaskBuilder):
        def build_in_dir(self, build_dir: str) -> None:
            static = os.path.join(build_dir, "static")
            os.makedirs(static, exist_ok=True)
            for folder in (SHARED_FRONTEND_DIR, frontend_dir):
                for item in folder.iterdir():
                    if item.is_file():
                        shutil.copy2(item, os.path.join(static, item.name))
            with open(os.path.join(build_dir, "done.built"), "w") as fh:
                fh.write("built!")

    return PageBuilder
