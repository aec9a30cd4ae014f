"""Multi-reference collection end to end: a contexts file in the DailyDialog multi-reference layout,
mode 2R2W, scripted writers in real headless Chromium (typing key by key, Enter and the button)
and one protocol-level client. One launch serves every check.

The export must hold exactly what the workers typed, in the DailyDialog multi-reference layout,
and the timing CSVs what the pages reported; no worker writes for a context twice; the server
refuses short and repeated replies whatever a client sends; texts are shown as text.
"""
from __future__ import annotations

import csv
import json

from label_task_helpers import XSS, open_db, write_jsonl

from parlai_acute.mephisto_tasks.multiref import simulated_workers as sw
from parlai_acute.mephisto_tasks.multiref import store
from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
from parlai_acute.scripts.main import main

DIALOGUES = [
    {"id": "dd-1", "fold": "test", "dialogue": [{"text": "Hi, how was your trip to Rome?", "responses": []},
                                                {"text": "Wonderful, the food was amazing."}]},
    {"id": "dd-2", "dialogue": [{"text": "Can you help me move on Saturday?"}, {"text": "Sure, what time?"},
                                {"text": XSS, "responses": ["an older reference, not collected here"]},
                                {"text": "Great, see you then."}]},
    [{"text": "I just adopted a puppy!"}, {"text": "Congratulations! What breed?"}],
]


def write(item, j):
    return f"  Reply {j}   to: {item['context'][-1]['text'][:12]} ({len(item['written'])} before)  "


def test_multiref_export_is_what_workers_typed_and_the_server_checks_every_reply(tmp_path, launch_task, chromium):
    contexts = write_jsonl(tmp_path / "dialogues.jsonl", DIALOGUES)
    task = launch_task("multiref", "--contexts", str(contexts), "mephisto.blueprint.mode=2R2W",
                       "mephisto.blueprint.contexts_per_unit=2",
                       "mephisto.blueprint.fast_reply_seconds=60")  # every scripted reply counts as fast
    task.wait_ready()
    assert "(2R2W): 6 reply sets to collect (3 contexts x 2 workers x 2 replies" in task.log()
    pages, xss = [], []

    def hook(page, view):
        pages.append(page.content())
        xss.append(page.evaluate("[window.__xss, document.querySelectorAll('#task img, #task b, #task script')"
                                 ".length]"))
        assert page.inner_text("#remaining").startswith(f"{view['item']['remaining']} more repl")

    ann = sw.run_writer(chromium, task.url, "ann", "a1", write, page_hook=hook)
    bob = sw.run_writer(chromium, task.url, "bob", "b1", write, page_hook=hook)
    assert ann.status == bob.status == "complete" and len(ann.made) == len(bob.made) == 4
    assert any(XSS in t for r in (ann, bob) for m in r.made for t in m["context"])

    async def pushy():  # the page's protocol, sent directly: the server must check everything itself
        c = pw.Client(task.url, "pat", "p1")
        assert await c.open() == ""
        view = c.view
        refused = []
        for bad in ({"index": 1, "text": " a "}, {"index": 1, "text": "x" * 301}, {"index": 2, "text": "Hello there"},
                    {"index": 1, "text": "Hello there", "position": 2}):
            refused.append((await c.send({"type": "answer", "position": 1, **bad}))["error"])
        ok = await c.send({"type": "answer", "position": 1, "index": 1, "text": "Hello there!",
                           "timing": {"keys": [1, "x", None, 2.5], "clicks": "no", "via": "teleport"}})
        assert ok["error"] is None and ok["item"]["remaining"] == 1
        refused.append((await c.send({"type": "answer", "position": 1, "index": 2, "text": "hello THERE"}))["error"])
        view = await c.send({"type": "answer", "position": 1, "index": 2, "text": "What a surprise."})
        while view["status"] == "working":
            j = len(view["item"]["written"]) + 1
            view = await c.send({"type": "answer", "position": view["position"], "index": j, "text": f"Pat's reply {j}"})
            assert view["error"] is None
        await c.submit()
        await c.close()
        return refused, view["status"]

    refused, status = pw.run_sync(pushy)
    assert status == "complete"
    assert "at least 2 characters" in refused[0] and "under 300" in refused[1]
    assert "already received" in refused[2] and "already done" in refused[3]
    assert "different one" in refused[4]
    assert task.wait_exit(timeout=120) == 0  # every context has two workers' sets: the run ends by itself

    out = tmp_path / "refs.jsonl"
    assert main(["multiref", "export", "--task-name", "multiref_test", "--mephisto-db",
                 str(task.data_dir / "database.db"), "-o", str(out)]) == 0
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["id"] for d in exported] == ["dd-1", "dd-2", "d3"] and {tuple(d["modes"]) for d in exported} == {("2R2W",)}
    collected = {}
    for d in exported:
        with_responses = [i for i, t in enumerate(d["dialogue"]) if "responses" in t]
        assert len(with_responses) == 1  # the one context of each dialogue
        turn = d["dialogue"][with_responses[0]]
        assert len(turn["responses"]) == 4 and len(set(turn["response_workers"])) == 2  # 2 workers x 2 replies
        collected[turn["text"]] = list(zip(turn["response_workers"], turn["responses"]))
        assert "an older reference, not collected here" not in turn["responses"]
    assert [t["text"] for t in exported[1]["dialogue"]] == [t["text"] for t in DIALOGUES[1]["dialogue"]]
    for run in (ann, bob):  # exactly what each worker typed, in order, whitespace collapsed
        for m in run.made:
            mine = [t for w, t in collected[m["context"][-1]] if w.startswith(run.worker)]
            assert mine[m["index"] - 1] == m["text"]
    workers_per_context = {ctx: {w for w, _ in pairs} for ctx, pairs in collected.items()}
    assert all(len(ws) == 2 for ws in workers_per_context.values())  # never the same worker twice

    # the same replies as the protocol's table, read by task name without the blueprint (Python API)
    from parlai_acute import api

    table = api.load_table("multiref", task_name="multiref_test", mephisto_db=task.data_dir / "database.db")
    assert len(table) == 12 and set(table["mode"]) == {"2R2W"} and table["context_id"].nunique() == 3
    assert sorted(zip(table["worker"], table["reply"])) == sorted(p for pairs in collected.values() for p in pairs)
    assert api.analyze("multiref", table, bootstrap=20).modes.at[0, "contexts"] == 3

    # timing: what the pages reported, flagged as such; server seconds and fast flags beside it
    with open(tmp_path / "refs.reply_timing.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 12 and {r["client_reported"] for r in rows} == {"True"}
    for run in (ann, bob):
        for m in run.made:
            [row] = [r for r in rows if r["worker"].startswith(run.worker) and r["text"] == m["text"]]
            assert row["client_via"] == m["via"]
            # every character typed is a key press; Enter is one more
            assert int(row["client_keys"]) == len(m["typed"]) + (m["via"] == "enter")
            assert int(row["client_clicks"]) >= 1 + (m["via"] == "button")  # into the field (and the button)
    pat_rows = [r for r in rows if r["worker"].startswith("simulated-pat")]
    assert pat_rows[0]["client_keys"] == "2" and pat_rows[0]["client_via"] == ""  # sanitised, as reported
    db = open_db(task.data_dir)
    replies = store.reply_records(store.unit_data_for_task(db, "multiref_test"))
    # three fast replies in a row (default streak) warn: replies 3 and 4 of each unit
    assert [len(r.warnings) for r in (ann, bob)] == [2, 2] and "very quickly" in ann.warnings[0]
    for run in (ann, bob):  # the warnings the pages showed are the replies flagged in the data
        assert sum(r["warned"] for r in replies if r["worker"].startswith(run.worker)) == len(run.warnings)
    with open(tmp_path / "refs.worker_timing.csv", newline="") as fh:
        per_worker = {r["worker"].split("_")[0]: r for r in csv.DictReader(fh)}
    assert {k: per_worker[k]["replies"] for k in per_worker} == {
        "simulated-ann": "4", "simulated-bob": "4", "simulated-pat": "4"}
    assert pages and xss and all(x == [None, 0] for x in xss)

    # `metrics score` scores the collected contexts only (one per dialogue here), not the earlier
    # turns of each dialogue as single-reference items; in a new process, as a user runs it
    from fresh_process import run_cli

    replies = tmp_path / "replies.txt"
    replies.write_text("I am not sure.\n" * len(collected))
    done = run_cli("metrics", "score", "--data", out, "--replies", replies, "--metrics", "f1", "--bootstrap", "0",
                   "-o", tmp_path / "score")
    assert done.code == 0, done.err
    assert done.out.startswith(f"{len(collected)} contexts, "), done.out

