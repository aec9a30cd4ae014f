"""The SSA labelling and multi-reference pages in headless Chromium against the real task (local architect,
Mephisto database): every word they show is the server's (the view's ``text``, the task configuration's
shared lines), and the SSA step is the server's too: "it makes sense" is stored, so a reload, a second tab
and a SIGTERM + relaunch of the launcher all come back to the second question of the same item, and the
label is stored once."""
from __future__ import annotations

import json
import signal
import urllib.request


from chaos_helpers import RELAUNCH, elsewhere, idle, open_page, reconnecting, relaunch, reload, stop, wait
from label_task_helpers import SSA_ITEMS, open_db, write_jsonl

from parlai_acute.mephisto_tasks.live.local_run import LocalRun, free_port
from parlai_acute.mephisto_tasks.live.texts import live_texts

ITEM = "window.__itemView"


def shown(page, ids) -> dict:
    return page.evaluate("ids => Object.fromEntries(ids.map(id => [id, document.getElementById(id).textContent]))",
                         ids)


def test_ssa_page_says_the_servers_words_and_the_second_question_survives_reload_tab_and_relaunch(
        tmp_path, chromium, runs):
    from parlai_acute.mephisto_tasks.ssa import store

    items = write_jsonl(tmp_path / "items.jsonl", SSA_ITEMS)
    args = ["--items", str(items), "mephisto.blueprint.labels_per_item=1", "mephisto.blueprint.items_per_unit=2",
            "mephisto.blueprint.onboarding=false"]
    run = LocalRun(tmp_path / "data", args, free_port(), tmp_path / "ssa0.log", group="ssa", task_name="ssa_texts")
    runs.append(run)
    run.wait_ready()
    with urllib.request.urlopen(f"{run.url}/task_config.json") as response:  # the shared lines, before any view
        assert json.load(response)["texts"] == live_texts()

    context = chromium.new_context()
    page = open_page(context, run.url, "tia", "t1", "__itemView")
    wait(page, f"{ITEM}.item && {idle(page)}", what="the first item")
    view = page.evaluate(ITEM)
    text = view["text"]
    assert shown(page, ["progress", "intro-text", "q1-text", "q1-help", "sensible-yes", "sensible-no",
                        "reply-who"]) == {
        "progress": text["progress"], "intro-text": text["intro"], "q1-text": text["sensible"],
        "q1-help": text["sensible_help"], "sensible-yes": text["sensible_yes"], "sensible-no": text["sensible_no"],
        "reply-who": text["response"]}
    assert text["progress"] == "Item 1 of 2" and "label 2 responses" in text["intro"] and "check" not in text["intro"]
    assert page.locator("#q2").is_hidden() and page.evaluate("document.body.dataset.step") == "1"

    page.click("#sensible-yes")  # stored by the server: the view says step 2
    wait(page, f"{ITEM}.item.step === 2 && {idle(page)}", what="the second question")
    assert shown(page, ["q2-text", "step-note", "specific-yes", "specific-no", "change-first"]) == {
        "q2-text": page.evaluate(f"{ITEM}.text.specific"), "step-note": page.evaluate(f"{ITEM}.text.step"),
        "specific-yes": text["specific_yes"], "specific-no": text["specific_no"],
        "change-first": text["change_first"]}
    page.click("#change-first")  # back to the first question, also stored
    wait(page, f"{ITEM}.item.step === 1 && {idle(page)}", what="the first question again")
    assert page.locator("#q2").is_hidden()
    page.click("#sensible-yes")
    wait(page, f"{ITEM}.item.step === 2 && {idle(page)}", what="the second question")

    reload(page, "__itemView", f"{ITEM}.position === 1 && document.body.dataset.step === '2'")
    second = open_page(context, run.url, "tia", "t1", "__itemView")  # a second tab: the same question
    wait(second, f"{ITEM}.position === 1 && document.body.dataset.step === '2' && {idle(second)}",
         what="the second tab at the second question")
    elsewhere(page)
    assert page.inner_text("#live-banner").startswith(live_texts()["elsewhere"])

    stop(run, signal.SIGTERM)
    reconnecting(second)
    assert second.inner_text("#live-banner") == live_texts()["reconnecting"]
    run = relaunch(run, args, tmp_path / "ssa1.log", "ssa")
    runs.append(run)
    wait(second, f"{ITEM}.position === 1 && document.body.dataset.step === '2' && {idle(second)}", RELAUNCH,
         "the second question of the same item after the relaunch")
    assert second.locator("#q2").is_visible() and second.locator("#sensible-yes").is_disabled()
    second.click("#specific-no")
    wait(second, f"{ITEM}.done === 1 && {ITEM}.item.step === 1 && {idle(second)}", what="the next item")
    assert second.inner_text("#progress") == "Item 2 of 2" and second.locator("#q2").is_hidden()
    second.click("#sensible-no")
    wait(second, "document.body.dataset.finished === 'true'", what="the thank-you")
    assert second.inner_text("#status") == second.evaluate(f"{ITEM}.text.done")
    assert "2 responses labelled" in second.inner_text("#status")
    assert run.terminate() == 0

    records = store.labels_for_task(open_db(run.data_dir), "ssa_texts")
    assert sorted((r["sensible"], r["specific"]) for r in records) == [(False, False), (True, False)]  # once each
    assert len({r["item"] for r in records}) == 2 and {r["worker"] for r in records} == {"simulated-tia_sandbox"}


def test_multiref_page_says_the_servers_words_and_refuses_an_empty_reply_in_them(tmp_path, chromium, runs):
    dialogues = write_jsonl(tmp_path / "d.jsonl", [[{"text": f"Opening line {k}?"}, {"text": f"Answer {k}."}]
                                                   for k in range(2)])
    args = ["--contexts", str(dialogues), "mephisto.blueprint.mode=2R1W", "mephisto.blueprint.contexts_per_unit=2",
            "mephisto.blueprint.min_reply_chars=3"]
    run = LocalRun(tmp_path / "data", args, free_port(), tmp_path / "mr.log", group="multiref",
                   task_name="multiref_texts")
    runs.append(run)
    run.wait_ready()
    preview = chromium.new_page()
    preview.goto(run.url + "/")  # no worker, no assignment: a preview says so in the configuration's words
    preview.wait_for_function("document.getElementById('status').textContent !== 'Loading…'")
    assert preview.inner_text("#status") == live_texts()["preview"]
    preview.close()

    page = open_page(chromium.new_context(), run.url, "una", "u1", "__itemView")
    wait(page, f"{ITEM}.item && {idle(page)}", what="the first context")
    text = page.evaluate(f"{ITEM}.text")
    assert shown(page, ["progress", "intro-text", "remaining", "reply-label", "add"]) == {
        "progress": "Conversation 1 of 2", "intro-text": text["intro"],
        "remaining": "2 more replies to write for this conversation", "reply-label": text["label"],
        "add": text["add"]}
    assert "2 different replies" in text["intro"] and page.get_attribute("#reply", "placeholder") == text["placeholder"]
    page.click("#add")  # empty: refused on the page, in the server's words, nothing sent
    assert page.inner_text("#error") == text["too_short"] == "Please write a reply of at least 3 characters."
    page.fill("#reply", "A first reply")
    page.click("#add")
    wait(page, f"{ITEM}.item.written.length === 1 && {idle(page)}", what="the reply stored")
    assert page.inner_text("#remaining") == "1 more reply to write for this conversation"
    page.fill("#reply", "a first reply!")  # a repeat (case and end punctuation ignored)
    page.click("#add")
    assert page.inner_text("#error") == text["repeat"]
    # the page keeps no step of its own: a reload shows the same context with the reply written, from the server
    reload(page, "__itemView", f"{ITEM}.position === 1 && {ITEM}.item.written.length === 1")
    assert page.locator("#written li").all_inner_texts() == ["A first reply"]
    assert page.inner_text("#remaining") == "1 more reply to write for this conversation"
