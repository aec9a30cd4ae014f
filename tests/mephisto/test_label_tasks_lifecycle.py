"""SSA labelling and multi-reference tasks stopped mid-unit (SIGTERM) and relaunched, and bad input.

Nothing stored is lost, the relaunch hands out only what is missing (the unlabelled items of the
stopped unit go back; a context a worker had started is never given to them again), and every
mistake in the input is one line, exit status 2, before anything is created.
"""
from __future__ import annotations

import asyncio
import time
import json
import subprocess

import pytest

from label_task_helpers import SSA_ITEMS, open_db, write_jsonl

from parlai_acute.mephisto_tasks.live.local_run import free_port, launch_cmd, pid_alive
from parlai_acute.mephisto_tasks.multiref import store as multiref_store
from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
from parlai_acute.mephisto_tasks.ssa import store as ssa_store
from parlai_acute.scripts.main import main


async def _label_all(url, worker, assignment):
    c = pw.Client(url, worker, assignment)
    assert await c.open() == ""
    view = c.view
    while view["status"] == "working":
        view = await c.send({"type": "answer", "position": view["position"], "sensible": True, "specific": False})
    await c.submit()
    await c.close()
    return view["status"]


def test_ssa_sigterm_mid_unit_keeps_every_label_and_a_relaunch_continues(tmp_path, launch_task):
    items = write_jsonl(tmp_path / "items.jsonl", SSA_ITEMS)
    args = ("--items", str(items), "mephisto.blueprint.labels_per_item=1", "mephisto.blueprint.items_per_unit=3",
            "mephisto.blueprint.onboarding=false")
    task = launch_task("ssa", *args)
    task.wait_ready()
    [node] = task.node_pids()

    async def label_two_then_stop():
        c = pw.Client(task.url, "kim", "k1")
        assert await c.open() == ""
        view = c.view
        done = []
        for _ in range(2):
            done.append(view["item"]["reply"])
            view = await c.send({"type": "answer", "position": view["position"], "sensible": False})
        await asyncio.to_thread(task.terminate)  # the worker is still on the page, mid-unit
        await c.close()
        return done

    kim_labelled = pw.run_sync(label_two_then_stop)
    assert task.proc.returncode == 0 and not pid_alive(node), "the Node router outlived the launcher"
    records = ssa_store.labels_for_task(open_db(task.data_dir), "ssa_test")
    assert sorted(r["reply"] for r in records) == sorted(kim_labelled)
    assert {(r["sensible"], r["specific"]) for r in records} == {(False, False)}
    assert "2 labels stored" in task.log()

    again = launch_task("ssa", *args, data_dir=task.data_dir)
    again.wait_ready()
    assert "2 labels to collect" in again.log()  # kim's third item went back; the two labels count
    assert pw.run_sync(lambda: _label_all(again.url, "lee", "l1")) == "complete"
    assert again.terminate() == 0  # (that a run ends by itself once complete is checked end to end)
    records = ssa_store.labels_for_task(open_db(task.data_dir), "ssa_test")
    assert sorted(r["item"] for r in records) == sorted(i["item_id"] for i in SSA_ITEMS)
    assert len({r["run_id"] for r in records}) == 2


def test_multiref_sigterm_mid_context_keeps_the_replies_and_never_gives_the_context_back(tmp_path, launch_task):
    dialogues = write_jsonl(tmp_path / "d.jsonl", [[{"text": "Hi there!"}, {"text": "Hello."}],
                                                   [{"text": "What's your favourite film?"}, {"text": "Alien."}]])
    args = ("--contexts", str(dialogues), "mephisto.blueprint.contexts_per_unit=2")
    task = launch_task("multiref", *args)
    task.wait_ready()

    async def write_six_then_stop():
        c = pw.Client(task.url, "kim", "k1")
        assert await c.open() == ""
        view = c.view
        for n in range(6):  # four replies to the first context, two to the second
            j = len(view["item"]["written"]) + 1
            view = await c.send({"type": "answer", "position": view["position"], "index": j,
                                 "text": f"Kim's reply number {n}"})
            assert view["error"] is None
        await asyncio.to_thread(task.terminate)
        await c.close()

    pw.run_sync(write_six_then_stop)
    assert task.proc.returncode == 0
    rows = multiref_store.reply_records(multiref_store.unit_data_for_task(open_db(task.data_dir), "multiref_test"))
    assert [r["text"] for r in rows] == [f"Kim's reply number {n}" for n in range(6)]
    assert [r["set_complete"] for r in rows] == [True] * 4 + [False] * 2

    again = launch_task("multiref", *args, data_dir=task.data_dir)
    again.wait_ready()
    assert "1 reply sets to collect" in again.log()

    async def kim_then_lee():
        kim = pw.Client(again.url, "kim", "k2")
        # kim started the remaining context: never given to kim again (kim's unfinished unit k1 could
        # be continued from its own assignment, so on a new one kim is told there is no work)
        refused = await kim.open() or kim.view.get("status") == "unavailable"
        lee = pw.Client(again.url, "lee", "l1")
        assert await lee.open() == ""
        view = lee.view
        while view["status"] == "working":
            j = len(view["item"]["written"]) + 1
            view = await lee.send({"type": "answer", "position": view["position"], "index": j, "text": f"Lee {j}"})
        await lee.submit()
        await lee.close()
        return refused, view["status"]

    refused, status = pw.run_sync(kim_then_lee)
    assert refused and status == "complete"
    assert again.terminate() == 0
    out = tmp_path / "refs.jsonl"
    assert main(["multiref", "export", "--task-name", "multiref_test", "--mephisto-db",
                 str(task.data_dir / "database.db"), "-o", str(out)]) == 0
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [t.get("responses") for d in exported for t in d["dialogue"]] == [
        [f"Kim's reply number {n}" for n in range(4)], None, [f"Lee {j}" for j in range(1, 5)], None]


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("parlai-acute: error: "), err
    return err[0]


@pytest.mark.parametrize("lines, overrides, message", [
    ([{"item_id": "a", "context": [], "reply": "ok", "model": "m"}], [], "has an empty context"),
    ([{"item_id": "a", "context": ["hi", " "], "reply": "ok", "model": "m"}], [], "context turn 2 is empty"),
    ([{"item_id": "a", "context": ["hi"], "reply": "ok", "model": "m"}] * 2, [], "already used at line 1"),
    ([{"item_id": "a", "context": ["hi"], "reply": "ok"}], [], "has no model"),
    ([{"item_id": "a", "context": ["hi"], "reply": "ok", "model": "m"}], ["mephisto.blueprint.labels_per_item=0"],
     "labels_per_item must be a whole number of at least 1, got 0"),
    ([{"item_id": "a", "context": ["hi"], "reply": "ok", "model": "m"}], ["mephisto.blueprint.items_per_unit=-1"],
     "items_per_unit must be"),
])
def test_ssa_bad_input_is_one_line_and_exit_2(tmp_path, capsys, lines, overrides, message):
    items = write_jsonl(tmp_path / "items.jsonl", lines)
    data = tmp_path / "data"
    line = _error(capsys, ["ssa", "launch", "--data-dir", str(data), "--items", str(items), *overrides])
    assert message in line and not data.exists()


@pytest.mark.parametrize("lines, overrides, message", [
    ([{"dialogue": []}], [], "empty context (the dialogue has no turns)"),
    ([[]], [], "empty context"),
    ([{"dialogue": [{"text": "hi"}, {"text": ""}]}], [], "turn 2 has an empty context text"),
    (None, ["mephisto.blueprint.mode=0R1W"], "replies per worker must be at least 1, got 0"),
    (None, ["mephisto.blueprint.replies_per_worker=0"], "replies per worker must be at least 1, got 0"),
    (None, ["mephisto.blueprint.mode=four"], "is not a collection mode"),
    (None, ["mephisto.blueprint.contexts_per_unit=0"], "contexts_per_unit must be"),
])
def test_multiref_bad_input_is_one_line_and_exit_2(tmp_path, capsys, lines, overrides, message):
    data = tmp_path / "data"
    argv = ["multiref", "launch", "--data-dir", str(data), *overrides]
    if lines is not None:
        argv += ["--contexts", str(write_jsonl(tmp_path / "d.jsonl", lines))]
    line = _error(capsys, argv)
    assert message in line and not data.exists()


def test_missing_files_and_the_real_exit_status(tmp_path, capsys):
    assert "SSA items file" in _error(capsys, ["ssa", "launch", "--items", str(tmp_path / "nope.jsonl")])
    assert "no items file; pass --items FILE" in _error(capsys, ["ssa", "launch", "--data-dir", str(tmp_path / "d")])
    assert "is empty" in _error(capsys, ["multiref", "launch", "--contexts", str(write_jsonl(tmp_path / "e.jsonl", []))])
    assert "does not exist" in _error(capsys, ["multiref", "export", "--task-name", "x", "--mephisto-db",
                                               str(tmp_path / "none.db"), "-o", str(tmp_path / "o.jsonl")])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("{\"dialogue\": []}\n")
    result = subprocess.run(launch_cmd("--contexts", str(empty), f"mephisto.architect.port={free_port()}",
                                       group="multiref"), capture_output=True, text=True, timeout=180)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"parlai-acute: error: {empty}:1: empty context (the dialogue has no turns); give each dialogue at least "
        f"one turn"]


def test_ssa_a_worker_who_leaves_gives_the_unlabelled_items_back(tmp_path, launch_task):
    items = write_jsonl(tmp_path / "items.jsonl", SSA_ITEMS[:3])
    task = launch_task("ssa", "--items", str(items), "mephisto.blueprint.labels_per_item=1",
                       "mephisto.blueprint.items_per_unit=3", "mephisto.blueprint.onboarding=false")
    task.wait_ready()

    async def label_one_and_leave():
        c = pw.Client(task.url, "lou", "l1")
        assert await c.open() == ""
        view = await c.send({"type": "answer", "position": 1, "sensible": True, "specific": True})
        assert view["error"] is None
        await c.sock.send(c._packet("heartbeat", {}))  # as a page does: the router now watches for silence
        await c.close()  # gone: no submit, no more heartbeats

    pw.run_sync(label_one_and_leave)
    # the router notices the silent page, Mephisto marks the agent disconnected and the runner gives
    # lou's two unlabelled items back; until then there is no work for anybody else
    deadline, status = time.time() + 120, ""
    while time.time() < deadline:
        try:
            status = pw.run_sync(lambda: _label_all(task.url, "max", f"m{int(time.time() * 1000)}"))
            break
        except AssertionError:  # "no unit for you" yet
            time.sleep(3)
    assert status == "complete"
    assert task.wait_exit(timeout=120) == 0
    records = ssa_store.labels_for_task(open_db(task.data_dir), "ssa_test")
    by_worker = {w: sorted(r["item"] for r in records if r["worker"] == w) for w in {r["worker"] for r in records}}
    assert sorted(len(v) for v in by_worker.values()) == [1, 2]
    assert sorted(r["item"] for r in records) == sorted(i["item_id"] for i in SSA_ITEMS[:3])
