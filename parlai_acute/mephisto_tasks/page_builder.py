"""The TaskBuilder of this package's task pages: plain HTML/CSS/JS copied into the router.

No build step and nothing from a CDN. Each task's page sits in its own ``frontend/``
folder and uses the shared router-protocol client (``mephisto_tasks/frontend/``,
``mephisto_live.js``), so both folders are copied into the router's ``static/``.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from mephisto.abstractions.blueprint import TaskBuilder

SHARED_FRONTEND_DIR = Path(__file__).parent / "frontend"


class StaticPageBuilder(TaskBuilder):
    """Subclasses set :attr:`FRONTEND_DIR`, the task's own page; its files win over shared ones."""

    FRONTEND_DIR: Path

    def build_in_dir(self, build_dir: str) -> None:
        static = os.path.join(build_dir, "static")
        os.makedirs(static, exist_ok=True)
        for folder in (SHARED_FRONTEND_DIR, self.FRONTEND_DIR):
            for item in folder.iterdir():
                if item.is_file():
                    shutil.copy2(item, os.path.join(static, item.name))
        with open(os.path.join(build_dir, "done.built"), "w") as fh:
            fh.write("built!")
