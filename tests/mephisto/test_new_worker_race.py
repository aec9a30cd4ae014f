"""``mephisto-worker-get-or-create`` (parlai_acute.compat) on the real local architect and database.

A brand-new worker opening several assignments at the same instant (or two browsers at once) made
Mephisto's ``WorkerPool.register_worker`` create the worker twice: the second insert hits the
UNIQUE worker name and that registration's ``/request_agent`` is never answered. With the fix every
registration is answered and each worker has one row. The launcher without the fix (its process
drops it before Mephisto is imported) shows the defect, so the pair keeps the fix honest.
"""
from __future__ import annotations

import asyncio
import os

import pytest
from per_turn_task_helpers import GENERIC

OTHER = "other_bot=parlai_acute.agents.generic_bot:GenericBotAgent"
WORKERS, PAGES = 3, 3  # new workers, and pages each opens at the same instant
ANSWER_WITHIN = 30  # seconds: an answered registration takes well under a second; this one never comes

NO_FIX = ("import parlai_acute.compat as compat\n"
          "compat.POST_IMPORT_FIXES.pop('mephisto.data_model.worker')\n")


def _register_new_workers_at_once(task):
    """Each new worker's PAGES pages (one assignment each) register together: the answers, and the
    worker rows of those names."""
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    async def one(worker, assignment):
        client = pw.Client(task.url, worker, assignment)
        try:
            return await asyncio.wait_for(client.open(), ANSWER_WITHIN)
        except asyncio.TimeoutError:
            return "unanswered"
        finally:
            await client.close()

    async def all_at_once():
        return await asyncio.gather(*(one(f"new{w}", f"n{w}x{p}") for w in range(WORKERS) for p in range(PAGES)))

    answers = pw.run_sync(all_at_once)
    from parlai_acute.mephisto_tasks.live import setup

    db = setup.open_db(task.data_dir)
    rows = {f"new{w}": len(db.find_workers(worker_name=f"simulated-new{w}_sandbox")) for w in range(WORKERS)}
    return answers, rows


@pytest.mark.parametrize("fixed", [True, False], ids=["with_fix", "without_fix"])
def test_simultaneous_first_registrations_of_a_new_worker(tmp_path, launch_per_turn, fixed):
    env = None
    if not fixed:
        site = tmp_path / "nofix"
        site.mkdir()
        (site / "sitecustomize.py").write_text(NO_FIX)
        env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    task = launch_per_turn("--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=2",
                           "mephisto.blueprint.max_turns=2", "mephisto.blueprint.onboarding=false",
                           f"mephisto.blueprint.target={WORKERS * PAGES}", env=env)
    task.wait_ready()
    answers, rows = _register_new_workers_at_once(task)
    assert rows == {f"new{w}": 1 for w in range(WORKERS)}  # the UNIQUE name: one row either way
    if fixed:
        assert answers == [""] * (WORKERS * PAGES), answers  # every page answered with a unit
    else:
        assert "unanswered" in answers, answers  # the defect the fix removes
        assert "EntryAlreadyExistsException" in task.log()
