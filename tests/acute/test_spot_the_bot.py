"""Spot The Bot's released annotations (issue 24): the dump's layout in, the authors' win counts back.

The fixture under tests/fixtures/spot_the_bot is written by the project in the layout of
jderiu/spot-the-bot-code's MongoDB dump (``mongoexport --jsonArray``: ``{"$oid": ...}`` ids,
annotations pointing at conversations by ``convo_id``). The expected counts are computed here
straight from the dump by the authors' rule (win_function.compute_naive_win_rate: human 2,
undecided 1, bot 0; conversations with a human left out), not read from the import."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from parlai_acute.errors import UserError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "spot_the_bot"
ANNOTATIONS = FIXTURE / "annotated-dialogues-full-convai2.json"


def authors_counts() -> tuple[Counter, Counter]:
    """(wins of (winner, loser), ties of the unordered pair) by the authors' naive rule."""
    convos = {c["_id"]["$oid"]: c for c in json.loads((FIXTURE / "sampled-dialogues-full-convai2.json").read_text())}
    score = {True: 2, None: 1, False: 0}
    wins, ties = Counter(), Counter()
    for a in json.loads(ANNOTATIONS.read_text()):
        c = convos[a["convo_id"]]
        s0, s1 = c["system_type0"], c["system_type1"]
        if "human" in (s0, s1):
            continue
        h0, h1 = score[a["entity0_annotation"]["is_human"]], score[a["entity1_annotation"]["is_human"]]
        if h0 > h1:
            wins[s0, s1] += 1
        elif h1 > h0:
            wins[s1, s0] += 1
        else:
            ties[frozenset((s0, s1))] += 1
    return wins, ties


def test_the_import_and_analyze_give_back_the_authors_win_counts(tmp_path, capsys):
    from parlai_acute.scripts.main import main

    assert main(["acute", "import", "--spot-the-bot", str(ANNOTATIONS), "-o", str(tmp_path / "j.csv")]) == 0
    out = capsys.readouterr().out
    assert "24 annotated segments" in out and "4 annotations of conversations with a human speaker left out" in out
    assert main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "-o", str(tmp_path / "out"),
                 "--min-reason-chars", "0", "--max-per-worker", "none", "--no-report", "--bootstrap", "50"]) == 0
    pairs = pd.read_csv(tmp_path / "out" / "pairs.csv")
    wins, ties = authors_counts()
    assert len(pairs) == 3
    for row in pairs.itertuples():
        assert row.wins_a == wins[row.model_a, row.model_b] and row.wins_b == wins[row.model_b, row.model_a]
        assert row.ties == ties[frozenset((row.model_a, row.model_b))]
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    rules = {r["reason"]: r for r in run["exclusions"]}
    assert rules["never gave a reason"]["judgments"] == 0 and "off" in rules["never gave a reason"]["setting"]


def test_both_speakers_of_a_segment_are_the_two_sides_with_the_dumps_ids():
    from parlai_acute.acute.imports import spot_the_bot_judgments

    records = json.loads(ANNOTATIONS.read_text())
    table = spot_the_bot_judgments(ANNOTATIONS)
    first = table.iloc[0]
    source = next(r for r in records if r["_id"]["$oid"] == first["assignment_id"])
    assert first["dialogue_left"] == first["dialogue_right"] == source["convo_id"]
    assert first["pair_id"] == f"{source['convo_id']}@{source['entity0_annotation']['decision_turn'] // 2}"
    assert first["worker"] == source["user_name"] and first["duration"] == source["elapsed_time"] / 1000
    both_bots = [r for r in records if r["entity0_annotation"]["is_human"] is False
                 and r["entity1_annotation"]["is_human"] is False and r["_id"]["$oid"] in set(table["assignment_id"])]
    assert set(table.set_index("assignment_id").loc[[r["_id"]["$oid"] for r in both_bots], "outcome"]) == {"both_bad"}
    everyone = spot_the_bot_judgments(ANNOTATIONS, with_humans=True)
    assert len(everyone) == len(records) and "human" in set(everyone["model_left"]) | set(everyone["model_right"])


def test_json_lines_and_canonical_extended_json_read_the_same(tmp_path):
    from parlai_acute.acute.imports import spot_the_bot_judgments

    for name in ("annotated-dialogues-full-convai2.json", "sampled-dialogues-full-convai2.json"):
        records = json.loads((FIXTURE / name).read_text())
        for r in records:  # canonical mode writes 64-bit numbers wrapped
            for key in ("start_time", "end_time", "elapsed_time"):
                if key in r:
                    r[key] = {"$numberLong": str(r[key])}
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    assert spot_the_bot_judgments(tmp_path / "annotated-dialogues-full-convai2.json").equals(
        spot_the_bot_judgments(ANNOTATIONS))


@pytest.mark.parametrize("change, words", [
    (lambda anns, convos: anns[0].pop("user_name"), "missing field 'user_name'"),
    (lambda anns, convos: anns[0]["entity1_annotation"].update(is_human="maybe"), "must be true, false or null"),
    (lambda anns, convos: anns[0].update(convo_id="nowhere"), "convo_id 'nowhere' is not in"),
])
def test_a_wrong_record_is_one_line_naming_it(tmp_path, change, words):
    from parlai_acute.acute.imports import spot_the_bot_judgments

    for name in ("annotated-dialogues-full-convai2.json", "sampled-dialogues-full-convai2.json"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    anns = json.loads((tmp_path / "annotated-dialogues-full-convai2.json").read_text())
    convos = json.loads((tmp_path / "sampled-dialogues-full-convai2.json").read_text())
    change(anns, convos)
    (tmp_path / "annotated-dialogues-full-convai2.json").write_text(json.dumps(anns))
    with pytest.raises(UserError) as err:
        spot_the_bot_judgments(tmp_path / "annotated-dialogues-full-convai2.json")
    assert words in str(err.value) and "record 1" in str(err.value) and "\n" not in str(err.value)


def test_without_the_conversations_file_it_says_which_to_pass(tmp_path):
    from parlai_acute.acute.imports import spot_the_bot_judgments

    shutil.copy(ANNOTATIONS, tmp_path / "annotations.json")
    with pytest.raises(UserError) as err:
        spot_the_bot_judgments(tmp_path / "annotations.json")
    assert err.value.param == "dialogues"
    table = spot_the_bot_judgments(tmp_path / "annotations.json", FIXTURE / "sampled-dialogues-full-convai2.json")
    assert len(table) == 24


def test_status_takes_the_same_switches_as_analyze_for_released_data(tmp_path, capsys):
    """Arena-like and Spot The Bot data carry no reasons: status keeps what analyze keeps with the
    same two settings, and says why it sees nothing without them."""
    from parlai_acute import api
    from parlai_acute.acute.imports import spot_the_bot_judgments
    from parlai_acute.acute.judgments import write_judgments
    from parlai_acute.monitoring.status import status
    from parlai_acute.scripts.main import main

    table = spot_the_bot_judgments(ANNOTATIONS)
    settings = {"min_reason_chars": 0, "max_per_worker": "none"}
    result = status(table, "acute", settings=settings)
    analysed = api.analyze("acute", table, warn=False, bootstrap=0, **settings).questions[0].matchups
    by_name = {f"{m.model_b} vs {m.model_a}": m for m in analysed.itertuples()}
    wins = [r for r in result["rows"] if r["measure"] == "win rate"]
    assert len(wins) == 3 and result["settings"] == settings
    for row in wins:
        assert row["estimate"] == pytest.approx(by_name[row["comparison"]].winrate_b)
        assert row["judgments"] == by_name[row["comparison"]].n
    assert status(table, "acute")["rows"] == [] and "none of the 24 rows" in status(table, "acute")["note"]
    write_judgments(tmp_path / "j.csv", table)
    assert main(["status", "--table", str(tmp_path / "j.csv"), "--min-reason-chars", "0", "--max-per-worker",
                 "none", "-o", str(tmp_path / "s"), "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "settings: min_reason_chars=0, max_per_worker='none'" in out and "kvmemnn vs huggingface" in out
    assert json.loads((tmp_path / "s" / "run.json").read_text())["config"]["settings"] == settings
    with pytest.raises(UserError) as err:
        status(pd.DataFrame({"label": []}), "ssa", settings={"min_reason_chars": 0})
    assert err.value.param == "settings"
