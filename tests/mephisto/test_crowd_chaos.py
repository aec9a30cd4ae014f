"""Crowd chaos on all four live tasks: real local architect, Mephisto database, headless Chromium.

One launcher per task serves two scripted workers: one reloads the page at every step and
double-clicks every submit (and, where the task takes text, sends an empty and a 5,000-character
message); the other opens a second tab on the same assignment, moves back, and (SSA) lets the page
sleep past the router's heartbeat; (ACUTE, per-turn) the same worker then opens the assignment in a
second browser (its own context: no shared storage), which takes it over, and after the relaunch
clicks "Continue here" in the first browser again: the page not owning it is told so by the server
within seconds, and nothing it sends is stored. The launcher is stopped mid-step with SIGINT, SIGTERM or
SIGKILL while both pages stay open and relaunched on the same port and data: the pages say
"Reconnecting to the task server..." while it is down, come back by themselves to the same
comparison / turn / item, and the workers finish. Asserted for every task: every action stored
exactly once, none lost, every worker back at the same step, no page stuck past a stated bound
(``chaos_helpers.STEP`` / ``MODELS`` / ``RELAUNCH``).
"""
from __future__ import annotations

import time


from acute_task_helpers import make_pairings, write_pairings
from chaos_helpers import (MODELS, RELAUNCH, SIGNALS, continue_here, elsewhere, freeze, idle, open_page, other_browser,
                           reconnecting, relaunch, reload, stop, wait)
from label_task_helpers import SSA_ITEMS, label_like_a_person, open_db, write_jsonl
from per_turn_task_helpers import GENERIC, SMOL

from parlai_acute.mephisto_tasks.live.local_run import LocalRun, free_port

LONG = "x" * 5000


def _ends_by_itself(run) -> int:
    started = time.perf_counter()
    code = run.wait_exit(timeout=120)
    print(f"chaos: the run ended by itself {time.perf_counter() - started:.1f} s after the last answer")
    return code


def _start(runs, tmp_path, chromium, group, args, task_name, view_var, workers):
    """One launcher, and each worker's first page (in their own browser context: cookies, tabs)."""
    run = LocalRun(tmp_path / "data", args, free_port(), tmp_path / f"{group}0.log", group=group, task_name=task_name)
    runs.append(run)
    started = time.perf_counter()
    run.wait_ready()
    print(f"chaos: launched in {time.perf_counter() - started:.1f} s")
    contexts = [chromium.new_context() for _ in workers]
    pages = [open_page(ctx, run.url, name, f"{name[0]}1", view_var) for ctx, name in zip(contexts, workers)]
    return run, contexts, pages


def _one_completed_agent_each(run, units) -> None:
    """Mephisto holds one completed agent per piece of work (each continued in the agent that holds it):
    every other agent the relaunch and the second browser made is expired, never completed."""
    from mephisto.data_model.agent import Agent

    db = open_db(run.data_dir)
    status = {str(a.db_id): (Agent.get(db, a.db_id).db_status, str(a.unit_id)) for a in db.find_agents()}
    completed = sorted(unit for s, unit in status.values() if s == "completed")
    assert completed == sorted(str(u["unit_id"]) for u in units), status
    assert {s for s, _ in status.values()} <= {"completed", "expired"}, status


def _stop_and_relaunch(runs, tmp_path, run, sig, pages, group, args, stopped=None):
    """``stopped``: read once the launcher is down, before the relaunch (what the relaunch will find stored)."""
    nodes = run.node_pids()
    stop(run, SIGNALS[sig], nodes)
    seen = stopped() if stopped else None
    for page in pages:  # said while the task is down, before anybody acts
        reconnecting(page)
    again = relaunch(run, args, tmp_path / f"{group}1.log", group)
    runs.append(again)
    return again, seen


# ---------------------------------------------------------------------------------------------- ACUTE-Eval
def _acute_decide(view):
    from parlai_acute.mephisto_tasks.acute.simulated_workers import side_with_text

    try:
        return side_with_text(view, "hike")
    except LookupError:
        return side_with_text(view, "A-line")


ACUTE = "window.__acuteView"


def _acute_position(page) -> int:
    return page.evaluate(f"{ACUTE}.comparison.position")


def _judge(page, double=False) -> int:
    wait(page, f"{ACUTE} && !{ACUTE}.finished && !document.getElementById('submit').disabled && {idle(page)}",
         what="a comparison to judge")
    view = page.evaluate(ACUTE)
    position = view["comparison"]["position"]
    page.check(f"#choice-{_acute_decide(view)}")
    page.fill("#reason", f"judged at position {position}, the A side answers")
    if double:
        page.dblclick("#submit")
    else:
        page.click("#submit")
    wait(page, f"({ACUTE}.done >= {position} || {ACUTE}.finished) && !MephistoLive.busy()", what="the judgment stored")
    return position


def test_acute_crowd_chaos(tmp_path, chromium, runs):
    from parlai_acute.mephisto_tasks.acute import store

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(6, xss_in=None))
    args = ["--pairings", str(pairings), "mephisto.blueprint.comparisons_per_unit=3",
            "mephisto.blueprint.max_judgments_per_worker=3"]
    run, (_, tom_ctx), (rita, tom) = _start(runs, tmp_path, chromium, "acute", args, "acute_chaos", "__acuteView",
                                            ("rita", "tom"))
    reloads = []
    for _ in range(2):  # rita: reload before and after each judgment, and double-click every submit
        position = _acute_position(rita)
        reloads.append(reload(rita, "__acuteView", f"{ACUTE}.comparison.position === {position}"))
        _judge(rita, double=True)
        reloads.append(reload(rita, "__acuteView", f"{ACUTE}.comparison.position === {position + 1}"))
    _judge(tom)
    tom2 = open_page(tom_ctx, run.url, "tom", "t1", "__acuteView")  # the same assignment in a second tab
    elsewhere(tom)
    wait(tom2, f"{ACUTE}.comparison.position === 2", what="the second tab at comparison 2")
    _judge(tom2)
    tom.click("#continue-here")  # back to the first tab: it takes over, the second one stops
    elsewhere(tom2)
    wait(tom, f"{ACUTE}.comparison.position === 3 && {idle(tom)}", what="the first tab back at comparison 3")
    office = open_page(chromium.new_context(), run.url, "tom", "t1", "__acuteView")  # tom's other browser
    other_browser(tom)  # told by the server (no storage, no BroadcastChannel shared)
    wait(office, f"{ACUTE}.comparison.position === 3 && {idle(office)}", what="the other browser at comparison 3")

    run, _ = _stop_and_relaunch(runs, tmp_path, run, "SIGINT", [rita, office], "acute", args)
    for page in (rita, office):  # back by themselves, at the same comparison, without a reload
        wait(page, f"{ACUTE}.comparison.position === 3 && {idle(page)}", RELAUNCH, "comparison 3 after the relaunch")
    continue_here(tom, "__acuteView")  # the first browser again, after the relaunch
    other_browser(office)
    for page in (rita, tom):
        while not page.evaluate(f"{ACUTE}.finished"):
            _judge(page)
        wait(page, "document.body.dataset.finished === 'true'", what="the thank-you")
    assert _ends_by_itself(run) == 0  # everything judged: the relaunched run ends by itself

    _one_completed_agent_each(run, store.unit_data_for_task(open_db(run.data_dir), "acute_chaos"))
    df = store.judgments_for_task(open_db(run.data_dir), "acute_chaos")
    per_worker = df.groupby("worker").size().to_dict()
    # onboarding + 3 each, each judgment once
    assert per_worker == {"simulated-rita_sandbox": 4, "simulated-tom_sandbox": 4}, per_worker
    assert not df.duplicated(["worker", "pair_id"]).any()
    assert df["reason"].str.startswith("judged at position").all()
    assert max(reloads) < 5  # seconds; the benchmark perturn_resume_seconds measures it properly


# ---------------------------------------------------------------------------------------------- per-turn
TURN = "window.__perTurnView"


def _wait_turn(page, bound=None):
    cond = f"{TURN} && {TURN}.status !== 'onboarding' && !{TURN}.waiting && {idle(page)}"
    return wait(page, cond, bound or MODELS, "a turn to act on")


def _send(page, text):
    page.fill("#message", text)
    page.click("#send")


def _pick(page, double=False):
    turn = page.evaluate(f"{TURN}.turn")
    (page.dblclick if double else page.click)("#pick-0")
    (page.dblclick if double else page.click)("#submit-choice")
    wait(page, f"{TURN}.turns_done > {turn} && {idle(page)}", MODELS, "the choice stored")


def _never_made(run, worker_name: str) -> bool:
    """True when the worker's stored turn in progress has no candidates yet (what the relaunch must make)."""
    from per_turn_task_helpers import stored

    db, units, _ = stored(run.data_dir, "per_turn_chaos")
    db.shutdown()
    (data,) = [u["data"] for u in units if u["data"].get("worker_name") == worker_name]
    pending = data.get("pending")
    assert pending is not None, "the message sent before the stop was not stored"
    return pending.get("shown_at") is None


def test_per_turn_crowd_chaos(tmp_path, chromium, runs):
    from per_turn_task_helpers import stored

    smol = SMOL.replace("--max-new-tokens 16", "--max-new-tokens 8")  # short replies: the wait is not measured here
    args = ["--model", GENERIC, "--model", f"smol={smol}", "mephisto.blueprint.min_turns=2",
            "mephisto.blueprint.max_turns=3", "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=2",
            "mephisto.blueprint.protocol=soba"]
    run, (_, ben_ctx), (ana, ben) = _start(runs, tmp_path, chromium, "per-turn", args, "per_turn_chaos",
                                           "__perTurnView", ("ana", "ben"))
    _wait_turn(ana)
    _send(ana, "   ")  # an empty message is never sent
    _send(ana, LONG)  # refused beside the box before anything is sent, the words kept to be shortened
    wait(ana, "(document.getElementById('message-note').textContent || '').indexOf('under 1000 characters') >= 0",
         what="the too-long message refused at the box")
    assert ana.input_value("#message") == LONG
    assert ana.evaluate(f"{TURN}.turns_done") == 0 and ana.evaluate(f"{TURN}.messages.length") == 0
    _send(ana, "Hello! Do you like hiking in the mountains?")
    _wait_turn(ana)
    shown = ana.evaluate(f"{TURN}.candidates")
    reload(ana, "__perTurnView", f"{TURN}.candidates && {TURN}.candidates.length === {len(shown)} && !{TURN}.waiting")
    assert ana.evaluate(f"{TURN}.candidates") == shown  # the same replies, in the same order
    _pick(ana, double=True)
    reload(ana, "__perTurnView", f"{TURN}.turns_done === 1 && {TURN}.messages.length === 2")

    _wait_turn(ben)
    _send(ben, "Hi there, what did you do today?")
    _wait_turn(ben)
    ben2 = open_page(ben_ctx, run.url, "ben", "b1", "__perTurnView")
    elsewhere(ben)
    wait(ben2, f"{TURN}.candidates && {TURN}.candidates.length === 2", what="the second tab with the candidates")
    _pick(ben2)
    office = open_page(chromium.new_context(), run.url, "ben", "b1", "__perTurnView")  # ben's other browser
    other_browser(ben2)
    wait(office, f"{TURN}.turns_done === 1 && {TURN}.can_send && {idle(office)}", what="the other browser at turn 2")

    _send(ana, "What else do you enjoy doing at weekends?")  # the turn in progress when the launcher dies
    wait(ana, f"{TURN}.waiting || ({TURN}.candidates || []).length > 0", what="the models writing")
    # killed while SmolLM2 writes (or, rarely, just after: then the candidates were stored and are kept).
    # Which of the two happened is read from the store, not the page: the server stores the candidates
    # before it tells the page, so a page still waiting does not prove they were never made.
    run, writing = _stop_and_relaunch(runs, tmp_path, run, "SIGKILL", [ana, office], "per-turn", args,
                                      stopped=lambda: _never_made(run, "simulated-ana_sandbox"))
    wait(ana, f"{TURN}.turn === 1 && ({TURN}.candidates || []).length === 2 && {idle(ana)}", RELAUNCH,
         "the interrupted turn's candidates after the relaunch")
    print("chaos: the turn in progress was", "being written" if writing else "stored", "when the launcher died")
    assert ("the candidates of turn 2 were never made" in run.log()) == writing, writing
    assert [m["text"] for m in ana.evaluate(f"{TURN}.messages")][-1] == "What else do you enjoy doing at weekends?"
    wait(office, f"{TURN}.turns_done === 1 && {TURN}.can_send && {idle(office)}", RELAUNCH, "ben's turn 2")
    continue_here(ben2, "__perTurnView")  # ben's first browser again, after the relaunch
    other_browser(office)
    _pick(ana)
    _send(ben2, "Tell me about your favourite book.")
    _wait_turn(ben2)
    _pick(ben2)
    for page in (ana, ben2):
        page.click("#finish")
        wait(page, "document.body.dataset.finished === 'true'", what="the thank-you")
    assert _ends_by_itself(run) == 0

    _, units, records = stored(run.data_dir, "per_turn_chaos")
    assert len(units) == 2 and {u["data"]["status"] for u in units} == {"complete"}
    _one_completed_agent_each(run, units)
    by_dialogue = {}
    for r in records:
        by_dialogue.setdefault((r["worker"], r["dialogue"]), []).append((r["turn"], r["model"]))
    assert sorted(w for w, _ in by_dialogue) == ["simulated-ana_sandbox", "simulated-ben_sandbox"]  # one dialogue each
    for turns in by_dialogue.values():  # every turn once, with both models' candidates
        assert sorted(turns) == [(t, m) for t in (0, 1) for m in ("generic_bot", "smol")]
    ana_msgs = [r["worker_message"] for r in records if r["worker"] == "simulated-ana_sandbox" and r["model"] == "smol"]
    assert ana_msgs == ["Hello! Do you like hiking in the mountains?", "What else do you enjoy doing at weekends?"]
    assert {r["dialogue_status"] for r in records} == {"complete"}


# ---------------------------------------------------------------------------------------------- SSA labelling
ITEM = "window.__itemView"
MORE_ITEMS = [{"item_id": f"c{k}:x", "context": [f"What is your plan for day {k}?"], "reply": f"I will read, day {k}.",
               "model": "generic_bot"} for k in range(3, 5)]


def _label(page, double=False, reload_between=False):
    wait(page, f"{ITEM} && {ITEM}.item && {idle(page)}", what="an item to label")
    view = page.evaluate(ITEM)
    sensible, specific = label_like_a_person(view["item"])
    click = page.dblclick if double else page.click
    if not sensible:
        click("#sensible-no")
    else:
        page.click("#sensible-yes")  # stored by the server: the view says the second question
        if reload_between:  # back at the second question of the same item
            wait(page, f"{ITEM}.item.step === 2 && {idle(page)}", what="the second question stored")
            reload(page, "__itemView", f"{ITEM}.position === {view['position']} && document.body.dataset.step === '2'")
        click("#specific-yes" if specific else "#specific-no")
    wait(page, f"{ITEM}.done >= {view['position']} && {idle(page)}", what="the label stored")
    return view["position"]


def test_ssa_label_crowd_chaos(tmp_path, chromium, runs):
    from parlai_acute.mephisto_tasks.ssa import store

    items = write_jsonl(tmp_path / "items.jsonl", SSA_ITEMS + MORE_ITEMS)
    args = ["--items", str(items), "mephisto.blueprint.labels_per_item=1", "mephisto.blueprint.items_per_unit=3",
            "mephisto.blueprint.onboarding=false"]
    run, (_, vic_ctx), (sue, vic) = _start(runs, tmp_path, chromium, "ssa", args, "ssa_chaos", "__itemView",
                                           ("sue", "vic"))
    _label(vic)
    freeze(vic, True)  # vic's laptop sleeps past the router's heartbeat while sue works
    asleep = time.time()
    for _ in range(2):  # sue: reload at every step, double-click every answer
        position = sue.evaluate(f"{ITEM}.position")
        reload(sue, "__itemView", f"{ITEM}.position === {position}")
        _label(sue, double=True, reload_between=True)
        reload(sue, "__itemView", f"{ITEM}.position === {position + 1}")
    time.sleep(max(0.0, 21 - (time.time() - asleep)))  # the router marks a page silent 15-19 s after its last heartbeat
    freeze(vic, False)  # awake: the page notices, registers again and is back at item 2
    wait(vic, f"{ITEM}.position === 2 && {idle(vic)}", RELAUNCH, "item 2 after the page slept")
    vic2 = open_page(vic_ctx, run.url, "vic", "v1", "__itemView")
    elsewhere(vic)
    _label(vic2)

    run, _ = _stop_and_relaunch(runs, tmp_path, run, "SIGTERM", [sue, vic2], "ssa", args)
    for page in (sue, vic2):
        wait(page, f"{ITEM}.position === 3 && {idle(page)}", RELAUNCH, "item 3 after the relaunch")
        _label(page)
        wait(page, "document.body.dataset.finished === 'true'", what="the thank-you")
    assert run.terminate() == 0  # (ending by itself after a resume: ACUTE, per-turn)

    records = store.labels_for_task(open_db(run.data_dir), "ssa_chaos")
    assert sorted(r["item"] for r in records) == sorted(i["item_id"] for i in SSA_ITEMS + MORE_ITEMS)  # once each
    assert {r["worker"] for r in records} == {"simulated-sue_sandbox", "simulated-vic_sandbox"}
    for r in records:
        assert (r["sensible"], r["specific"]) == label_like_a_person({"reply": r["reply"]})


# ---------------------------------------------------------------------------------------------- multi-reference
def _reply(page, text, double=False, expect_error=None):
    wait(page, f"{ITEM} && {ITEM}.item && {idle(page)}", what="a context to write for")
    before = page.evaluate(f"{ITEM}.done * 100 + {ITEM}.item.written.length")
    page.evaluate("t => { document.getElementById('reply').value = t; }", text)  # pasted: no maxlength
    (page.dblclick if double else page.click)("#add")
    if expect_error:
        wait(page, f"(document.getElementById('error').textContent || '').indexOf({expect_error!r}) >= 0",
             what="the reply refused")
        return
    wait(page, f"{ITEM}.done * 100 + ({ITEM}.item ? {ITEM}.item.written.length : 0) > {before} && {idle(page)}",
         what="the reply stored")


def test_multiref_crowd_chaos(tmp_path, chromium, runs):
    from parlai_acute.mephisto_tasks.multiref import store

    dialogues = write_jsonl(tmp_path / "d.jsonl", [[{"text": f"Opening line {k}?"}, {"text": f"Answer {k}."}]
                                                   for k in range(2)])
    args = ["--contexts", str(dialogues), "mephisto.blueprint.mode=2R2W", "mephisto.blueprint.contexts_per_unit=2"]
    run, (_, xia_ctx), (wes, xia) = _start(runs, tmp_path, chromium, "multiref", args, "multiref_chaos",
                                           "__itemView", ("wes", "xia"))
    _reply(wes, LONG, expect_error="under")  # 5,000 characters: refused, nothing stored
    for n in range(3):  # wes: reload after every reply, double-click every submit
        _reply(wes, f"Wes writes reply number {n}", double=True)
        reload(wes, "__itemView", f"{ITEM}.done * 2 + {ITEM}.item.written.length === {n + 1}")
    _reply(xia, "Xia writes the first one")
    xia2 = open_page(xia_ctx, run.url, "xia", "x1", "__itemView")
    elsewhere(xia)
    wait(xia2, f"{ITEM}.item.written.length === 1", what="the second tab with xia's reply")
    _reply(xia2, "Xia writes the second one")

    run, _ = _stop_and_relaunch(runs, tmp_path, run, "SIGKILL", [wes, xia2], "multiref", args)
    wait(wes, f"{ITEM}.position === 2 && {ITEM}.item.written.length === 1 && {idle(wes)}", RELAUNCH,
         "wes's second context, one reply written, after the relaunch")
    wait(xia2, f"{ITEM}.position === 2 && {ITEM}.item.written.length === 0 && {idle(xia2)}", RELAUNCH,
         "xia's second context after the relaunch")
    _reply(wes, "Wes writes the last one")
    for text in ("Xia again, number three", "Xia again, number four"):
        _reply(xia2, text)
    for page in (wes, xia2):
        wait(page, "document.body.dataset.finished === 'true'", what="the thank-you")
    assert run.terminate() == 0

    rows = store.reply_records(store.unit_data_for_task(open_db(run.data_dir), "multiref_chaos"))
    mine = {w: [r["text"] for r in rows if r["worker"] == f"simulated-{w}_sandbox"] for w in ("wes", "xia")}
    assert mine == {"wes": [f"Wes writes reply number {n}" for n in range(3)] + ["Wes writes the last one"],
                    "xia": ["Xia writes the first one", "Xia writes the second one",
                                      "Xia again, number three", "Xia again, number four"]}
    assert all(r["set_complete"] for r in rows) and not any(len(r["text"]) > 1000 for r in rows)
