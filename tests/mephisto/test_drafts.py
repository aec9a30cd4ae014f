"""Unsent typing survives a reload and shows in a second tab (``MephistoLive.draft``, shared by every
page), on its own item and reply only, and goes once the server has stored it; and a worker Mephisto
gives no unit is told so in our words, not Mephisto's. A multi-reference launch (no models) and a
per-turn one (two generic bots: the message, own-reply and reason boxes), each in real headless Chromium
with one browser context (one worker's browser: reload, second tab, the same storage).
"""
from __future__ import annotations

from chaos_helpers import elsewhere, idle, open_page, wait
from label_task_helpers import XSS, write_jsonl
from per_turn_task_helpers import stored

from parlai_acute.mephisto_tasks.live import texts
from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

CONTEXTS = [[{"text": "Hi, how was your trip to Rome?"}, {"text": "Wonderful, the food was amazing."}],
            [{"text": "I just adopted a puppy!"}, {"text": "Congratulations! What breed?"}]]
VIEW = "__itemView"


def drafts(page) -> dict:
    """This browser's stored drafts, key -> text."""
    return page.evaluate("() => Object.fromEntries(Object.keys(localStorage)"
                         ".filter(k => k.startsWith('parlai-acute:draft:')).map(k => [k, localStorage[k]]))")


def at(position: int, written: int) -> str:
    return (f"{idle(None)} && window.{VIEW}.position === {position} "
            f"&& window.{VIEW}.item.written.length === {written}")


def test_an_unsent_reply_survives_reload_and_second_tab_on_its_own_item_and_goes_once_stored(
        tmp_path, launch_task, chromium):
    contexts = write_jsonl(tmp_path / "dialogues.jsonl", CONTEXTS)
    task = launch_task("multiref", "--contexts", str(contexts), "mephisto.blueprint.mode=2R1W",
                       "mephisto.blueprint.contexts_per_unit=2", "mephisto.blueprint.fast_reply_seconds=0")
    task.wait_ready()
    browser = chromium.new_context(viewport={"width": 1000, "height": 800})
    try:
        page = open_page(browser, task.url, "dee", "d1", VIEW)
        wait(page, at(1, 0))
        half = "Half a reply " + XSS  # typed key by key, not sent; markup in it stays text
        page.locator("#reply").press_sequentially(half)
        page.reload()
        wait(page, at(1, 0), what="context 1 after a reload")
        assert page.input_value("#reply") == half
        assert page.evaluate("window.__xss") is None and page.locator("#written li").count() == 0

        # a second tab of the same assignment shows the draft too, and takes the assignment over
        tab = open_page(browser, task.url, "dee", "d1", VIEW)
        wait(tab, at(1, 0))
        assert tab.input_value("#reply") == half
        elsewhere(page)
        tab.locator("#reply").press("End")
        tab.locator("#reply").press_sequentially(" more")  # the other tab's box follows (storage event)
        wait(page, f"document.getElementById('reply').value === {half + ' more'!r}", what="the draft followed")
        page.close()
        page = tab

        # sent and stored: the box is empty, and stays empty after a reload (the draft is gone)
        page.locator("#reply").press("End")
        page.locator("#reply").press_sequentially(" and the rest.")
        page.press("#reply", "Enter")
        wait(page, at(1, 1), what="reply 1 stored")
        assert page.locator("#written li").all_inner_texts() == [f"{half} more and the rest."]  # as text
        assert page.evaluate("window.__xss") is None
        assert page.input_value("#reply") == "" and drafts(page) == {}
        page.reload()
        wait(page, at(1, 1))
        assert page.input_value("#reply") == ""

        # a draft of reply 2 on context 1, and the reply sent from elsewhere (another device): the
        # page, back on context 2, shows an empty box, not context 1's words
        page.locator("#reply").press_sequentially("Only for Rome")
        assert list(drafts(page).values()) == ["Only for Rome"]

        async def elsewhere_sends():
            client = pw.Client(task.url, "dee", "d1")
            assert await client.open() == ""
            view = await client.send({"type": "answer", "position": 1, "index": 2, "text": "Pasta every day!"})
            await client.close()
            return view

        assert pw.run_sync(elsewhere_sends)["position"] == 2
        page.reload()
        wait(page, at(2, 0), what="context 2 after the reply was sent elsewhere")
        assert page.input_value("#reply") == "" and "Only for Rome" not in page.inner_text("body")
        page.locator("#reply").press_sequentially("For the puppy")
        page.reload()
        wait(page, at(2, 0))
        assert page.input_value("#reply") == "For the puppy"

        # another worker while every context is taken: Mephisto's "no available work" in our words
        eve = browser.new_page()
        eve.goto(f"{task.url.rstrip('/')}/?worker_id=simulated-eve&assignment_id=e1")
        wait(eve, "document.body.dataset.unavailable === 'true'", what="eve told there is no unit")
        mephisto_line = "There is currently no available work, please try again later..."
        assert eve.inner_text("#status") == texts.failure_text(mephisto_line) != mephisto_line
        assert not eve.is_visible("#intro") and not eve.is_visible("#task")  # no empty boxes under the line
        eve.close()

        # the unit's end takes every draft of the assignment with it (context 1's orphan included)
        for text in (" is a beagle!", "Lovely, what's its name?"):
            page.fill("#reply", text.strip())
            page.press("#reply", "Enter")
            wait(page, f"{idle(None)} && (window.{VIEW}.status !== 'working' || "
                       f"window.{VIEW}.item.written.length === 1)")
        wait(page, "document.body.dataset.finished === 'true'", what="the unit submitted")
        assert drafts(page) == {}
    finally:
        browser.close()


BOT = "parlai_acute.agents.generic_bot:GenericBotAgent"
TURN = "__perTurnView"


def test_per_turn_message_own_reply_reasons_and_survey_survive_a_reload_until_stored(launch_per_turn, chromium):
    task = launch_per_turn("--model", f"g1={BOT}", "--model", f"g2={BOT}", "mephisto.blueprint.protocol=sata_user",
                           "mephisto.blueprint.justification=optional", "mephisto.blueprint.min_turns=1",
                           "mephisto.blueprint.max_turns=2", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=1", "mephisto.blueprint.opening=persona",
                           "mephisto.blueprint.survey=convai2")
    task.wait_ready()
    chatting = f"{idle(None)} && window.{TURN}.can_send && !window.{TURN}.turn"
    judging = f"{idle(None)} && (window.{TURN}.candidates || []).length === 2"
    browser = chromium.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = open_page(browser, task.url, "tom", "t1", TURN)
        wait(page, chatting)
        page.locator("#message").press_sequentially("Unsent hello")
        page.reload()
        wait(page, chatting, what="the message box after a reload")
        assert page.input_value("#message") == "Unsent hello"
        page.press("#message", "Enter")
        wait(page, judging, what="the replies to the first message")
        page.reload()
        wait(page, judging)
        assert page.input_value("#message") == ""  # sent: not offered again

        page.check("#none")
        page.locator("#user-reply").press_sequentially("My own reply <b>here</b>")
        page.locator("#justification").press_sequentially("neither answered")
        page.reload()
        wait(page, judging, what="the turn's replies after a reload")
        assert page.input_value("#user-reply") == "My own reply <b>here</b>"
        assert page.input_value("#justification") == "neither answered"
        page.check("#none")
        page.click("#submit-choice")
        wait(page, f"{chatting} && window.{TURN}.turns_done === 1", what="the choice stored")
        assert drafts(page) == {}
        page.reload()
        wait(page, f"{chatting} && window.{TURN}.turns_done === 1")
        assert [page.input_value(box) for box in ("#message", "#user-reply", "#justification")] == ["", "", ""]
        _, units, _ = stored(task.data_dir)
        turn = units[0]["data"]["turns"][0]
        assert turn["worker_message"] == "Unsent hello" and turn["user_reply"] == "My own reply <b>here</b>"

        # the end-of-chat survey's optional reasons too
        page.click("#finish")
        wait(page, f"{idle(None)} && window.{TURN}.status === 'survey'", what="the survey")
        first = page.locator("#survey-questions input[type=text]").first
        first.press_sequentially("felt natural")
        page.reload()
        wait(page, f"{idle(None)} && window.{TURN}.status === 'survey'", what="the survey after a reload")
        assert page.locator("#survey-questions input[type=text]").first.input_value() == "felt natural"
    finally:
        browser.close()
