"""What every task's SIMULATED workers share: Debian's Chromium, their name prefix, their address.

For demos, tests and benchmarks only. Every simulated worker's name starts with ``simulated-``
so their answers can never be mistaken for people's.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

PREFIX = "simulated-"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@contextlib.contextmanager
def browser(headless: bool = True) -> Iterator:
    """A headless Debian chromium (Playwright's own browser download does not work offline)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=headless)
        try:
            yield instance
        finally:
            instance.close()


def simulated_name(worker: str) -> str:
    return worker if worker.startswith(PREFIX) else PREFIX + worker


def worker_url(base_url: str, worker: str, assignment: str) -> str:
    """Mock-provider address of one unit attempt (what a person would open)."""
    return f"{base_url.rstrip('/')}/?worker_id={simulated_name(worker)}&assignment_id={assignment}"
