"""Exactly one owner per assignment, whatever the browsers (issue 25, item 1): a per-turn assignment
open in two browser contexts (two browsers or profiles: no shared storage, no BroadcastChannel), a
second tab and "Continue here" back and forth, a launcher relaunched while a page that had not heard
it was displaced has an action on its way. Real local architect (Node router), Mephisto database,
headless Chromium.

Before: the page in the first browser showed "Sending..." for 30 s and more with no banner and its
typed text gone (the router delivers an agent's packets to one of its pages only), and after the
relaunch both pages registered at once: Mephisto made a second agent, which started a new unit with
no registration, and every agent the run left behind was "completed".
"""
from __future__ import annotations

import json
import time

from chaos_helpers import (MODELS, RELAUNCH, continue_here, elsewhere, freeze, idle, open_page, other_browser,
                           reconnecting, relaunch, stop, wait)
from per_turn_task_helpers import GENERIC, stored

from parlai_acute.mephisto_tasks.live.local_run import LocalRun, free_port

OTHER = "other_bot=parlai_acute.agents.generic_bot:GenericBotAgent"
TURN = "window.__perTurnView"
ARGS = ["--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=2", "mephisto.blueprint.max_turns=5",
        "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1"]
OWNER = f"{TURN} && {TURN}.tab === MephistoLive.tab()"


def take_over(page) -> None:
    continue_here(page, "__perTurnView")


def a_turn(page, text: str) -> None:
    done = page.evaluate(f"{TURN}.turns_done")
    page.fill("#message", text)
    page.click("#send")
    wait(page, f"({TURN}.candidates || []).length === 2 && {idle(page)}", MODELS, "the candidates")
    page.click("#pick-0")
    page.click("#submit-choice")
    wait(page, f"{TURN}.turns_done === {done + 1} && {idle(page)}", MODELS, "the choice stored")


def type_and_send(page, text: str) -> None:
    """Type and click Send at once, as a worker does (in script: a page told it is displaced in the
    meantime is greyed out and takes no clicks, and must keep the words all the same)."""
    page.evaluate("""text => { const box = document.getElementById('message'); box.value = text;
        box.dispatchEvent(new Event('input', {bubbles: true})); document.getElementById('send').click(); }""", text)


def messages(page) -> list[str]:
    return [m["text"] for m in page.evaluate(f"{TURN}.messages") if m["speaker"] != "bot"]


# ---------------------------------------------------------------------------------------------- protocol clients
ACUTE_OVERRIDES = ("mephisto.blueprint.comparisons_per_unit=2", "mephisto.blueprint.max_judgments_per_worker=6",
                   "mephisto.blueprint.onboarding=false")


def prefer_a(view):
    """An ACUTE-Eval worker who picks the side that speaks first ("A-line") and says why."""
    from parlai_acute.mephisto_tasks.acute.simulated_workers import side_with_text

    return side_with_text(view, "A-line"), "A answers more warmly"


async def come_back_and_submit(url: str, worker: str, assignment: str, tab: str):
    """The same page (its tab id) registering again on a relaunched task and submitting what it is
    handed: (agent id, view), or (why there is no unit, None)."""
    from parlai_acute.mephisto_tasks.per_turn.protocol_workers import Client

    page = Client(url, worker, assignment, tab=tab)
    unavailable = await page.open()
    if unavailable:
        return unavailable, None
    view = page.view
    await page.submit()
    await page.close()
    return str(page.agent_id), view


def statuses(db) -> dict[str, str]:
    """Every agent's Mephisto status, by agent id."""
    return {str(row.db_id): db.get_agent(row.db_id)["status"] for row in db.find_agents()}


def assert_one_owner(db, submitted: str, expired: str) -> None:
    """The work's one completed agent is the one that submitted it; the agent that did it first is expired."""
    now = statuses(db)
    assert [agent for agent, status in now.items() if status == "completed"] == [submitted], now
    assert now[expired] == "expired", now


def approved_by_review(task_name: str, data_dir, log) -> list[str]:
    """The agents `review --apply` approves (and so pays)."""
    from parlai_acute import api

    plan = api.review(task_name, mephisto_db=data_dir / "database.db", apply=True, log=log)
    return [e["agent_id"] for e in plan.done if e["action"] == "approve" and e["result"] == "done"]


def test_one_owner_across_browsers_tabs_and_a_relaunch(tmp_path, chromium, runs):
    from mephisto.data_model.agent import Agent

    from parlai_acute.mephisto_tasks.live import setup

    run = LocalRun(tmp_path / "data", ARGS, free_port(), tmp_path / "launch0.log", group="per-turn",
                   task_name="one_owner")
    runs.append(run)
    run.wait_ready()
    home, office = chromium.new_context(), chromium.new_context()  # two browsers: nothing shared
    a = open_page(home, run.url, "amy", "a1", "__perTurnView")
    wait(a, f"{TURN}.can_send && {idle(a)}", MODELS, "the first turn")
    a_turn(a, "Hello, do you like hiking?")

    a2 = open_page(home, run.url, "amy", "a1", "__perTurnView")  # a second tab, then back to the first
    elsewhere(a)
    take_over(a)
    elsewhere(a2)
    a2.close()

    freeze(a, True)  # the home page hears nothing while the same address opens in the other browser
    b = open_page(office, run.url, "amy", "a1", "__perTurnView")
    wait(b, f"{OWNER} && {idle(b)}", what="the other browser owning the assignment")
    freeze(a, False)
    type_and_send(a, "Typed at home after the office took over")  # before it heard: refused, and said so
    other_browser(a)
    assert a.input_value("#message") == "Typed at home after the office took over"  # the words are kept
    assert "Typed at home" not in " ".join(messages(b))

    take_over(a)  # back home: the office page hears it by itself, idle
    other_browser(b)
    assert a.input_value("#message") == "Typed at home after the office took over"
    a.click("#send")
    wait(a, f"({TURN}.candidates || []).length === 2 && {idle(a)}", MODELS, "the candidates")
    a.click("#pick-0")
    a.click("#submit-choice")
    wait(a, f"{TURN}.turns_done === 2 && {idle(a)}", MODELS, "turn 2 stored")

    # the office takes it again while the home laptop sleeps; the launcher stops; home wakes up and
    # sends while the task is down (whether or not it heard of the office before the stop): the
    # relaunched task takes no action from a page that is not the owner, nor starts new work for it
    freeze(a, True)
    take_over(b)
    stop(run, 15)
    freeze(a, False)
    reconnecting(b)
    wait(a, "['reconnecting', 'elsewhere'].indexOf(document.body.dataset.connection) >= 0",
         what="home reconnecting (or told already)")
    type_and_send(a, "Sent at home while the task was down")
    run = relaunch(run, ARGS, tmp_path / "launch1.log", "per-turn")
    runs.append(run)
    wait(b, f"{OWNER} && {TURN}.turns_done === 2 && {idle(b)}", RELAUNCH, "the office back at turn 3")
    wait(a, "document.body.dataset.connection === 'elsewhere'", RELAUNCH, "home told the office owns it")
    assert a.input_value("#message") == "Sent at home while the task was down"
    assert a.evaluate(f"{TURN}.turns_done") == 2  # the same dialogue, never a new one at turn 1

    take_over(a)  # and home finishes the dialogue, with the words it kept
    other_browser(b)
    a.click("#send")
    wait(a, f"({TURN}.candidates || []).length === 2 && {idle(a)}", MODELS, "the candidates")
    a.click("#pick-0")
    a.click("#submit-choice")
    wait(a, f"{TURN}.turns_done === 3 && {idle(a)}", MODELS, "turn 3 stored")
    a.click("#finish")
    wait(a, "document.body.dataset.finished === 'true'", what="the thank-you")
    assert run.wait_exit(timeout=120) == 0  # the one dialogue needed is done: the run ends by itself

    _, units, records = stored(run.data_dir, "one_owner")
    assert len(units) == 1 and units[0]["data"]["status"] == "complete"
    assert units[0]["data"]["registration"] == "a1-simulated-amy"
    sent = [r["worker_message"] for r in records if r["model"] == "generic_bot"]
    assert sent == ["Hello, do you like hiking?", "Typed at home after the office took over",
                    "Sent at home while the task was down"]  # each once, in the one dialogue
    db = setup.open_db(run.data_dir)
    agents = {str(row.db_id): Agent.get(db, row.db_id).db_status for row in db.find_agents()}
    completed = [agent for agent, status in agents.items() if status == "completed"]
    assert len(completed) == 1, agents  # one piece of work, one completed agent
    assert set(agents.values()) <= {"completed", "expired"}, agents  # the others expired, never completed

    # approved and paid once, through the agent that holds the work
    assert approved_by_review("one_owner", run.data_dir, tmp_path / "review.jsonl") == completed
    after = {str(row.db_id): Agent.get(db, row.db_id).db_status for row in db.find_agents()}
    assert list(after.values()).count("approved") == 1, after


def test_pages_of_one_assignment_registering_at_once_get_one_agent(tmp_path, launch_per_turn):
    """Two pages of one assignment registering at the same instant (two browsers back after a relaunch)
    made Mephisto create two agents, the second starting a new dialogue with no registration. Now the
    later one is told to register again and reaches the same agent; the extra agent is expired."""
    import asyncio

    from mephisto.data_model.agent import Agent

    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    task = launch_per_turn("--model", GENERIC, "--model", OTHER, "mephisto.blueprint.min_turns=2",
                           "mephisto.blueprint.max_turns=2", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=4")
    task.wait_ready()

    async def both_at_once(assignment):
        pages = [pw.Client(task.url, "zoe", assignment), pw.Client(task.url, "zoe", assignment)]
        assert await asyncio.gather(*(p.open() for p in pages)) == ["", ""]
        agents = {p.agent_id for p in pages}
        for p in pages:
            await p.close()
        return agents

    async def all_pairs():
        first = pw.Client(task.url, "zoe", "z0")  # the worker exists (Mephisto's own race on a new worker's
        assert await first.open() == ""  # row is not this one); then three assignments, two pages each
        await first.close()
        return [{first.agent_id}, *await asyncio.gather(*(both_at_once(f"z{k}") for k in range(1, 4)))]

    pairs = pw.run_sync(all_pairs)
    assert all(len(agents) == 1 for agents in pairs), pairs  # both pages of an assignment: one agent
    db, units, _ = stored(task.data_dir)
    started = [u for u in units if u["data"].get("status") not in (None, "unavailable")]
    assert sorted(u["data"]["registration"] for u in started) == [f"z{k}-simulated-zoe" for k in range(4)]
    for row in db.find_agents():  # any extra agent an instant made is expired, and holds nothing
        if str(row.db_id) not in {a for agents in pairs for a in agents}:
            assert Agent.get(db, row.db_id).db_status == "expired"
    print(f"simultaneous registrations: {len(db.find_agents()) - 4} extra agents made and expired")


def test_finished_assignment_reopened_after_a_relaunch_starts_nothing(tmp_path, chromium, runs):
    """A page of a submitted assignment registering again after a relaunch (reloaded, or the address
    opened again) was handed a new unit and a new dialogue at turn 1. Now it is told the work was
    submitted, nothing is started or stored for it, and the same worker still gets new work on
    another assignment (the record is keyed to the work, not the worker)."""
    import signal

    from mephisto.data_model.agent import Agent

    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.live.texts import live_texts

    args = [*ARGS[:-1], "mephisto.blueprint.target=2"]
    run = LocalRun(tmp_path / "data", args, free_port(), tmp_path / "launch0.log", group="per-turn",
                   task_name="done_once")
    runs.append(run)
    run.wait_ready()
    context = chromium.new_context()
    a = open_page(context, run.url, "amy", "a1", "__perTurnView")
    wait(a, f"{TURN}.can_send && {idle(a)}", MODELS, "the first turn")
    a_turn(a, "Hello, do you like hiking?")
    a_turn(a, "I walked up a hill today.")
    a.click("#finish")
    wait(a, "document.body.dataset.finished === 'true'", what="the thank-you")

    stop(run, signal.SIGINT)
    run = relaunch(run, args, tmp_path / "launch1.log", "per-turn")
    runs.append(run)
    a.reload()  # the same address, the same worker: its work is submitted
    wait(a, "document.body.dataset.unavailable === 'true'", what="'already submitted'")
    assert a.inner_text("#status") == live_texts()["already_submitted"]
    again = context.new_page()
    again.goto(a.url)  # the address opened again in a new tab: told the same, at once
    wait(again, "document.body.dataset.unavailable === 'true'", what="'already submitted' in a new tab")
    b = open_page(context, run.url, "amy", "a2", "__perTurnView")  # another assignment: new work
    wait(b, f"{TURN}.can_send && {TURN}.turns_done === 0 && {idle(b)}", MODELS, "a new dialogue")

    _, units, _ = stored(run.data_dir, "done_once")
    started = sorted(u["data"]["registration"] for u in units if u["data"].get("status") not in (None, "unavailable"))
    assert started == ["a1-simulated-amy", "a2-simulated-amy"], started  # a1's one dialogue, a2's new one
    db = setup.open_db(run.data_dir)
    statuses = [Agent.get(db, row.db_id).db_status for row in db.find_agents()]
    assert statuses.count("completed") == 1, statuses  # the submitted work only; the pages told "done": expired


def test_finished_acute_assignment_registering_after_a_relaunch_is_told_it_is_done(tmp_path, launch):
    """The same for ACUTE-Eval (one implementation in mephisto_tasks/live): a submitted assignment's
    registration after a relaunch is answered "done" and gets no comparisons; another assignment of the
    same worker does."""
    from acute_task_helpers import make_pairings, write_pairings

    from parlai_acute.mephisto_tasks.acute import store
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_worker
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.live.browser import post_json
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(6))
    overrides = ACUTE_OVERRIDES
    task = launch(pairings, *overrides)
    task.wait_ready()
    first = pw.run_sync(lambda: run_protocol_worker(task.url, "dora", "d1", prefer_a))
    assert first.finished and len(first.made) == 2
    assert task.terminate() == 0

    again = launch(pairings, *overrides, data_dir=task.data_dir)
    again.wait_ready()
    name = "simulated-dora"
    answer = pw.run_sync(lambda: post_json(f"{again.url}/request_agent", {"provider_data": {
        "worker_name": name, "agent_registration_id": f"d1-{name}", "assignment_id": "d1", "provider_type": "mock"}}))
    told = answer["data"].get("init_task_data") or {}
    assert told.get("already_submitted") is True, answer  # told, and nothing planned
    second = pw.run_sync(lambda: run_protocol_worker(again.url, "dora", "d2", prefer_a))
    assert second.finished and len(second.made) == 2  # new work on another assignment
    again.terminate()
    df = store.judgments_for_task(setup.open_db(task.data_dir), "acute_test")
    assert len(df) == 4 and df["pair_id"].nunique() == 4  # d1's two and d2's two, none for the re-registration


def test_finished_ssa_assignment_registering_after_a_relaunch_is_told_it_is_done(tmp_path, launch_task):
    """The same for the SSA labelling task (the item tasks' runner): no items are handed to a submitted
    assignment's registration after a relaunch; the worker's other assignment gets the items left."""
    from label_task_helpers import SSA_ITEMS, open_db, write_jsonl

    from parlai_acute.mephisto_tasks.live.browser import post_json
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
    from parlai_acute.mephisto_tasks.ssa import store as ssa_store

    async def label_all(url, assignment):
        client = pw.Client(url, "kim", assignment)
        assert await client.open() == ""
        view = client.view
        while view["status"] == "working":
            view = await client.send({"type": "answer", "position": view["position"], "sensible": True,
                                      "specific": False})
        await client.submit()
        await client.close()
        return view["status"]

    items = write_jsonl(tmp_path / "items.jsonl", SSA_ITEMS)
    args = ("--items", str(items), "mephisto.blueprint.labels_per_item=1", "mephisto.blueprint.items_per_unit=2",
            "mephisto.blueprint.onboarding=false")
    task = launch_task("ssa", *args)
    task.wait_ready()
    assert pw.run_sync(lambda: label_all(task.url, "k1")) == "complete"
    assert task.terminate() == 0

    again = launch_task("ssa", *args, data_dir=task.data_dir)
    again.wait_ready()
    name = "simulated-kim"
    answer = pw.run_sync(lambda: post_json(f"{again.url}/request_agent", {"provider_data": {
        "worker_name": name, "agent_registration_id": f"k1-{name}", "assignment_id": "k1", "provider_type": "mock"}}))
    told = answer["data"].get("init_task_data") or {}
    assert told.get("already_submitted") is True, answer  # told, and no items handed out
    assert pw.run_sync(lambda: label_all(again.url, "k2")) == "complete"  # the two items left, on k2
    again.terminate()
    records = ssa_store.labels_for_task(open_db(task.data_dir), "ssa_test")
    assert sorted(r["item"] for r in records) == sorted(i["item_id"] for i in SSA_ITEMS)  # each once


def test_acute_work_finished_but_not_submitted_when_the_launcher_stopped_is_submitted_after_a_relaunch(
        tmp_path, launch):
    """The page submits as soon as it shows the finished view; a launcher stopped between the last
    judgment and that submit left work done but never submitted (on MTurk: never paid), its agent
    "completed" by Mephisto all the same, and the page coming back after a relaunch was told "already
    submitted" and could not submit. Now the page's next agent is handed the finished work: the page
    shows its finished view and submits there; the agent that did the work is expired, so one agent
    holds the work, completed, and review approves exactly that one."""
    import time

    from acute_task_helpers import make_pairings, write_pairings

    from parlai_acute.mephisto_tasks.acute import store
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_worker
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(6))
    overrides = ACUTE_OVERRIDES
    task = launch(pairings, *overrides)
    task.wait_ready()
    first = pw.run_sync(lambda: run_protocol_worker(task.url, "dora", "d1", prefer_a, submit=False))
    assert first.finished and not first.submitted and len(first.made) == 2
    assert task.terminate() == 0  # the launcher stops before the page's submit reaches it

    again = launch(pairings, *overrides, data_dir=task.data_dir)
    again.wait_ready()

    # the same page, registering again
    agent_id, view = pw.run_sync(lambda: come_back_and_submit(again.url, "dora", "d1", first.tab))
    assert view is not None, agent_id
    assert not view.get("already_submitted"), view  # before: told so, and the work was never submitted
    assert view["finished"] and view["done"] == 2 and view["tab"] == first.tab  # its finished view: it submits
    db = setup.open_db(task.data_dir)
    deadline = time.time() + 60
    while db.get_agent(agent_id)["status"] != "completed" and time.time() < deadline:
        time.sleep(0.5)
    assert again.terminate() == 0

    # one completed agent, the submitting one; the first is expired (before: "completed" with no submit)
    assert_one_owner(db, submitted=agent_id, expired=first.agent_id)
    df = store.judgments_for_task(db, "acute_test")
    assert len(df) == 2 and df["pair_id"].nunique() == 2  # the work once
    # paid once, through the agent that submitted the work
    assert approved_by_review("acute_test", task.data_dir, tmp_path / "review.jsonl") == [agent_id]


def test_a_relaunch_whose_only_work_left_is_finished_but_not_submitted_serves_it_until_the_page_submits(
        tmp_path, launch):
    """Every pair judged, but the page of the last unit had not submitted when the launcher stopped: a
    relaunch found all work collected, said "nothing to launch" and exited, so the page had no server to
    submit to and the worker was never paid. Now the relaunch serves that unit and says so, a new worker
    is told there is no more work, the page registers again and submits, and the run ends by itself:
    one completed agent, which review approves."""
    import json
    import time
    import urllib.request

    from acute_task_helpers import make_pairings, write_pairings
    from mephisto.operations.datatypes import WorkerFailureReasons

    from parlai_acute.mephisto_tasks.acute import store
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_worker
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.live.texts import NO_WORK
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(2))  # one unit judges every pair
    overrides = ("mephisto.blueprint.comparisons_per_unit=2", "mephisto.blueprint.max_judgments_per_worker=2",
                 "mephisto.blueprint.onboarding=false")
    task = launch(pairings, *overrides)
    task.wait_ready()
    first = pw.run_sync(lambda: run_protocol_worker(task.url, "dora", "d1", prefer_a, submit=False))
    assert first.finished and not first.submitted and len(first.made) == 2
    assert task.terminate() == 0  # the launcher stops before the page's submit reaches it
    db = setup.open_db(task.data_dir)
    assert len(store.judgments_for_task(db, "acute_test")) == 2  # every pair has its judgment

    again = launch(pairings, *overrides, data_dir=task.data_dir)
    again.wait_ready()  # before: "nothing to launch", and the launcher was gone
    assert "1 finished assignment was not submitted yet: serving it so its page can submit; no new work" in again.log()

    def config() -> dict:
        with urllib.request.urlopen(f"{again.url}/task_config.json?mephisto_task_version=2.0.3", timeout=10) as r:
            return json.loads(r.read())

    deadline = time.monotonic() + 60
    while NO_WORK not in config()["texts"]["failure_reasons"].values() and time.monotonic() < deadline:
        time.sleep(0.5)
    newcomer = pw.run_sync(lambda: run_protocol_worker(again.url, "erin", "e1", prefer_a))
    assert newcomer.unavailable == WorkerFailureReasons.NO_AVAILABLE_UNITS and not newcomer.made  # no new work
    assert config()["texts"]["failure_reasons"][newcomer.unavailable] == NO_WORK  # what her page says

    # the same page, registering again
    agent_id, view = pw.run_sync(lambda: come_back_and_submit(again.url, "dora", "d1", first.tab))
    assert view is not None, agent_id
    assert view["finished"] and view["done"] == 2  # its finished view, handed to the new agent: it submits
    assert again.wait_exit(timeout=120) == 0  # the run ends by itself once the page submitted

    assert_one_owner(db, submitted=agent_id, expired=first.agent_id)
    assert len(store.judgments_for_task(db, "acute_test")) == 2  # the work once, nothing new
    # paid once, through the agent that submitted the work
    assert approved_by_review("acute_test", task.data_dir, tmp_path / "review.jsonl") == [agent_id]


def test_a_relaunch_offers_a_unit_to_every_page_of_unsubmitted_work_not_only_the_spares(tmp_path, launch):
    """With nothing left to collect a task opens only its spare slots (two); three pages of finished,
    unsubmitted work coming back must each get a unit to submit from, and the run ends once all three did."""
    from acute_task_helpers import make_pairings, write_pairings

    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_worker
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(3))
    overrides = ("mephisto.blueprint.comparisons_per_unit=1", "mephisto.blueprint.max_judgments_per_worker=1",
                 "mephisto.blueprint.onboarding=false")
    task = launch(pairings, *overrides)
    task.wait_ready()
    workers = [("ann", "a1"), ("ben", "b1"), ("cai", "c1")]
    firsts = [pw.run_sync(lambda w=w, a=a: run_protocol_worker(task.url, w, a, prefer_a, submit=False))
              for w, a in workers]
    assert all(f.finished and not f.submitted and len(f.made) == 1 for f in firsts)
    assert task.terminate() == 0

    again = launch(pairings, *overrides, data_dir=task.data_dir)
    again.wait_ready()
    assert "3 finished assignments were not submitted yet: serving them so their pages can submit" in again.log()

    back = [pw.run_sync(lambda w=w, a=a, f=f: come_back_and_submit(again.url, w, a, f.tab))
            for (w, a), f in zip(workers, firsts)]
    assert [view and view["finished"] for _, view in back] == [True] * 3, back  # before: the third had no unit
    assert again.wait_exit(timeout=120) == 0
    db = setup.open_db(task.data_dir)
    completed = sorted(str(row.db_id) for row in db.find_agents() if db.get_agent(row.db_id)["status"] == "completed")
    assert completed == sorted(agent for agent, _ in back)  # one completed agent per piece of work


def test_a_per_turn_relaunch_whose_only_dialogue_is_finished_but_not_submitted_serves_it(launch_per_turn):
    """The same on the per-turn task's own launch: its one dialogue finished, the page had not submitted
    when the launcher stopped; the relaunch serves it (before: "nothing to launch"), gives a new worker
    no dialogue, and ends by itself once the page submitted, with one completed agent."""
    from mephisto.operations.datatypes import WorkerFailureReasons
    from per_turn_task_helpers import GENERIC, write

    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw
    from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

    args = ("--model", GENERIC, "mephisto.blueprint.setting=sm", "mephisto.blueprint.protocol=sm",
            "mephisto.blueprint.label_mode=ssa", "mephisto.blueprint.min_turns=1", "mephisto.blueprint.max_turns=1",
            "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1")

    def label(view) -> Choice:
        return Choice(sensible=True, specific=False)

    task = launch_per_turn(*args)
    task.wait_ready()
    first = pw.run_sync(lambda: pw.run_protocol_worker(task.url, "pia", "p1", write, label, turns=1, submit=False))
    assert first.status == "complete" and not first.submitted
    assert task.terminate() == 0

    again = launch_per_turn(*args, data_dir=task.data_dir)
    again.wait_ready()  # before: "nothing to launch", and the launcher was gone
    assert "1 finished assignment was not submitted yet: serving it so its page can submit; no new work" in again.log()
    newcomer = pw.run_sync(lambda: pw.run_protocol_worker(again.url, "quin", "q1", write, label, turns=1))
    assert newcomer.unavailable == WorkerFailureReasons.NO_AVAILABLE_UNITS and not newcomer.turns  # no new dialogue

    # the same page, registering again
    agent_id, view = pw.run_sync(lambda: come_back_and_submit(again.url, "pia", "p1", first.tab))
    assert view is not None, agent_id
    assert view["status"] == "complete" and view["turns_done"] == 1  # its finished dialogue: the page submits
    assert again.wait_exit(timeout=120) == 0  # then the run ends by itself
    db = setup.open_db(task.data_dir)
    assert_one_owner(db, submitted=agent_id, expired=first.agent_id)


def test_an_item_task_relaunch_whose_only_unit_is_finished_but_not_submitted_serves_it(tmp_path, launch_task):
    """The same through the item tasks' shared launch (SSA here, multiref alike): every item labelled,
    the page had not submitted; the relaunch serves it, gives a new worker nothing, and ends by itself
    once the page submitted, with one completed agent."""
    from label_task_helpers import SSA_ITEMS, write_jsonl
    from mephisto.operations.datatypes import WorkerFailureReasons

    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    items = write_jsonl(tmp_path / "items.jsonl", SSA_ITEMS[:2])
    args = ("--items", str(items), "mephisto.blueprint.labels_per_item=1", "mephisto.blueprint.items_per_unit=2",
            "mephisto.blueprint.onboarding=false")
    task = launch_task("ssa", *args)
    task.wait_ready()

    async def label_all_without_submitting():
        page = pw.Client(task.url, "sam", "s1")
        assert await page.open() == ""
        view = page.view
        while view["status"] == "working":
            view = await page.send({"type": "answer", "position": view["position"], "sensible": False})
            assert not view.get("error"), view
        await page.close()
        return page.tab, str(page.agent_id), view

    tab, first_agent, view = pw.run_sync(label_all_without_submitting)
    assert view["status"] == "complete" and view["done"] == 2
    assert task.terminate() == 0

    again = launch_task("ssa", *args, data_dir=task.data_dir)
    again.wait_ready()  # before: "every item has its labels; nothing to launch", and the launcher was gone
    assert "1 finished assignment was not submitted yet: serving it so its page can submit; no new work" in again.log()

    async def open_page(worker, assignment, tab=None):
        page = pw.Client(again.url, worker, assignment, tab=tab)
        unavailable = await page.open()
        return page, unavailable

    async def newcomer_then_the_page():
        _, unavailable = await open_page("tess", "t1")
        page, again_unavailable = await open_page("sam", "s1", tab)  # the same page, registering again
        assert again_unavailable == "", again_unavailable
        view = page.view
        await page.submit()
        await page.close()
        return unavailable, str(page.agent_id), view

    unavailable, agent_id, view = pw.run_sync(newcomer_then_the_page)
    assert unavailable == WorkerFailureReasons.NO_AVAILABLE_UNITS  # no new work
    assert view["status"] == "complete" and view["done"] == 2  # its finished unit: the page submits
    assert again.wait_exit(timeout=120) == 0  # then the run ends by itself
    db = setup.open_db(task.data_dir)
    assert_one_owner(db, submitted=agent_id, expired=first_agent)


def test_a_submit_that_reached_a_stopping_run_after_its_agent_was_expired_is_completed_at_the_relaunch(
        tmp_path, launch):
    """The runner expires, as not submitted, the agent of finished work whose page had not submitted
    when the run stopped; Mephisto still takes packets while it stops, so the page's submit can land
    after that (written into the agent's state; the page then submits to the provider and is gone).
    That submit counts: at the relaunch the agent is completed (review pays the work through it) and a
    registration of the assignment is told it was submitted. The late submit is written into the state
    here as Mephisto's handle_submit writes it: the instant cannot be timed from outside."""
    from acute_task_helpers import make_pairings, write_pairings

    from parlai_acute.files import write_json
    from parlai_acute.mephisto_tasks.acute.protocol_workers import run_protocol_worker
    from parlai_acute.mephisto_tasks.live import setup
    from parlai_acute.mephisto_tasks.live.browser import post_json
    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(6))
    overrides = ACUTE_OVERRIDES
    task = launch(pairings, *overrides)
    task.wait_ready()
    first = pw.run_sync(lambda: run_protocol_worker(task.url, "dora", "d1", prefer_a, submit=False))
    assert first.finished and not first.submitted
    assert task.terminate() == 0
    db = setup.open_db(task.data_dir)
    assert db.get_agent(first.agent_id)["status"] == "expired"  # finished, not submitted when the run stopped
    [state] = [p for p in task.data_dir.rglob("*_state.json") if p.parent.name == first.agent_id]
    data = json.loads(state.read_text())
    write_json(state, dict(data, final_submission={"judgments": 2}))  # the submit landing as the run stopped

    again = launch(pairings, *overrides, data_dir=task.data_dir)
    again.wait_ready()
    name = "simulated-dora"
    answer = pw.run_sync(lambda: post_json(f"{again.url}/request_agent", {"provider_data": {
        "worker_name": name, "agent_registration_id": f"d1-{name}", "assignment_id": "d1", "provider_type": "mock"}}))
    assert (answer["data"].get("init_task_data") or {}).get("already_submitted") is True, answer
    assert db.get_agent(first.agent_id)["status"] == "completed"  # the one agent of that work, to review and pay
    again.terminate()


def test_a_page_whose_submit_never_reached_the_stopped_task_submits_after_the_relaunch(tmp_path, chromium, runs):
    """In Chromium: the page's submit is on its way when the launcher stops (held here until the task
    is down, then failed). The page had stopped listening for its connection once it was submitting,
    so it stayed on "could not save" for good: the work never submitted, the worker never paid. Now it
    registers again, the relaunched task hands it its finished dialogue, and it submits there: one
    dialogue, one completed agent, the first one expired."""
    import signal

    from parlai_acute.mephisto_tasks.live import setup

    args = [*ARGS[:-1], "mephisto.blueprint.target=2"]  # work left: the relaunch has a server to come back to
    run = LocalRun(tmp_path / "data", args, free_port(), tmp_path / "launch0.log", group="per-turn",
                   task_name="submit_later")
    runs.append(run)
    run.wait_ready()
    a = open_page(chromium.new_context(), run.url, "amy", "a1", "__perTurnView")
    wait(a, f"{TURN}.can_send && {idle(a)}", MODELS, "the first turn")
    a_turn(a, "Hello, do you like hiking?")
    a_turn(a, "I walked up a hill today.")
    first_agent = a.evaluate("MephistoLive.agent()")
    held = []
    # no page-side time-out for the submit: it waits for the route (put back once it has failed)
    a.evaluate("window.__abortController = window.AbortController; window.AbortController = undefined")
    a.route("**/submit_task", lambda route: held.append(route))  # on its way, not answered
    a.click("#finish")
    wait(a, "document.body.dataset.status === 'complete'", what="the finished view, submitting")
    while not held:
        a.wait_for_timeout(100)
    stop(run, signal.SIGINT)
    a.wait_for_timeout(1000)  # the page hears its connection close while its submit is still on its way
    held[0].abort()  # the task is gone: the submit fails
    a.unroute("**/submit_task")
    a.evaluate("() => { window.AbortController = window.__abortController; }")
    run = relaunch(run, args, tmp_path / "launch1.log", "per-turn")
    runs.append(run)
    wait(a, "document.body.dataset.finished === 'true'", RELAUNCH, "the dialogue submitted after the relaunch")
    second_agent = a.evaluate("MephistoLive.agent()")
    assert second_agent != first_agent
    db = setup.open_db(run.data_dir)
    deadline = time.time() + 60
    while db.get_agent(second_agent)["status"] != "completed" and time.time() < deadline:
        time.sleep(0.5)
    assert run.terminate() == 0

    _, units, records = stored(run.data_dir, "submit_later")
    started = [u for u in units if u["data"].get("status") not in (None, "unavailable")]
    assert [u["data"]["registration"] for u in started] == ["a1-simulated-amy"]  # one dialogue, read once
    assert started[0]["data"]["final_submission"] is not None
    assert len([r for r in records if r["model"] == "generic_bot"]) == 2  # its two turns, once
    assert_one_owner(db, submitted=second_agent, expired=first_agent)
