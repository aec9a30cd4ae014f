"""End to end: the launcher, the real Node router, the mock provider, a real Mephisto DB, and
simulated workers in headless Debian chromium doing the page."""
from __future__ import annotations

import collections

import pytest
from mephisto.operations.datatypes import WorkerFailureReasons

from parlai_acute.acute.analysis import AnalysisConfig, apply_exclusions
from parlai_acute.mephisto_tasks.live import setup, texts
from parlai_acute.mephisto_tasks.acute import simulated_workers as sw
from parlai_acute.mephisto_tasks.acute import store
from acute_task_helpers import XSS, make_pairings, pid_alive, write_pairings

CAP = 3


def pick(model: str, reason: str):
    """A worker who passes onboarding (picks the coherent speaker) then always prefers ``model``."""
    def decide(view):
        try:
            return sw.side_with_text(view, "hike"), "Speaker asks questions and is coherent"
        except LookupError:
            return sw.side_with_text(view, "A-line" if model == "model_a" else "B-line"), reason
    return decide


def fail_onboarding(view):
    return sw.side_with_text(view, "i i i"), "I liked this one better"


def test_workers_judgments_quality_control_and_readback(tmp_path, launch, chromium):
    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(9, xss_in=None))
    # The XSS text sits in a model_a turn of every pair: whichever pair a worker gets, it is on the page.
    lines = make_pairings(9, xss_in=None)
    for line in lines[1:]:
        line["dialogue_dicts"][0]["dialogue"][3]["text"] = "A-line " + XSS
    write_pairings(pairings, lines)
    task = launch(pairings, "mephisto.blueprint.comparisons_per_unit=3",
                  f"mephisto.blueprint.max_judgments_per_worker={CAP}", "mephisto.blueprint.min_reason_length=10")
    task.wait_ready()
    node = task.node_pids()
    assert len(node) == 1  # the router

    seen_pages = []

    def check_page(page, view):
        texts = page.locator(".turn").all_inner_texts()
        seen_pages.append({
            "literal": any(XSS in t for t in texts),
            "pwned": page.evaluate("typeof window.__pwned"),
            "bold_in_turns": page.locator(".turn b").count(),
            "script_in_turns": page.locator(".turn script").count(),
            "progress": page.inner_text("#progress"),
            "position": view["comparison"]["position"], "n": view["comparison"]["n"],
            "labels": page.locator("#choices label").all_inner_texts(),
            "question": page.inner_text("#question"),
        })

    # 1. fails onboarding -> blocked; a second visit is refused.
    failer = sw.run_worker(chromium, task.url, "failer", "f1", fail_onboarding)
    assert failer.finished and len(failer.made) == 1
    again = sw.run_worker(chromium, task.url, "failer", "f2", fail_onboarding)
    assert again.unavailable and not again.made
    # Mephisto's "You are not currently qualified ..." in our words (texts.FAILURE_REASONS), on the real page
    assert again.message == texts.failure_text(WorkerFailureReasons.NOT_QUALIFIED) == texts.NOT_ELIGIBLE

    # 2. the form refuses a reason under the minimum length: nothing is stored for it.
    page = chromium.new_page()
    page.goto(sw.worker_url(task.url, "lazy", "l1"))
    page.wait_for_selector("#task:not([hidden])")
    page.check("#choice-left")
    page.fill("#reason", "short")
    page.click("#submit")
    assert "at least 10 characters" in page.inner_text("#error")
    assert page.evaluate("window.__acuteView.done") == 0
    page.close()

    # 3. "never gives a reason": filler that passes the length check but says nothing.
    lazy = sw.run_worker(chromium, task.url, "lazy", "l1", pick("model_b", ".........."), page_hook=check_page)
    alice = sw.run_worker(chromium, task.url, "alice", "a1", pick("model_a", "Speaker A is more engaging"),
                          page_hook=check_page)
    bob = sw.run_worker(chromium, task.url, "bob", "b1", pick("model_b", "Speaker B asks better questions"),
                        page_hook=check_page)
    for run in (lazy, alice, bob):
        assert run.finished, run.message
        assert len(run.made) == 1 + CAP  # onboarding + the cap
    # everyone at the cap and every pair judged: the run closes its spare units and ends by itself
    assert task.wait_exit(timeout=120) == 0, task.log()[-2000:]
    assert not pid_alive(node[0])  # and its router is gone

    # the page: text shown literally, never executed; progress; speaker-worded choices; the question
    assert all(p["literal"] for p in seen_pages if p["position"] > 1)  # past the onboarding pair
    assert all(p["pwned"] == "undefined" and p["bold_in_turns"] == 0 and p["script_in_turns"] == 0 for p in seen_pages)
    assert [p["progress"] for p in seen_pages[:4]] == [f"Comparison {k} of 4" for k in range(1, 5)]
    assert all(p["labels"] == ["Speaker 1", "Speaker 2"] for p in seen_pages)
    assert all(p["question"] == "Who would you prefer to talk to for a long conversation?" for p in seen_pages)

    # read back: every judgment as made, sides as clicked
    db = setup.open_db(task.data_dir)
    df = store.judgments_from_mephisto_db("acute_test", db)
    df["name"] = df["worker"].str.removesuffix("_sandbox")  # workers by name; the mock provider adds _sandbox
    assert sorted(df["name"].unique()) == sorted(f"simulated-{w}" for w in ("failer", "lazy", "alice", "bob"))
    made = {f"simulated-{r.worker.split('-', 1)[1]}": r.made for r in (failer, lazy, alice, bob)}
    for name, rows in df.groupby("name", sort=False):
        rows = rows.sort_values("timestamp")
        clicks = made[name]
        assert list(rows["winner_side"]) == [m["choice"] for m in clicks]
        assert list(rows["reason"]) == [m["reason"] for m in clicks]
        assert rows["is_onboarding"].iloc[0] and not rows["is_onboarding"].iloc[1:].any()
        regular = rows[~rows["is_onboarding"]]
        assert regular["pair_id"].is_unique  # never the same pair twice
        assert len(regular) <= CAP
    by_name = {name: rows for name, rows in df.groupby("name")}
    assert not by_name["simulated-failer"]["onboarding_correct"].iloc[0]
    assert (by_name["simulated-alice"].query("not is_onboarding")["winner"] == "model_a").all()
    assert (by_name["simulated-bob"].query("not is_onboarding")["winner"] == "model_b").all()
    regular = df[~df["is_onboarding"]]
    assert sorted(regular["pair_id"]) == sorted(f"a{n}|b{n}" for n in range(9))  # each pair judged once
    # left/right randomised per comparison and recorded: both orders occur
    assert set(regular["model_left"]) == {"model_a", "model_b"}

    # the failed worker holds the block qualification in the DB
    failer_name = df.loc[df["name"] == "simulated-failer", "worker"].iloc[0]
    from mephisto.data_model.worker import Worker
    blocked = Worker.get(db, db.find_workers(worker_name=failer_name)[0].db_id)
    assert blocked.is_qualified("parlai_acute_eval_block")

    # analysis excludes the failed and the reason-less worker
    kept, excluded, _ = apply_exclusions(df.drop(columns=["name"]), AnalysisConfig(max_per_worker=CAP))
    name_of = lambda worker: worker.removesuffix("_sandbox")  # noqa: E731
    assert set(kept["worker"].map(name_of)) == {"simulated-alice", "simulated-bob"}
    reasons = collections.Counter(zip(excluded["worker"].map(name_of), excluded["excluded_because"]))
    assert any(name == "simulated-lazy" and "reason" in why for name, why in reasons)
    assert any(name == "simulated-failer" and "onboarding" in why for name, why in reasons)

    # a new process reaches the analysis (with the cap the run was launched with) and the judgments
    # table from the task name alone, importing no blueprint and no ParlAI
    from fresh_process import analyze_and_export

    from parlai_acute.acute.judgments import read_judgments

    analysis, export = analyze_and_export("acute", "acute_test", task.data_dir, tmp_path, "judgments.csv")
    assert f"{len(kept)} judgments kept, {len(excluded)} excluded" in analysis.out
    assert f"per-worker cap: {CAP} (as launched" in analysis.out
    again = read_judgments(tmp_path / "judgments.csv")
    assert sorted(again["reason"]) == sorted(df["reason"]) and len(again) == len(df)
