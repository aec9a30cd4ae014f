"""Per-turn evaluation end to end: real models (SmolLM2 in two configurations, GenericBot), the local
architect, the Mephisto database and scripted workers in real headless Chromium.

Every test reads the run back from the database and checks it against exactly what the
scripted worker saw and clicked.
"""
from __future__ import annotations

import json
from collections import Counter

from per_turn_task_helpers import GENERIC, GREEDY, SAMPLED, SHORT, WRONG, careful, stored, write

from parlai_acute.logs import read_log
from parlai_acute.mephisto_tasks.per_turn import simulated_workers as sw
from parlai_acute.mephisto_tasks.per_turn.simulated_workers import Choice
from parlai_acute.per_turn.analysis import AnalysisConfig, analyze
from parlai_acute.per_turn.turns import turns_table
from parlai_acute.worlds.per_turn import history_digest


def conversation_before(units, dialogue_id: str, turn: int) -> list[str]:
    """What every model should have seen at ``turn``: the worker's messages and the continuations."""
    data = next(u["data"] for u in units if u["data"].get("dialogue_id") == dialogue_id)
    said = [m["text"] for m in data["messages"] if m.get("seed")]
    for t in data["turns"][:turn]:
        said.append(t["worker_message"])
        said.append(t["user_reply"] if t["fallback"] == "user" else
                    next(c["text"] for c in t["candidates"] if c["continued"]))
    return said + [data["turns"][turn]["worker_message"]]


def test_pm_soba_every_click_is_stored_names_never_shown_onboarding_blocks(tmp_path, launch_per_turn, chromium):
    task = launch_per_turn("--model", GREEDY, "--model", GENERIC, *SHORT, "mephisto.blueprint.target=2")
    task.wait_ready()
    pages = []

    def choose(view):
        if view["status"] == "onboarding":
            return careful(view)
        return Choice(picked=[view["turn"] % len(view["candidates"])])  # position 0, then 1

    composer_shown = []  # the practice turn offers no message box (hidden wins over its flex layout)

    def hook(page, view):
        pages.append(page.content() + json.dumps(view))
        if view["status"] == "onboarding":
            composer_shown.append(page.is_visible("#composer"))

    run = sw.run_worker(chromium, task.url, "ann", "a1", write, choose, turns=2, page_hook=hook)
    assert run.finished and run.status == "complete" and len(run.made) == 2
    assert "Thank you" in run.message
    assert composer_shown == [False]

    def reckless(view):  # marks the plainly wrong onboarding reply as the best
        return Choice(picked=[next(r["position"] for r in view["onboarding"]["replies"] if r["text"] in WRONG)])

    rex = sw.run_worker(chromium, task.url, "rex", "r1", write, reckless, turns=2)
    assert rex.status == "blocked" and not rex.made
    assert "you cannot take part in this task" in rex.message  # told so, not thanked as if done
    assert task.terminate() == 0

    db, units, records = stored(task.data_dir)
    rows = [r for r in records if r["worker"].startswith("simulated-ann")]
    assert len(rows) == 4 and {r["setting"] for r in rows} == {"pm"} and {r["protocol"] for r in rows} == {"soba"}
    for made in run.made:
        turn_rows = [r for r in rows if r["turn"] == made["turn"]]
        assert {r["model"] for r in turn_rows} == {"smol_greedy", "generic_bot"}
        assert sorted(r["position"] for r in turn_rows) == [0, 1]
        for r in turn_rows:  # what the server stored is what the page showed at that position
            assert made["candidates"][r["position"]] == r["text"]
            assert r["picked"] == (r["position"] in made["choice"].picked) == r["continued"]
        assert {r["fallback"] for r in turn_rows} == {"picked"}
        assert turn_rows[0]["worker_message"] == made["message"]
    assert {r["dialogue_status"] for r in rows} == {"complete"}
    # the analysis reproduces exactly the choices made
    result = analyze(turns_table(records), AnalysisConfig(bootstrap=0))
    table = result.designs[0].groups[0].models_table.set_index("model")
    clicked = Counter(r["model"] for r in rows if r["picked"])
    assert {m: int(table.loc[m, "picked"]) for m in table.index} == {m: clicked.get(m, 0) for m in table.index}
    assert int(table["turns"].iloc[0]) == 2
    # the server, not the page, holds which model wrote what: no model name ever reached the page
    assert pages and not any("smol_greedy" in p or "generic_bot" in p for p in pages)
    # SmolLM2 conditioned on the real conversation at every turn
    for unit in units:
        for turn in unit["data"].get("turns", []):
            smol = next(c for c in turn["candidates"] if c["model"] == "smol_greedy")
            expected = conversation_before(units, unit["data"]["dialogue_id"], turn["turn"])
            assert smol["context_digest"] == history_digest(expected)
    # the failed worker holds the block qualification; the dialogue log was written on stop
    from mephisto.data_model.worker import Worker

    rex_name = next(u["worker_name"] for u in units if u["worker_name"].startswith("simulated-rex"))
    assert Worker.get(db, db.find_workers(worker_name=rex_name)[0].db_id).is_qualified("parlai_acute_per_turn_block")
    [episode] = read_log(task.data_dir / "per_turn_logs" / "per_turn_test.jsonl")
    bot_turns = [t for t in episode.turns if t["id"] == "bot"]
    assert [t["per_turn"]["continued_by"] for t in bot_turns] == [
        next(r["model"] for r in rows if r["turn"] == k and r["continued"]) for k in (0, 1)]


def test_mm_sata_user_a_written_reply_continues_for_every_model(tmp_path, launch_per_turn, chromium):
    task = launch_per_turn("--model", GREEDY, "--model", SAMPLED, "--model", GENERIC, *SHORT,
                           "mephisto.blueprint.setting=mm", "mephisto.blueprint.protocol=sata_user",
                           "mephisto.blueprint.target=1", "mephisto.blueprint.justification=optional")
    task.wait_ready()
    mine = "I would rather talk about my trip to Lisbon last spring."
    ticked_on_arrival = []

    def choose(view):
        if view["status"] == "onboarding":
            return careful(view)
        if view["turn"] == 0:
            return Choice(picked=[0, 2])
        if view["turn"] == 1:
            return Choice(none=True, user_reply=mine, justification="none of them answered me")
        return Choice(picked=[1])

    def hook(page, view):  # a new turn's replies arrive with nothing ticked
        if view["status"] == "chatting" and view["candidates"]:
            ticked_on_arrival.append(page.evaluate("document.querySelectorAll('#candidates input:checked').length"))

    run = sw.run_worker(chromium, task.url, "mia", "m1", write, choose, turns=3, page_hook=hook)
    assert run.finished and run.status == "complete" and len(run.made) == 3
    assert ticked_on_arrival == [0, 0, 0]
    assert task.terminate() == 0
    _, units, records = stored(task.data_dir)
    turn = {k: [r for r in records if r["turn"] == k] for k in range(3)}
    assert [len(turn[k]) for k in range(3)] == [3, 3, 3] and {r["model_set"] for r in records} == {
        "generic_bot|smol_greedy|smol_sampled"}
    assert sorted(r["position"] for r in turn[0] if r["picked"]) == [0, 2]
    [continued] = [r for r in turn[0] if r["continued"]]
    assert continued["picked"] and continued["fallback"] == "random_picked"
    assert not any(r["picked"] or r["continued"] for r in turn[1])
    assert {r["fallback"] for r in turn[1]} == {"user"} and {r["user_reply"] for r in turn[1]} == {mine}
    assert {r["justification"] for r in turn[1]} == {"none of them answered me"}
    assert [r["position"] for r in turn[2] if r["picked"]] == [1]
    # at turn 2 both SmolLM2 configurations conditioned on the worker's own reply
    dialogue = units[0]["data"]["dialogue_id"]
    expected = conversation_before(units, dialogue, 2)
    assert mine in expected
    turn2 = units[0]["data"]["turns"][2]["candidates"]
    assert {c["context_digest"] for c in turn2 if c["model"] != "generic_bot"} == {history_digest(expected)}


def test_sm_appropriate_or_not_and_the_reply_continues_either_way(tmp_path, launch_per_turn, chromium):
    task = launch_per_turn("--model", GREEDY, "--model", GENERIC, *SHORT, "mephisto.blueprint.setting=sm",
                           "mephisto.blueprint.protocol=sm", "mephisto.blueprint.target=1",
                           "mephisto.blueprint.onboarding=false")
    task.wait_ready()
    runs, boxes = [], []

    def narrow(page, view):  # at 400 px the chat and the reply stack, each nearly full width
        if view["candidates"]:
            boxes.append([page.locator(f"#{c}").bounding_box() for c in ("chat-column", "judge-column")])

    for worker, width in (("sam", 1200), ("sue", 400)):
        def choose(view):
            return Choice(picked=[0]) if view["turn"] == 0 else Choice(none=True)

        runs.append(sw.run_worker(chromium, task.url, worker, f"{worker}1", write, choose, turns=2,
                                  viewport={"width": width, "height": 800},
                                  page_hook=narrow if width == 400 else None))
    assert [r.status for r in runs] == ["complete", "complete"]
    assert boxes and all(chat["x"] == judge["x"] and judge["y"] > chat["y"] and judge["width"] > 300
                         for chat, judge in boxes)
    assert task.wait_exit(timeout=120) == 0  # both sets have their dialogue: the run ends by itself
    _, units, records = stored(task.data_dir)
    assert sorted(r["model"] for r in records) == ["generic_bot", "generic_bot", "smol_greedy", "smol_greedy"]
    assert [r["picked"] for r in sorted(records, key=lambda r: (r["model"], r["turn"]))] == [True, False, True, False]
    assert all(r["continued"] and r["position"] == 0 and r["setting"] == "sm" for r in records)


def test_a_a_run_the_same_model_twice_shows_no_difference(tmp_path, launch_per_turn):
    """Two names for one SmolLM2 configuration, workers choosing a position at random (seeded)."""
    import random

    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    same = f"{SAMPLED.split('=', 1)[1]}"
    task = launch_per_turn("--model", f"twin_a={same}", "--model", f"twin_b={same}", "mephisto.blueprint.min_turns=4",
                           "mephisto.blueprint.max_turns=4", "mephisto.blueprint.onboarding=false",
                           "mephisto.blueprint.target=3")
    task.wait_ready()
    rng = random.Random(7)

    def coin(view):
        return Choice(picked=[rng.randrange(len(view["candidates"]))])

    runs = [pw.run_sync(lambda w=w: pw.run_protocol_worker(task.url, f"aa{w}", f"aa{w}", write, coin, turns=4))
            for w in range(3)]
    assert [r.status for r in runs] == ["complete"] * 3
    assert task.wait_exit(timeout=120) == 0
    _, _, records = stored(task.data_dir)
    result = analyze(turns_table(records), AnalysisConfig(bootstrap=200))
    [pair] = result.designs[0].comparisons.itertuples(index=False)
    assert pair.turns == 12 and pair.pvalue > 0.05 and pair.mark == ""
    # three dialogues are too few to resample (a 3-cluster bootstrap is anti-conservative): none given
    assert pair.cluster_pvalue != pair.cluster_pvalue and "more)" in pair.cluster_note


def test_interactive_ssa_labels_every_reply_and_the_convai2_survey(tmp_path, launch_per_turn, chromium):
    """Meena's interactive SSA (starting with "Hi!") and ConvAI2's end-of-chat ratings, as options of the
    same chat task: one dialogue with a persona, every reply labelled, then the survey."""
    from per_turn_task_helpers import stored as read_back

    from parlai_acute.convai2.ratings import ratings_table
    from parlai_acute.mephisto_tasks.per_turn import store
    from parlai_acute.ssa.labels import labels_table

    task = launch_per_turn("--model", GENERIC, *SHORT, "mephisto.blueprint.setting=sm", "mephisto.blueprint.protocol=sm",
                           "mephisto.blueprint.label_mode=ssa", "mephisto.blueprint.opening=persona",
                           "mephisto.blueprint.survey=convai2", "mephisto.blueprint.survey_questions=fluency",
                           "mephisto.blueprint.target=1", "mephisto.blueprint.onboarding=false")
    task.wait_ready()
    seen = []

    def label(view):
        seen.append(view)
        if view["turn"] == 0:
            return Choice(sensible=True, specific=False)  # "I don't know" / "ok": sensible, not specific
        return Choice(sensible=False, specific=True)  # the page never asks; the server stores "not specific"

    def answer(view):
        seen.append(view)
        return {"scores": {"engagingness": 2, "fluency": 4}, "reasons": {"engagingness": "short answers"},
                "persona": 1}

    run = sw.run_worker(chromium, task.url, "meg", "m1", write, label, turns=2, answer_survey=answer)
    assert run.status == "complete" and len(run.made) == 2
    assert seen[0]["worker_context"].startswith("your persona:")  # the worker was given a persona of their own
    assert task.wait_exit(timeout=120) == 0
    _, units, records = read_back(task.data_dir)
    labels = store.ssa_label_records(units)
    assert [(x["sensible"], x["specific"]) for x in labels] == [(True, False), (False, False)]
    assert {x["reply"] for x in labels} <= {"I don't know", "ok"} and labels[0]["context"] == records[0]["worker_message"]
    table = labels_table(labels)  # the SSA analysis reads these rows as they are
    assert list(table["sensible"]) == [True, False] and set(table["source"]) == {"interactive"}
    assert [r["picked"] for r in sorted(records, key=lambda r: r["turn"])] == [True, False]  # picked = makes sense
    ratings = {r["question"]: r for r in store.ratings_records(units)}
    assert ratings["engagingness"]["score"] == 2 and ratings["engagingness"]["reason"] == "short answers"
    assert ratings["fluency"]["score"] == 4
    assert len(ratings_table(list(ratings.values()))) == 2  # the ConvAI2 analysis reads them as they are
    data = units[0]["data"]
    options = data["survey"]["persona_options"]
    model_persona = " ".join(data["seed"]["personas"][1])
    worker_persona = " ".join(data["seed"]["personas"][0])
    assert model_persona in options and worker_persona not in options  # the decoy is never the worker's own
    assert ratings["engagingness"]["persona_choice_correct"] == (options[1] == model_persona)
    assert seen[-1]["survey"]["personas"] == options  # what the page showed is what was stored

    # a new process reaches every analysis of this run from the task name alone: the turns, the
    # interactive SSA labels and the ConvAI2 survey, each also exported to its table file
    from fresh_process import analyze_and_export

    from parlai_acute.convai2.ratings import read_ratings
    from parlai_acute.per_turn.turns import read_turns
    from parlai_acute.ssa.labels import read_labels

    analysis, export = analyze_and_export("convai2", "per_turn_test", task.data_dir, tmp_path, "ratings.csv")
    assert "2 ratings of 1 dialogues by 1 workers" in analysis.out and "raw 2.000" in analysis.out
    assert sorted(read_ratings(tmp_path / "ratings.csv")["score"]) == [2.0, 4.0]
    analysis, export = analyze_and_export("ssa", "per_turn_test", task.data_dir, tmp_path, "labels.jsonl")
    assert "2 labels of 2 items by 1 workers" in analysis.out
    assert list(read_labels(tmp_path / "labels.jsonl")["sensible"]) == [True, False]
    analysis, export = analyze_and_export("per-turn", "per_turn_test", task.data_dir, tmp_path, "turns.csv")
    assert "2 of 2 turns kept" in analysis.out
    assert len(read_turns(tmp_path / "turns.csv")) == len(records)


def test_a_slow_model_is_retried_and_the_wait_says_so_and_the_stored_latency_is_the_workers_wait(
        launch_per_turn):
    """Issue 25: a worker waited 106.9 s (a 60 s model timeout, then a retry) while the page said only
    "1 of 2 ready" and latency_seconds stored 46.8 s. The wait now says a reply is asked for again, the
    console names the model, and the stored latency runs from the worker's message, retries included."""
    import os
    from pathlib import Path

    from per_turn_task_helpers import GENERIC, stored

    from parlai_acute.mephisto_tasks.per_turn import protocol_workers as pw

    here = str(Path(__file__).parent)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)}
    task = launch_per_turn("--model", "slow=slow_agents:SlowFirstAgent", "--model", GENERIC,
                           "mephisto.blueprint.min_turns=1", "mephisto.blueprint.max_turns=1",
                           "mephisto.blueprint.onboarding=false", "mephisto.blueprint.target=1",
                           "mephisto.blueprint.model_timeout=2", "mephisto.blueprint.model_retries=1", env=env)
    task.wait_ready()

    async def worker():
        c = pw.Client(task.url, "patient", "p1")
        assert await c.open() == ""
        view = await c.send({"type": "message", "text": "Do you like mountains?"})
        waits = [v["text"]["waiting"] for v in c.seen if v.get("waiting")]
        view = await c.send({"type": "choice", "turn": view["turn"], "picked": [0]})
        await c.submit()
        await c.close()
        return waits, view

    waits, view = pw.run_sync(worker)
    assert view["status"] == "complete"
    assert "Waiting for 2 replies: 0 of 2 ready..." in waits
    retry = [w for w in waits if "asked for again" in w]
    assert retry and retry[0] == ("Waiting for 2 replies: 1 of 2 ready... One reply is taking longer than expected "
                                  "and is being asked for again (attempt 2 of 2). Thank you for waiting.")
    assert not any("slow" in w for w in waits)  # the page stays blind: which model it is, only the console says
    assert "model slow failed (no reply within 2 s); asking it again (attempt 2 of 2)" in task.log()
    _, units, records = stored(task.data_dir)
    [turn] = units[0]["data"]["turns"]
    slow = next(c for c in turn["candidates"] if c["model"] == "slow")
    generic = next(c for c in turn["candidates"] if c["model"] != "slow")
    assert slow["attempts"] == 2 and slow["position"] is not None
    # the worker's wait: at least the timed-out first attempt, far more than the model's own time on the retry
    assert slow["latency"] >= 2.0 > slow["generation_seconds"]
    assert turn["wait_seconds"] >= max(slow["latency"], generic["latency"])
    by_model = {r["model"]: r["latency_seconds"] for r in records}
    assert by_model == {"slow": slow["latency"], "generic_bot": generic["latency"]}
