"""Issue 18: the per-turn and SSA labelling tasks stop themselves once the named comparisons are
decided (the shared rule, :mod:`parlai_acute.monitoring.stopping`), end to end: real local tasks, the real
SmolLM2 and GenericBot, scripted workers over loopback HTTP with strongly different preferences.

The early stop happens long before the task's own target; the worker already in a dialogue when
it fires finishes it; the next worker is told there is no more work; the decision is stored once,
with the unit that settled it, and ``parlai-acute status --task-name`` shows it.
"""
from __future__ import annotations

from label_task_helpers import open_db, write_jsonl
from per_turn_task_helpers import GENERIC, SMOL, stored, write

from parlai_acute.agents.generic_bot import QUESTION_REPLY, STATEMENT_REPLY
from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice
from parlai_acute.mephisto_tasks.ssa import store as ssa_store
from parlai_acute.scripts.main import main

GENERIC_TEXTS = {QUESTION_REPLY, STATEMENT_REPLY}
QUICK_SMOL = f"smol_greedy={SMOL.replace('--max-new-tokens 16', '--max-new-tokens 6')} --inference greedy"  # short: fast


def prefer_smol(view) -> Choice:
    """A worker who always picks SmolLM2's reply over GenericBot's "ok" / "I don't know"."""
    return Choice(picked=[next(c["position"] for c in view["candidates"] if c["text"].strip() not in GENERIC_TEXTS)])


def decisions_of(units) -> list[dict]:
    return [u["data"]["stop_decision"] for u in units if u["data"].get("stop_decision")]


def test_per_turn_stops_when_the_pair_is_decided_and_lets_the_dialogue_in_hand_finish(tmp_path, launch_per_turn,
                                                                                       capsys):
    task = launch_per_turn("--model", QUICK_SMOL, "--model", GENERIC, "mephisto.blueprint.min_turns=2",
                           "mephisto.blueprint.max_turns=2", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=30", "mephisto.blueprint.stop_alpha=0.2",
                           "mephisto.blueprint.stop_comparisons='smol_greedy vs generic_bot'")
    task.wait_ready()

    async def crowd():
        early = pw.Client(task.url, "early", "e1")  # in a dialogue before the rule fires
        assert await early.open() == ""
        assert early.view["status"] == "chatting"
        runs = []
        while len(runs) < 15:
            run = await pw.run_protocol_worker(task.url, f"w{len(runs)}", f"a{len(runs)}", write, prefer_smol, turns=2)
            runs.append(run)
            if run.unavailable or run.status == "unavailable":
                break
        view = early.view
        while view["status"] == "chatting" and view["turns_done"] < 2:  # finishes after the stop
            view = await early.send({"type": "message", "text": write(view)})
            view = await early.send(pw._wire(prefer_smol(view), view))
        await early.submit()
        await early.close()
        return runs, view

    runs, early = pw.run_sync(crowd)
    finished = [r for r in runs if r.status == "complete"]
    late = runs[-1]
    assert late.unavailable or late.status == "unavailable"  # told plainly: no unit, or "no more work for you"
    assert early["status"] == "complete" and early["turns_done"] == 2
    assert task.wait_exit(timeout=120) == 0  # stopped and nothing in progress: the run ends by itself
    _, units, records = stored(task.data_dir)
    [decision] = decisions_of(units)
    assert decision["stopped"] == "decided" and decision["alpha"] == 0.2
    # named and oriented as the per-turn estimand: smol_greedy's pick rate minus generic_bot's
    row = decision["comparisons"]["smol_greedy vs generic_bot"]
    assert row["decided"] == "above" and row["lower"] > 0 and decision["settled_by"] == ["smol_greedy vs generic_bot"]
    assert "over dialogues" in decision["method"] and decision["judgments"] == 2 * row["clusters"]
    # far fewer dialogues than the target of 30: the decided ones, plus the one in hand
    assert len(finished) == row["clusters"] < 15
    assert len({r["dialogue"] for r in records}) == len(finished) + 1
    assert main(["status", "--task-name", "per_turn_test", "--mephisto-db",
                 str(task.data_dir / "database.db")]) == 0
    out = capsys.readouterr().out
    assert f"STOPPED at {decision['judgments']} judgments" in out and "settled by smol_greedy vs generic_bot" in out


def test_ssa_labelling_stops_when_the_specificity_difference_is_decided(tmp_path, launch_task, capsys):
    items = [{"item_id": f"c{k}:{model}", "context": [f"Tell me about your weekend number {k}?"], "reply": reply,
              "model": model, "context_id": f"c{k}"}
             for k in range(60) for model, reply in (("generic_bot", "I don't know"),
                                                     ("smollm2_greedy", f"I hiked {k} miles by the lake."))]
    path = write_jsonl(tmp_path / "items.jsonl", items)
    task = launch_task("ssa", "--items", str(path), "mephisto.blueprint.labels_per_item=2",
                       "mephisto.blueprint.items_per_unit=6", "mephisto.blueprint.onboarding=false",
                       "mephisto.blueprint.stop_alpha=0.2",
                       "mephisto.blueprint.stop_comparisons='smollm2_greedy vs generic_bot [specific]'")
    task.wait_ready()

    async def label(worker):
        c = pw.Client(task.url, worker, f"{worker}-1")
        reason = await c.open()
        if reason:
            return reason
        view = c.view
        while view["status"] == "working":  # generic replies make sense but are not specific
            view = await c.send({"type": "answer", "position": view["position"], "sensible": True,
                                 "specific": view["item"]["reply"] != "I don't know"})
        await c.submit()
        await c.close()
        return view["status"]

    outcomes = []
    while len(outcomes) < 25 and (not outcomes or outcomes[-1] == "complete"):
        outcomes.append(pw.run_sync(lambda: label(f"s{len(outcomes)}")))
    assert outcomes[-1] != "complete" and outcomes.count("complete") == len(outcomes) - 1
    assert task.wait_exit(timeout=120) == 0
    units = ssa_store.unit_data_for_task(open_db(task.data_dir), "ssa_test")
    [decision] = decisions_of(units)
    # named and oriented as the SSA estimand: smollm2_greedy's specificity minus generic_bot's
    assert decision["stopped"] == "decided" and decision["settled_by"] == ["smollm2_greedy vs generic_bot [specific]"]
    row = decision["comparisons"]["smollm2_greedy vs generic_bot [specific]"]
    assert row["decided"] == "above" and row["lower"] > 0 and row["group"] == "specificity"
    labels = ssa_store.labels_records(units)
    assert len(labels) == decision["judgments"] < len(items) * 2  # stopped before the 240 labels planned
    assert main(["status", "--task-name", "ssa_test", "--mephisto-db", str(task.data_dir / "database.db")]) == 0
    assert "STOPPED at" in capsys.readouterr().out
    again = launch_task("ssa", "--items", str(path), "mephisto.blueprint.labels_per_item=2",
                        "mephisto.blueprint.stop_alpha=0.2", "mephisto.blueprint.onboarding=false",
                        "mephisto.blueprint.stop_comparisons='smollm2_greedy vs generic_bot [specific]'",
                        data_dir=task.data_dir)
    assert again.wait_exit(timeout=120) == 0  # a relaunch reads the stored labels: still decided
    assert "the stop rule already stops this task (every named comparison is decided" in again.log()


def test_interactive_ssa_stops_at_its_label_budget(tmp_path, launch_per_turn):
    """Interactive SSA (per-turn setting sm, label_mode ssa): the rule counts the labels of complete
    conversations, so the third one-turn conversation spends a budget of 3 and the fourth worker gets none."""
    task = launch_per_turn("--model", GENERIC, "mephisto.blueprint.setting=sm", "mephisto.blueprint.protocol=sm",
                           "mephisto.blueprint.label_mode=ssa", "mephisto.blueprint.min_turns=1",
                           "mephisto.blueprint.max_turns=1", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=10", "mephisto.blueprint.stop_budget=3")
    task.wait_ready()

    def label(view) -> Choice:
        return Choice(sensible=True, specific=False)

    runs = [pw.run_sync(lambda w=w: pw.run_protocol_worker(task.url, f"i{w}", f"i{w}", write, label, turns=1))
            for w in range(4)]
    assert [r.status for r in runs[:3]] == ["complete"] * 3
    assert runs[3].unavailable or runs[3].status == "unavailable"
    assert task.wait_exit(timeout=120) == 0
    _, units, records = stored(task.data_dir)
    [decision] = decisions_of(units)
    assert decision["stopped"] == "budget" and decision["judgments"] == 3 and decision["budget"] == 3
    assert len({r["dialogue"] for r in records}) == 3


def test_after_the_stop_rule_a_new_worker_is_told_there_is_no_more_work(launch_per_turn, chromium):
    """Issue 25: after the stop rule fired, a new worker was told "All the work in this task is taken right
    now ... try again later", and 4 s later the server was gone. Now the page says there is no more work,
    the server stays up long enough to say it, and then the run ends by itself."""
    import json
    import time
    import urllib.request

    from parlai_acute.mephisto_tasks.live.texts import NO_WORK
    from parlai_acute.mephisto_tasks.per_turn import simulated_workers as sw

    task = launch_per_turn("--model", GENERIC, "mephisto.blueprint.setting=sm", "mephisto.blueprint.protocol=sm",
                           "mephisto.blueprint.label_mode=ssa", "mephisto.blueprint.min_turns=1",
                           "mephisto.blueprint.max_turns=1", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=10", "mephisto.blueprint.stop_budget=1")
    task.wait_ready()

    def label(view) -> Choice:
        return Choice(sensible=True, specific=False)

    first = pw.run_sync(lambda: pw.run_protocol_worker(task.url, "first", "f1", write, label, turns=1))
    assert first.status == "complete"  # its one label spends the budget: the stop rule fires

    def config() -> dict:
        with urllib.request.urlopen(f"{task.url}/task_config.json?mephisto_task_version=2.0.3", timeout=10) as r:
            return json.loads(r.read())

    deadline = time.monotonic() + 60  # the run says so to the page's configuration as soon as it knows
    while NO_WORK not in config()["texts"]["failure_reasons"].values() and time.monotonic() < deadline:
        time.sleep(0.5)
    late = sw.run_worker(chromium, task.url, "late", "l1", write, label, turns=1)
    assert late.status == "unavailable"
    assert late.message == NO_WORK and "try again later" not in late.message
    assert task.proc.poll() is None  # still serving when the late worker came
    assert task.wait_exit(timeout=120) == 0  # then the run ends by itself
    _, units, _ = stored(task.data_dir)
    assert [u["data"]["stop_decision"]["stopped"] for u in units if u["data"].get("stop_decision")] == ["budget"]
