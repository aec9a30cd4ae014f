"""Static SSA labelling end to end: the local architect, the Mephisto database, scripted workers in real
headless Chromium and one protocol-level client. One launch serves every check.

What the database holds must be exactly what each worker clicked; no worker labels an item twice;
a worker who says a nonsensical reply makes sense is blocked; model names never reach the page;
texts are shown as text, never markup; the server refuses what breaks Meena's rules.
"""
from __future__ import annotations

from fresh_process import analyze_and_export
from label_task_helpers import GOLD, SSA_ITEMS, XSS, label_like_a_person, open_db, write_jsonl

from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
from parlai_acute.mephisto_tasks.ssa import simulated_workers as sw
from parlai_acute.mephisto_tasks.ssa import store


def test_ssa_labels_are_what_workers_clicked_gold_blocks_server_enforces(tmp_path, launch_task, chromium):
    items = write_jsonl(tmp_path / "items.jsonl", SSA_ITEMS)
    task = launch_task("ssa", "--items", str(items), "mephisto.blueprint.labels_per_item=2",
                       "mephisto.blueprint.items_per_unit=3")
    task.wait_ready()
    assert "8 labels to collect (4 items x 2 workers, 3 items per unit)" in task.log()
    pages, xss = [], []

    def hook(page, view):
        pages.append(page.content())
        xss.append(page.evaluate("[window.__xss, document.querySelectorAll('#task img, #task b, #task script')"
                                 ".length]"))
        if XSS in view["item"]["reply"]:
            assert page.inner_text("#reply") == view["item"]["reply"]  # the markup is shown as characters

    def contrarian(item):  # a different answer pattern, so labels cannot match by accident
        sensible, specific = label_like_a_person(item)
        return (sensible, not specific) if item["reply"] not in GOLD else (False, False)

    ann = sw.run_labeller(chromium, task.url, "ann", "a1", label_like_a_person, page_hook=hook)
    bob = sw.run_labeller(chromium, task.url, "bob", "b1", contrarian, page_hook=hook)
    rex = sw.run_labeller(chromium, task.url, "rex", "r1", lambda item: (True, True))  # calls nonsense sensible
    assert [r.status for r in (ann, bob, rex)] == ["complete", "complete", "blocked"]
    assert "cannot take part" in rex.message and "Thank you! Your answers are saved" in ann.message
    assert len(rex.made) == 1 and rex.made[0]["reply"] in GOLD

    async def pushy():  # speaks the page's protocol directly, as a tampered page could
        c = pw.Client(task.url, "pat", "p1")
        assert await c.open() == ""
        refused = []
        gold = c.view
        assert gold["item"]["reply"] in GOLD and gold["position"] == 1 and "item_id" not in gold["item"]
        for bad in ({"sensible": "yes"}, {"sensible": False, "specific": True}, {"sensible": True},
                    {"position": 2, "sensible": False}, {"type": "finish"}):
            view = await c.send({"type": "answer", "position": 1, **bad})
            refused.append(view["error"])
        view = await c.send({"type": "answer", "position": 1, "sensible": False, "specific": None})
        assert view["error"] is None and view["position"] == 2 and view["item"]["step"] == 1
        # "it makes sense" is a step the server keeps (a reload shows the second question); a bad step is refused
        view = await c.send({"type": "answer", "position": 2, "step": 2})
        assert view["error"] is None and view["item"]["step"] == 2 and view["done"] == 1
        view = await c.send({"type": "answer", "position": 2, "step": True})
        assert "first question" in view["error"] and view["item"]["step"] == 2
        labelled = []
        while view["status"] == "working":
            labelled.append(view["item"]["reply"])
            view = await c.send({"type": "answer", "position": view["position"], "sensible": True, "specific": True})
            assert view["error"] is None
        await c.submit()
        await c.close()
        return refused, labelled, view["status"]

    refused, pat_labelled, status = pw.run_sync(pushy)
    assert status == "complete" and len(pat_labelled) == 2
    assert "first question" in refused[0] and "cannot be specific" in refused[1]
    assert "second question" in refused[2] and "already done" in refused[3] and "Unknown action" in refused[4]
    assert task.wait_exit(timeout=120) == 0  # every item has its two labels: the run ends by itself

    db = open_db(task.data_dir)
    units = store.unit_data_for_task(db, "ssa_test")
    records = store.labels_for_task(db, "ssa_test")
    assert len(records) == 8
    by_worker: dict[str, dict] = {}
    for r in records:
        assert r["item"] not in by_worker.setdefault(r["worker"], {}), "a worker labelled an item twice"
        by_worker[r["worker"]][r["item"]] = r
    assert sorted(len(v) for v in by_worker.values()) == [2, 3, 3]
    for run in (ann, bob):
        mine = by_worker[next(w for w in by_worker if w.startswith(f"simulated-{run.worker.split('-')[1]}"))]
        clicked = [m for m in run.made if m["reply"] not in GOLD]
        assert len(clicked) == len(mine) == 3
        for m in clicked:
            [r] = [r for r in mine.values() if r["reply"] == m["reply"] and r["context"] == "\n".join(m["context"])]
            assert (r["sensible"], r["specific"]) == (m["sensible"], m["specific"])
            source = next(i for i in SSA_ITEMS if i["item_id"] == r["item"])
            assert r["model"] == source["model"] and r["source"] == "static"
    pat = next(v for w, v in by_worker.items() if w.startswith("simulated-pat"))
    assert sorted(r["reply"] for r in pat.values()) == sorted(pat_labelled)
    assert {(r["sensible"], r["specific"]) for r in pat.values()} == {(True, True)}
    assert {r["item"]: sum(x["item"] == r["item"] for x in records) for r in records} == {
        i["item_id"]: 2 for i in SSA_ITEMS}
    assert {r["context_id"] for r in records if r["item"].startswith("c1")} == {"c1"}
    # gold results kept apart from the labels; rex holds the block qualification
    gold = store.gold_results(units)
    assert sorted((g["worker"].split("_")[0], g["passed"]) for g in gold) == [
        ("simulated-ann", True), ("simulated-bob", True), ("simulated-pat", True), ("simulated-rex", False)]
    from mephisto.data_model.worker import Worker

    rex_name = next(g["worker"] for g in gold if not g["passed"])
    assert Worker.get(db, db.find_workers(worker_name=rex_name)[0].db_id).is_qualified("parlai_acute_ssa_block")
    # model names and item ids never reached a page; markup was never interpreted
    assert pages and not any(m in p for p in pages for m in ("smollm2_greedy", "generic_bot", "c1:smol"))
    assert xss and all(x == [None, 0] for x in xss)
    # the records are a valid SSA labels table (the other engineer's schema and checks)
    from parlai_acute.ssa.labels import labels_table

    table = labels_table(records)
    assert len(table) == 8 and table["decision_seconds"].notna().all()

    # a new process reaches the analysis and the labels table from the task name alone
    analysis, export = analyze_and_export("ssa", "ssa_test", task.data_dir, tmp_path, "labels.csv")
    assert "8 labels of 4 items by 3 workers" in analysis.out  # rex, blocked at the gold item, labelled none
    assert f"wrote {tmp_path / 'labels.csv'}: 8 labels from Mephisto task ssa_test" in export.out
    from parlai_acute.ssa.labels import read_labels

    exported = read_labels(tmp_path / "labels.csv")
    assert sorted(zip(exported["item"], exported["worker"], exported["sensible"], exported["specific"])) == sorted(
        zip(table["item"], table["worker"], table["sensible"], table["specific"]))
