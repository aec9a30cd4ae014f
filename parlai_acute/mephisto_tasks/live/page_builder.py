"""The TaskBuilder of this package's task pages: plain HTML/CSS/JS copied into the router.

No build step and nothing from a CDN. Each task's page sits in its own ``frontend/``
folder and uses the shared router-protocol client (``mephisto_tasks/live/frontend/``,
``mephisto_live.js``), so both folders are copied into the router's ``static/``, and its
``index.html`` is the shared frame around the task's ``main.html``.
"""
from __future__ import annotations

import json
import os
import shutil
import string
from pathlib import Path

from mephisto.abstractions.blueprint import TaskBuilder

from parlai_acute.files import atomic_write
from parlai_acute.mephisto_tasks.live.texts import live_texts

SHARED_FRONTEND_DIR = Path(__file__).parent / "frontend"


def page_html(frontend_dir: Path) -> str:
    """A task's ``index.html``: the shared frame (``frontend/page.html``: head, router client, title,
    progress and status lines) around the task's ``main.html``, styled by the one ``.css`` file in
    its folder. Every page has the same frame, so they cannot drift apart. The shared lines
    (:func:`.texts.live_texts`) are written into the page itself: a page whose server is down
    at its first load can still say so."""
    stylesheets = sorted(p.name for p in frontend_dir.glob("*.css"))
    if len(stylesheets) != 1:
        raise ValueError(f"{frontend_dir} must hold exactly one .css file (found {len(stylesheets)})")
    frame = string.Template((SHARED_FRONTEND_DIR / "page.html").read_text(encoding="utf-8"))
    main = (frontend_dir / "main.html").read_text(encoding="utf-8").rstrip("\n")
    # JSON inside <script>: "</" could end the element early, so it is escaped
    lines = json.dumps(live_texts(), ensure_ascii=False).replace("</", "<\\/")
    return frame.substitute(stylesheet=stylesheets[0], main=main, live_texts=lines)


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
        with atomic_write(Path(static) / "index.html") as fh:
            fh.write(page_html(self.FRONTEND_DIR))
        with atomic_write(Path(build_dir) / "done.built") as fh:
            fh.write("built!")
