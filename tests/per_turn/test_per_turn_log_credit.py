"""A reply a worker wrote (SATA-User) is the worker's in the Conversations log of a per-turn run, and
nothing made from that log -- ACUTE pairings, log metrics, SSA items -- credits it to a model."""
from __future__ import annotations

from parlai_acute.acute import pairings as P
from parlai_acute.logs import read_log, turn_role
from parlai_acute.mephisto_tasks.per_turn import store
from parlai_acute.metrics.loganalytics import analyse_episodes
from parlai_acute.ssa.items import items_from_log

MINE = "I would rather talk about my trip to Lisbon last spring."


def _turn(k: int, message: str, replies: dict[str, str], continued: str | None) -> dict:
    candidates = [{"model": m, "text": t, "position": p, "picked": m == continued, "continued": m == continued,
                   "error": ""} for p, (m, t) in enumerate(replies.items())]
    return {"turn": k, "worker_message": message, "candidates": candidates,
            "fallback": "picked" if continued else "user", "user_reply": "" if continued else MINE,
            "justification": "", "shown_at": 1.0, "decided_at": 2.0}


def _unit(dialogue: str, turns: list[dict]) -> dict:
    return {"worker_name": "simulated-mia", "worker_id": "1", "unit_id": dialogue, "task_run_id": "1",
            "data": {"dialogue_id": dialogue, "model_set": ["a", "b"], "status": "complete", "setting": "pm",
                     "protocol": "sata_user", "messages": [], "turns": turns, "config": {"protocol": "sata_user"}}}


def sata_user_log(tmp_path):
    replies = [{"a": f"Model a speaks at turn {k}.", "b": f"Model b speaks at turn {k}."} for k in range(4)]
    units = [
        # the worker writes the reply at turn 2: turns 0-1 are the models', the rest is cut for ACUTE
        _unit("d1", [_turn(0, "Hello there!", replies[0], "a"), _turn(1, "Do you hike?", replies[1], "b"),
                     _turn(2, "Say something.", replies[2], None), _turn(3, "Go on.", replies[3], "a")]),
        # the worker writes the very first reply: nothing of a model's before it
        _unit("d2", [_turn(0, "Hi!", replies[0], None), _turn(1, "And then?", replies[1], "b")]),
        _unit("d3", [_turn(0, "Good morning.", replies[0], "b"), _turn(1, "Nice.", replies[1], "a")]),
    ]
    return store.write_conversations(units, tmp_path / "per_turn.jsonl")


def test_the_log_gives_a_written_reply_to_the_worker(tmp_path):
    episodes = read_log(sata_user_log(tmp_path))
    written = [t for e in episodes for t in e.turns if t["text"] == MINE]
    assert len(written) == 2 and {t["id"] for t in written} == {"human"}
    assert {turn_role(t) for t in written} == {"human"}
    assert {t["per_turn"]["continued_by"] for t in written} == {"human"}
    model_turns = [t for e in episodes for t in e.turns if t["id"] == "bot"]
    assert model_turns and all(t["per_turn"]["continued_by"] in ("a", "b") for t in model_turns)


def test_acute_pairings_metrics_and_ssa_items_never_credit_the_workers_words(tmp_path):
    log = sata_user_log(tmp_path)
    dialogues = P.load_dialogues(P.parse_model_spec(f"per_turn={log}"))
    by_source = {d.source.rsplit(":", 1)[1]: d for d in dialogues}
    # d2 had nothing of a model's before the worker's reply: not compared at all
    assert sorted(by_source) == ["1", "3"]
    d1 = by_source["1"]
    assert d1.cut == 4 and [t["text"] for t in d1.turns] == [
        "Hello there!", "Model a speaks at turn 0.", "Do you hike?", "Model b speaks at turn 1."]
    assert by_source["3"].cut == 0 and len(by_source["3"].turns) == 4
    credited = [t["text"] for d in dialogues for t in d.turns if t["id"] == "per_turn"]
    assert credited and MINE not in credited and all(t.startswith("Model ") for t in credited)
    other = P.build_pairings({"per_turn": dialogues, "again": P.load_dialogues(P.parse_model_spec(f"again={log}"))},
                             comparisons_per_pair=2, seed=0)
    for line in other:
        for dd, speaker in zip(line["dialogue_dicts"], line["speakers_to_eval"]):
            assert MINE not in [t["text"] for t in dd["dialogue"] if t["id"] == speaker]

    table = analyse_episodes({"per_turn": read_log(log)}).set_index(["speaker", "role"])
    assert table.loc[("bot", "model"), "utterances"] == 6  # d1: 3, d2: 1, d3: 2 (the written ones are not)
    assert table.loc[("human", "human"), "utterances"] == 8 + 2  # 8 worker messages + 2 written replies

    items = items_from_log(log, "bot")
    assert MINE not in {i["reply"] for i in items} and len(items) == 6
