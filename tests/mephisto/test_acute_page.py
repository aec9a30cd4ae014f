"""What a worker sees, in headless Debian chromium against the real task (local architect, Node router):
question before the conversations, an introduction before the first comparison, a live reason
hint, stacked conversations on a narrow screen, a clear message after a failed onboarding, and an unsent
reason that survives a reload."""
from __future__ import annotations

from parlai_acute.mephisto_tasks.acute import simulated_workers as sw
from acute_task_helpers import make_pairings, write_pairings

FAILED = "Wrong answer on the check comparison so this task is over for you"


def box(page, selector: str) -> dict:
    return page.locator(selector).bounding_box()


def open_unit(chromium, url: str, worker: str, width: int):
    page = chromium.new_page(viewport={"width": width, "height": 800})
    page.goto(sw.worker_url(url, worker, f"{worker}-1"))
    page.wait_for_selector("#task:not([hidden])")
    return page


def test_page_layout_intro_reason_hint_narrow_screen_and_failed_onboarding(tmp_path, launch, chromium):
    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(6, xss_in=None))
    task = launch(pairings, "mephisto.blueprint.comparisons_per_unit=2", "mephisto.blueprint.max_judgments_per_worker=2",
                  f"mephisto.blueprint.onboarding_fail_message={FAILED}")
    task.wait_ready()

    # 1. a desktop page: the question and instructions come before the conversations; the introduction
    #    (how many comparisons, about how long) before the first comparison
    wide = open_unit(chromium, task.url, "wide", 1200)
    question, conversations = box(wide, "#question"), box(wide, "#conversations")
    assert box(wide, "#intro")["y"] < question["y"] < box(wide, ".instructions")["y"] < conversations["y"]
    intro = wide.inner_text("#intro")
    assert "compare 3 pairs of conversations" in intro  # onboarding + 2
    minutes = wide.evaluate("window.__acuteView.minutes")
    assert minutes >= 1 and f"about {minutes} minute" in intro
    # every word is the server's (the view's text, acute/texts.py), for this configuration
    text = wide.evaluate("window.__acuteView.text")
    assert wide.inner_text("#question") == text["question"] == "Who would you prefer to talk to for a long conversation?"
    assert wide.inner_text("#intro-text") == text["intro"] and "first pair is a check" in text["intro"]
    assert wide.inner_text("#progress") == text["progress"] == "Comparison 1 of 3"
    assert [wide.inner_text(f"#{k}") for k in ("instructions", "answer-legend", "reason-label", "submit")] == [
        text["instructions"], text["answer"], text["reason_label"], text["submit"]]
    assert wide.locator("#conversations h3").all_inner_texts() == text["sides"]
    wide.click("#submit")  # nothing chosen: refused on the page in the server's words
    assert wide.inner_text("#error") == text["choose_speaker"] == "Please choose one of the two speakers."
    columns = [box(wide, f".conversation.side-{k}") for k in (1, 2)]
    assert columns[0]["x"] < columns[1]["x"] and abs(columns[0]["y"] - columns[1]["y"]) < 1  # side by side

    # 2. a wrong onboarding answer: the worker is told so (the configured wording), not thanked
    wide.check(f"#choice-{sw.side_with_text(wide.evaluate('window.__acuteView'), 'i i i')}")
    wide.fill("#reason", "I liked this one better")
    wide.click("#submit")
    wide.wait_for_function("document.body.dataset.finished === 'true'")
    status = wide.inner_text("#status")
    assert status == FAILED and "Thank you! Your answers are saved" not in status
    assert wide.evaluate("document.body.dataset.blocked") == "true" and wide.locator("#task").is_hidden()
    wide.close()

    # 3. a phone-sized page (400 px): the conversations stack, each nearly the full width
    narrow = open_unit(chromium, task.url, "narrow", 400)
    # the first view comes with the registration, a second one answers the socket's hello: a view of the
    # comparison already shown leaves its conversations in place (the worker's scroll and choice stay)
    narrow.wait_for_function("window.__acuteViews >= 2")
    assert narrow.evaluate("window.__acuteBuilds") == 1
    left, right = box(narrow, ".conversation.side-1"), box(narrow, ".conversation.side-2")
    assert left["x"] == right["x"] and left["width"] > 300 and right["width"] > 300
    assert right["y"] >= left["y"] + left["height"]
    assert box(narrow, "#question")["y"] < left["y"]

    # 4. the reason hint and the "too short" error go away as soon as the reason is long enough
    narrow.check(f"#choice-{sw.side_with_text(narrow.evaluate('window.__acuteView'), 'hike')}")
    assert "10 more" in narrow.inner_text("#reason-help")
    narrow.type("#reason", "short")
    narrow.click("#submit")
    assert narrow.inner_text("#error") == "Please give a reason of at least 10 characters."
    assert "5 more" in narrow.inner_text("#reason-help")
    narrow.type("#reason", " tex")  # 9 characters: still too short
    assert narrow.inner_text("#error") != "" and narrow.locator("#reason-help").is_visible()
    narrow.type("#reason", "t")  # 10
    assert narrow.inner_text("#error") == ""
    assert narrow.locator("#reason-help").is_hidden()

    # 5. after the first comparison the introduction is gone; the question still leads
    narrow.click("#submit")
    narrow.wait_for_function("window.__acuteView.done === 1 && !document.getElementById('submit').disabled")
    assert narrow.locator("#intro").is_hidden()
    assert narrow.inner_text("#progress") == "Comparison 2 of 3"
    assert narrow.locator("#reason-help").is_visible() and narrow.inner_text("#error") == ""
    assert box(narrow, "#question")["y"] < box(narrow, "#conversations")["y"]

    # 6. the sent reason is gone from the box; an unsent one survives a reload, on its own comparison,
    #    with its hint (MephistoLive.draft)
    assert narrow.input_value("#reason") == ""
    narrow.type("#reason", "half a")
    narrow.reload()
    narrow.wait_for_function("window.__acuteView && window.__acuteView.done === 1"
                             " && !document.getElementById('task').hidden")
    assert narrow.input_value("#reason") == "half a" and "4 more" in narrow.inner_text("#reason-help")
    narrow.close()


def test_a_tie_is_offered_with_allow_tie_and_stored_once_as_a_tie(tmp_path, launch, chromium):
    """allow_tie (issue 24): beside the two speakers the page offers the server's "about the same" and
    "both are bad"; a tie clicked (and its submit clicked twice) is stored once, as a tie with no model."""
    from parlai_acute.mephisto_tasks.acute import store
    from parlai_acute.mephisto_tasks.live import setup

    pairings = write_pairings(tmp_path / "pairings.jsonl", make_pairings(3, xss_in=None))
    task = launch(pairings, "mephisto.blueprint.allow_tie=true", "mephisto.blueprint.comparisons_per_unit=2",
                  "mephisto.blueprint.max_judgments_per_worker=2")
    task.wait_ready()
    page = open_unit(chromium, task.url, "tier", 1200)
    text = page.evaluate("window.__acuteView.text")
    assert text["ties"] == {"tie": "They are about the same", "both_bad": "Both are bad"}
    assert page.locator("#choices label").all_inner_texts() == ["Speaker 1", "Speaker 2", "They are about the same",
                                                                 "Both are bad"]
    assert "any other answer ends this task" in text["intro"]
    # the check comparison first: its one clear answer
    page.check(f"#choice-{sw.side_with_text(page.evaluate('window.__acuteView'), 'hike')}")
    page.fill("#reason", "asks a real question back")
    page.click("#submit")
    page.wait_for_function("window.__acuteView.done === 1 && !document.getElementById('submit').disabled")
    page.check("#choice-tie")
    page.fill("#reason", "both are equally dull")
    page.evaluate("document.getElementById('submit').click(); document.getElementById('submit').click()")
    page.wait_for_function("window.__acuteView.done === 2")
    page.check("#choice-both_bad")
    page.fill("#reason", "neither one makes sense")
    page.click("#submit")
    page.wait_for_function("document.body.dataset.finished === 'true'")
    df = store.judgments_from_mephisto_db("acute_test", setup.open_db(task.data_dir))
    regular = df[~df["is_onboarding"]].sort_values("timestamp")
    assert list(regular["outcome"]) == ["tie", "both_bad"]  # once each: the double click stored one tie
    assert (regular["winner"] == "").all() and (regular["winner_side"] == "").all()
    assert df[df["is_onboarding"]]["onboarding_correct"].tolist() == [True]
