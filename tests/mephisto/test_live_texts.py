"""What the ACUTE-Eval, SSA labelling and multi-reference pages say, rendered by the server for every
configuration each supports (ACUTE: question preset or custom, check comparison on/off, counts;
SSA: check item on/off, static or conversation items, first or second question, the end; multi-
reference: replies per worker of each mode, length limits, the end), and the shared connection lines
the pages read from the task configuration."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from parlai_acute.acute.questions import PRESETS, resolve
from parlai_acute.mephisto_tasks.live import texts as shared
from parlai_acute.mephisto_tasks.acute import texts as acute
from parlai_acute.mephisto_tasks.multiref import texts as multiref
from parlai_acute.multiref.contexts import parse_mode
from parlai_acute.mephisto_tasks.ssa import texts as ssa

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def numbers(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\d+", text)}


def all_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in all_strings(v)]
    return [s for v in value for s in all_strings(v)]


@pytest.mark.parametrize("preset", [*PRESETS, "custom"])
@pytest.mark.parametrize("check_first", [True, False])
@pytest.mark.parametrize("n,minutes,min_reason", [(1, 1, 1), (6, 9, 10), (3, 2, 25)])
def test_acute_says_its_question_counts_check_and_reason_rule(preset, check_first, n, minutes, min_reason):
    _, question = resolve(preset, "Who is funnier?" if preset == "custom" else None)
    first = acute.page_texts(question=question, n=n, position=1, minutes=minutes, min_reason=min_reason,
                             check_first=check_first)
    assert first["question"] == question
    assert numbers(first["intro"]) == {n, minutes}  # "compare 6 pairs ... about 9 minutes", nothing else
    assert (f"{n} pair " if n == 1 else f"{n} pairs ") in first["intro"]
    assert ("minute " if minutes == 1 else "minutes ") in first["intro"]
    assert ("check" in first["intro"]) == check_first and first["progress"] == f"Comparison 1 of {n}"
    assert numbers(first["reason_short"]) == {min_reason} and numbers(first["reason_help"]) == {min_reason}
    assert first["reason_help"].format(missing=4).endswith("(4 more).")  # the page fills in what is missing
    assert first["sides"] == ["Conversation 1 (judge Speaker 1)", "Conversation 2 (judge Speaker 2)"]
    if n > 1:
        later = acute.page_texts(question=question, n=n, position=2, minutes=minutes, min_reason=min_reason,
                                 check_first=check_first)
        assert later["progress"] == f"Comparison 2 of {n}"
    done = acute.page_texts(question=question, n=n, position=None, minutes=minutes, min_reason=min_reason,
                            check_first=check_first, finished=True)
    assert done["progress"] == "Done" and done["done"].startswith("Thank you! Your answers are saved")
    assert numbers(done["done"]) == {n}
    blocked = acute.page_texts(question=question, n=n, position=None, minutes=minutes, min_reason=min_reason,
                               check_first=check_first, finished=True, blocked=True, blocked_message="Ended: wrong.")
    assert blocked["progress"] == "Ended" and blocked["done"] == "Ended: wrong."
    for text in (first, done, blocked):  # every value is words, no template left for the page but {missing}
        assert all(s.strip() for s in all_strings(text)), text
        assert {m for s in all_strings(text) for m in PLACEHOLDER.findall(s)} <= {"missing"}


@pytest.mark.parametrize("check_first", [True, False])
@pytest.mark.parametrize("source", ["static", "interactive", "log"])
@pytest.mark.parametrize("n", [1, 3, 10])
def test_ssa_says_counts_check_source_step_and_end(check_first, source, n):
    page = ssa.page_texts(status="working", n=n, position=1, check_first=check_first, source=source)
    assert numbers(page["intro"]) == {n} and re.search(rf"\b{n} responses?\b", page["intro"])
    assert ("responses" in page["intro"].split(",")[0]) == (n != 1)
    assert ("check" in page["intro"]) == check_first and page["progress"] == f"Item 1 of {n}"
    assert bool(page["source"]) == (source != "static")  # a turn of a real chat is said to be one
    assert page["sensible"] == "Does the response make sense?" and page["specific"] == "Is the response specific?"
    assert "appropriate" not in " ".join(all_strings(page)).lower()  # Meena's questions, never ACUTE's
    assert page["step"] == ""
    second = ssa.page_texts(status="working", n=n, position=1, step=2, source=source)
    assert "second question" in second["step"] and second["progress"] == f"Item 1 of {n}"
    done = ssa.page_texts(status="complete", n=n, position=None, labelled=n)
    assert done["done"].startswith("Thank you! Your answers are saved") and numbers(done["done"]) == {n}
    assert done["progress"] == ""
    blocked = ssa.page_texts(status="blocked", n=n, position=None, message=ssa.FAILED)
    assert blocked["done"] == ssa.FAILED and "Thank you! Your answers" not in blocked["done"]
    gone = ssa.page_texts(status="unavailable", n=0, position=None, message=shared.NO_WORK)
    assert gone["done"] == shared.NO_WORK


@pytest.mark.parametrize("mode", ["4R1W", "2R2W", "1R4W", "3R1W"])
@pytest.mark.parametrize("min_chars,max_chars", [(1, 50), (2, 300)])
def test_multiref_says_how_many_replies_its_mode_asks_and_the_length_rules(mode, min_chars, max_chars):
    replies, _ = parse_mode(mode)
    page = multiref.page_texts(status="working", replies=replies, n=5, position=2, left=replies, min_chars=min_chars,
                               max_chars=max_chars)
    assert page["progress"] == "Conversation 2 of 5"
    if replies == 1:
        assert "one reply" in page["intro"] and "different replies" not in page["intro"]
    else:
        assert f"{replies} different replies" in page["intro"]
    assert numbers(page["intro"]) == {replies, 5} - ({1} if replies == 1 else set())
    assert numbers(page["remaining"]) == {replies}
    assert multiref.page_texts(status="working", replies=replies, n=5, position=2, left=1, min_chars=min_chars,
                               max_chars=max_chars)["remaining"] == "1 more reply to write for this conversation"
    assert numbers(page["too_short"]) == {min_chars} and numbers(page["too_long"]) == {max_chars}
    assert ("1 character." in page["too_short"]) == (min_chars == 1)
    done = multiref.page_texts(status="complete", replies=replies, n=5, position=None, left=0, min_chars=min_chars,
                               max_chars=max_chars, written=5 * replies)
    assert done["done"].startswith("Thank you! Your answers are saved") and numbers(done["done"]) == {5 * replies}


def test_shared_lines_are_served_with_the_task_configuration_and_fill_their_placeholders():
    lines = shared.live_texts()
    assert {"reconnecting", "elsewhere", "continue_here", "preview", "gone", "saving", "no_work"} <= set(lines)
    assert "Reconnecting to the task server" in lines["reconnecting"]  # what the chaos suite waits for
    assert "open in another tab" in lines["elsewhere"] and lines["continue_here"] in lines["elsewhere"]
    assert {m for s in all_strings(lines) for m in PLACEHOLDER.findall(s)} == {"status"}
    lines["gone"] = "changed"
    lines["failure_reasons"].clear()
    assert shared.live_texts()["gone"] != "changed"  # a copy: a caller cannot change what others are told
    assert shared.live_texts()["failure_reasons"] == shared.FAILURE_REASONS


def test_every_mephisto_failure_reason_is_told_in_our_words_and_an_unknown_one_generically():
    from mephisto.operations.datatypes import WorkerFailureReasons

    mephisto_lines = {v for k, v in vars(WorkerFailureReasons).items() if k.isupper()}
    assert mephisto_lines == set(shared.FAILURE_REASONS)  # a Mephisto that rewords one fails here, not silently
    ours = [shared.failure_text(line) for line in sorted(mephisto_lines)]
    assert len(set(ours)) == len(ours) and shared.FAILURE_UNKNOWN not in ours
    for mephisto_line, text in zip(sorted(mephisto_lines), ours):
        assert text != mephisto_line and "..." not in text and "session" not in text and text.endswith((".", "!"))
    assert shared.failure_text(WorkerFailureReasons.NOT_QUALIFIED) == shared.NOT_ELIGIBLE  # blocked: the check's line
    assert shared.failure_text("Some future Mephisto reason, please wait...") == shared.FAILURE_UNKNOWN
    assert shared.failure_text(None) == shared.failure_text("") == shared.NO_WORK  # no reason given: no work


def _page_words(path: Path) -> list[str]:
    """Words a page file would show of its own: an HTML file's text outside scripts and styles; a
    script's string literals (comments stripped) with a capitalised word or two words in a row."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".html":
        source = re.sub(r"(?s)<(script|style)\b.*?</\1>|<!--.*?-->", "", source)
        words = [t.strip() for t in re.split(r"<[^>]*>", source) if t.strip()]
        return [w for w in words if not re.fullmatch(r"\$\w+", w)]  # the shared frame's $main placeholder
    source = re.sub(r"(?s)/\*.*?\*/", "", source)
    source = re.sub(r"(?m)(^|\s)//\s.*$", "", source)
    literals = re.findall(r'"((?:[^"\\]|\\.)*)"', source)
    return [s for s in literals if (re.search(r"\b[A-Z][a-z]+\b", s) or re.search(r"[A-Za-z]{2,} [A-Za-z]{2,}", s))
            and s not in JS_TOKENS and ":" not in s]  # key names, HTTP headers, inline CSS


JS_TOKENS = {"use strict", "Content-Type", "Enter", "conversation side-"}  # not words a worker reads
FRONTENDS = sorted(Path(shared.__file__).parent.parent.glob("**/frontend/*.*"))


@pytest.mark.parametrize("path", [p for p in FRONTENDS if p.suffix in (".html", ".js")], ids=lambda p: p.name)
def test_pages_have_no_wording_of_their_own_beyond_the_loading_line(path):
    """A worker-facing string added to a page instead of a texts module fails here."""
    assert _page_words(path) in ([], ["Loading\u2026"]), path


def test_every_page_is_the_shared_frame_around_its_own_main():
    """One frame (head, router client, title, progress, status) for all four pages, so they cannot drift."""
    from parlai_acute.mephisto_tasks.live.page_builder import page_html

    folders = sorted({p.parent for p in FRONTENDS if p.name == "main.html"})
    assert [f.parent.name for f in folders] == ["acute", "multiref", "per_turn", "ssa"]
    for folder in folders:
        page = page_html(folder)
        css = next(folder.glob("*.css")).name
        assert page.startswith("<!DOCTYPE html>") and f'href="{css}"' in page and "$" not in page.split("<main>")[0]
        assert page.index('src="mephisto_live.js"') < page.index('id="status"') < page.index(f'src="{css[:-4]}.js"')


def test_a_page_whose_server_is_down_at_its_first_load_says_so_in_the_shared_words(tmp_path, chromium):
    """The page is served (real HTTP on loopback) but its task server is not there: no task
    configuration, no router. The shared lines are built into the page, so a preview says the
    server cannot be reached, and a worker's page says it is reconnecting, in the server's words."""
    import functools
    import http.server
    import threading

    from parlai_acute.mephisto_tasks.live.browser import worker_url
    from parlai_acute.mephisto_tasks.live.page_builder import SHARED_FRONTEND_DIR, page_html

    folder = Path(shared.__file__).parent.parent / "ssa" / "frontend"
    for source in (*SHARED_FRONTEND_DIR.iterdir(), *folder.iterdir()):
        (tmp_path / source.name).write_bytes(source.read_bytes())
    (tmp_path / "index.html").write_text(page_html(folder), encoding="utf-8")
    import mephisto.abstractions.providers.mock as mock_provider  # what the router serves for the mock provider

    wrap = Path(mock_provider.__file__).parent / "wrap_crowd_source.js"
    (tmp_path / "wrap_crowd_source.js").write_bytes(wrap.read_bytes())
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    lines = shared.live_texts()
    page = chromium.new_page()
    try:
        page.goto(base + "/index.html")  # a preview: no worker, no assignment
        page.wait_for_function("t => document.getElementById('status').textContent === t", arg=lines["unreachable"],
                               timeout=20_000)
        page.goto(worker_url(base, "w1", "a1").replace("/?", "/index.html?"))
        page.wait_for_function("t => (document.getElementById('live-banner') || {}).textContent === t",
                               arg=lines["reconnecting"], timeout=20_000)
    finally:
        page.close()
        server.shutdown()
