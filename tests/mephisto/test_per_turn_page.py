"""The per-turn page in headless Chromium: the words it shows are the configuration's (counts,
practice check, header, empty message, automatic end at max_turns), and at 400 px and 1280x800 the
controls of each step are on screen without hunting."""
from __future__ import annotations

import re

from per_turn_task_helpers import careful, stored, write

from parlai_acute.mephisto_tasks.per_turn import simulated_workers as sw
from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice

BOT = "parlai_acute.agents.generic_bot:GenericBotAgent"


def on_screen(page, selector: str) -> bool:
    """Every element matching ``selector`` is visible and wholly inside the viewport."""
    size = page.viewport_size
    boxes = [page.locator(selector).nth(i).bounding_box() for i in range(page.locator(selector).count())]
    return bool(boxes) and all(b is not None and b["y"] >= 0 and b["y"] + b["height"] <= size["height"] + 0.5
                               and b["x"] >= 0 and b["x"] + b["width"] <= size["width"] + 0.5 for b in boxes)


def layout_checks(seen: list):
    def hook(page, view):
        text = {k: page.inner_text(f"#{k}") for k in ("progress", "intro-text", "question")}
        row = {"status": view["status"], "turns_done": view["turns_done"], "text": text,
               "assignment": page.inner_text("#assignment"),
               "status_space": page.evaluate("document.getElementById('status').offsetHeight")}
        if view["status"] == "onboarding" or view["candidates"]:
            row["cards"] = page.locator("#candidates label.card[data-position]").count()
            row["on_screen"] = on_screen(page, "#candidates .card") and on_screen(page, "#submit-choice")
        else:
            row["notice"] = page.inner_text("#notice") if page.is_visible("#notice") else ""
            row["on_screen"] = on_screen(page, "#message") and on_screen(page, "#send") and (
                not view["messages"] or on_screen(page, "#messages .msg:last-child"))
            if not row.get("empty_checked"):  # an empty message is refused with words, nothing sent
                page.fill("#message", "   ")
                page.click("#send")
                row["empty_error"] = page.inner_text("#error")
        seen.append(row)
    return hook


def test_pm_page_says_two_replies_explains_the_practice_and_ends_itself_at_400px(launch_per_turn, chromium):
    task = launch_per_turn("--model", f"g1={BOT}", "--model", f"g2={BOT}", "mephisto.blueprint.min_turns=2",
                           "mephisto.blueprint.max_turns=2", "mephisto.blueprint.target=1")
    task.wait_ready()
    # the launch ends with the address, on a line of its own; Mephisto's INFO lines only with --verbose
    started = task.log().splitlines()
    assert started[-1] == task.address() and started[-2].startswith("Open this address in a browser")
    seen: list = []

    def choose(view):
        return careful(view) if view["status"] == "onboarding" else Choice(picked=[0])

    run = sw.run_worker(chromium, task.url, "pia", "p1", write, choose, turns=5,
                        viewport={"width": 400, "height": 800}, page_hook=layout_checks(seen))
    # the worker asked for 5 turns, but the chat ended by itself after max_turns=2, with no Finish click
    assert run.finished and run.status == "complete" and len(run.made) == 2
    assert "You judged 2 turns (the last turn of this conversation)" in run.message
    practice = seen[0]
    assert practice["status"] == "onboarding" and practice["cards"] == 2
    assert "2 possible replies" in practice["text"]["intro-text"] and "3 possible" not in practice["text"]["intro-text"]
    assert "check" in practice["text"]["intro-text"] and practice["text"]["progress"] == "Practice turn"
    first = seen[1]
    assert "passed the practice check" in first["notice"]
    assert first["text"]["progress"] == "Turn 1 of 2" and "2 possible replies" in first["text"]["intro-text"]
    assert first["empty_error"] == "Please write a message before sending."
    judging = [r for r in seen if r["status"] == "chatting" and "cards" in r]
    assert [r["cards"] for r in judging] == [2, 2]
    assert [r["text"]["progress"] for r in judging] == ["Turn 1 of 2", "Turn 2 of 2"]
    assert all(r["on_screen"] for r in seen), [r for r in seen if not r["on_screen"]]
    assert all(r["status_space"] > 0 for r in seen)  # "Sending..." has its line kept: nothing shifts
    assert task.wait_exit(timeout=120) == 0
    _, units, records = stored(task.data_dir)
    assert units[0]["data"]["status"] == "complete" and len({r["turn"] for r in records}) == 2
    # the worker's real assignment: on the page, in the console, and never the printed "assignment_id=1"
    data = units[0]["data"]
    shown = {r["assignment"] for r in seen}
    assert shown == {f"Your assignment: {data['assignment']}"}
    log = task.log()
    assert f"took assignment {data['assignment']}: dialogue {data['dialogue_id']}" in log
    opening = task.address()
    assert "&assignment_id=" in opening and not opening.endswith("assignment_id=1")
    mephisto = re.compile(r"^(\[[\d/: ]+\])?\s+INFO\s")  # Mephisto's log lines (Rich's layout)
    assert not [line for line in log.splitlines() if mephisto.match(line) or "Mock task launched" in line
                or "Client connected" in line or "Prometheus" in line], log


def test_mm_four_replies_fit_1280x800_and_the_wait_counts_them(launch_per_turn, chromium):
    task = launch_per_turn(*[a for i in range(1, 5) for a in ("--model", f"g{i}={BOT}")],
                           "mephisto.blueprint.setting=mm", "mephisto.blueprint.protocol=sata_user",
                           "mephisto.blueprint.min_turns=1", "mephisto.blueprint.max_turns=2",
                           "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1")
    task.wait_ready()
    seen: list = []
    waits: list = []
    check = layout_checks(seen)

    def hook(page, view):  # every wait notice the page shows, recorded as it changes
        if not seen:
            page.evaluate("""() => { window.__waits = []; const w = document.getElementById('waiting');
                new MutationObserver(() => { if (!w.hidden) window.__waits.push(w.textContent); })
                  .observe(w, {attributes: true, childList: true, characterData: true, subtree: true}); }""")
        check(page, view)
        waits[:] = page.evaluate("window.__waits")

    run = sw.run_worker(chromium, task.url, "max", "m1", write, lambda v: Choice(picked=[0, 3]), turns=2,
                        viewport={"width": 1280, "height": 800}, page_hook=hook)
    assert run.status == "complete" and len(run.made) == 2
    judging = [r for r in seen if "cards" in r]
    assert [r["cards"] for r in judging] == [4, 4] and all(r["on_screen"] for r in seen)
    assert "4 possible replies" in seen[0]["text"]["intro-text"] and "tick every one of the 4" in seen[0]["text"]["intro-text"]
    # the wait said how many replies were coming, with progress
    assert "Waiting for 4 replies: 0 of 4 ready..." in waits
    assert any(f"Waiting for 4 replies: {n} of 4 ready..." in waits for n in (1, 2, 3)), waits
    assert task.wait_exit(timeout=120) == 0
    _, units, _ = stored(task.data_dir)
    assert len(units[0]["data"]["turns"]) == 2


def test_the_message_limit_is_the_servers_shown_at_the_box_and_a_refusal_keeps_the_text(launch_per_turn, chromium):
    """Issue 25: a 5,000-character message was refused far from the box (in the judging column) and
    emptied, with no counter beforehand. Now the box counts against the limit the server sends, a
    message over it is refused beside the box before anything is sent, a refusal by the server shows
    there too, and the words stay in the box to be shortened."""
    from parlai_acute.mephisto_tasks.live.browser import open_worker_page, wait_view
    from parlai_acute.mephisto_tasks.per_turn.runner import MAX_MESSAGE_CHARS

    task = launch_per_turn("--model", f"g1={BOT}", "--model", f"g2={BOT}", "mephisto.blueprint.min_turns=1",
                           "mephisto.blueprint.max_turns=1", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=1")
    task.wait_ready()
    url, _, page, ms = open_worker_page(chromium, task.url, "longwinded", "l1", 120)
    page.set_default_timeout(ms)
    page.goto(url)
    view = wait_view(page, "__perTurnView", "v.can_send", ms)
    assert view["max_message_chars"] == MAX_MESSAGE_CHARS  # the page's limit is the server's
    long = " ".join(["word"] * 1000)  # 4,999 characters
    page.fill("#message", "Hello there")
    assert page.inner_text("#message-note") == f"11 of {MAX_MESSAGE_CHARS} characters"
    page.fill("#message", long)
    refusal = f"Please keep your message under {MAX_MESSAGE_CHARS} characters (yours has 4999)."
    assert page.inner_text("#message-note") == refusal
    page.click("#send")  # refused at the box: nothing sent, nothing lost
    assert page.input_value("#message") == long and page.inner_text("#message-note") == refusal
    assert page.evaluate("MephistoLive.busy()") is False and page.inner_text("#error") == ""
    shown = page.evaluate("window.__perTurnView")  # nothing reached the server: no refusal, no message
    assert shown["error"] is None and shown["messages"] == [] and shown["can_send"]

    # a page that lets it through (an old page, a script): the server refuses, said beside the box, text kept
    # the limit lifted and Send clicked in one turn of the page's script: a view the server sends in between
    # (the ownership ping's answer) would bring the limit back, and the click would be refused at the box
    page.evaluate("() => { window.__perTurnView.max_message_chars = 100000; document.getElementById('send').click(); }")
    view = wait_view(page, "__perTurnView", f"v.version > {shown['version']} && v.error", ms)
    assert view["error"] == refusal and view["messages"] == []
    page.wait_for_function("() => !MephistoLive.busy()")
    assert page.inner_text("#message-note") == refusal and page.inner_text("#error") == ""
    assert page.input_value("#message") == long

    page.fill("#message", "Hello there, how are you?")  # shortened: the note counts again, and it is sent
    # the server's next view brought its own limit back: the page never keeps a limit of its own
    assert page.inner_text("#message-note") == f"25 of {MAX_MESSAGE_CHARS} characters"
    page.click("#send")
    view = wait_view(page, "__perTurnView", "v.candidates && v.candidates.length", ms)
    assert [m["text"] for m in view["messages"] if m["speaker"] == "human"] == ["Hello there, how are you?"]
    assert page.input_value("#message") == "" and page.inner_text("#message-note") == ""
    page.close()
