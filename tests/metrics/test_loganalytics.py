"""ConvAI2-style log statistics on a log written here, checked by hand."""
from __future__ import annotations

import json

import pytest

from parlai_acute.logs import read_log, turn_role
from parlai_acute.metrics.loganalytics import LogsConfig, analyse_episodes
from parlai_acute.metrics.wordcounts import read_counts


def write_log(path, episodes):
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes), encoding="utf-8")
    return path


@pytest.fixture()
def chat_log(tmp_path):
    seed = {"source": "chitchat_dataset"}
    return write_log(tmp_path / "chat.jsonl", [
        {"dialog": [[{"id": "localHuman", "text": "Hello! What is your favourite food?", "seed": seed},
                     {"id": "Bot", "text": "I love pizza pizza. Do you?"}],
                    [{"id": "localHuman", "text": "yes i love pizza"},
                     {"id": "Bot", "text": "I love pizza pizza. Do you?"}]]},
        {"dialog": [[{"id": "localHuman", "text": "how was your day?"},
                     {"id": "Bot", "text": "Zyzzyva quokka!"}]]},
    ])


def test_roles_lengths_questions_repeats(chat_log):
    table = analyse_episodes({"chat": read_log(chat_log)}, LogsConfig(), counts={"i": 5000, "love": 500, "pizza": 50})
    rows = {r.role: r for r in table.itertuples(index=False)}
    assert set(rows) == {"human", "model"}
    human, bot = rows["human"], rows["model"]
    assert human.utterances == 2 and bot.utterances == 3  # the seed turn is nobody's
    assert human.words_per_utt == pytest.approx((4 + 4) / 2)
    assert bot.chars_per_utt == pytest.approx((27 + 27 + 15) / 3)
    assert human.question_word == pytest.approx(1 / 2) and human.question_mark == pytest.approx(1 / 2)
    assert bot.question_word == 0 and bot.question_mark == pytest.approx(2 / 3)
    assert bot.unique_share == pytest.approx(2 / 3)
    # "i love pizza pizza do you": "pizza" repeats within (1 of 6), in each of two turns
    assert bot.repeat_within_1 == pytest.approx(2 / (6 + 6 + 2))
    # the second identical turn repeats all 6 unigrams of the first; the other conversation starts afresh
    assert bot.repeat_self_1 == pytest.approx(6 / 14) and bot.repeat_self_3 == pytest.approx(4 / (4 + 4))
    # rare words: pizza (50), do, you, zyzzyva, quokka (0) are < 100; love (500) < 1000 too
    assert bot.freq1h == pytest.approx(10 / 14) and bot.freq1k == pytest.approx(12 / 14)
    assert human.freq1h == pytest.approx(6 / 8) and human.freq1k == pytest.approx(7 / 8)


def test_persona_copying_and_self_chat_ids(tmp_path):
    log = write_log(tmp_path / "persona.jsonl", [{
        "context": [{"id": "context", "text": "your persona: I work as a barista in a busy cafe.\nyour persona: I have a dog."},
                    {"id": "context", "text": "your persona: I am a firefighter."}],
        "dialog": [[{"id": "Smol_1", "text": "Hi! I work as a barista in a busy cafe."},
                    {"id": "Smol_2", "text": "Nice, what do you do for fun?"}],
                   [{"id": "Smol_1", "text": "I like hiking."}, {"id": "Smol_2", "text": "I am a firefighter, so busy!"}]]}])
    episode = read_log(log)[0]
    assert episode.personas() == {"Smol_1": ["I work as a barista in a busy cafe.", "I have a dog."],
                                  "Smol_2": ["I am a firefighter."]}
    table = analyse_episodes({"self": [episode]}, counts={})
    assert len(table) == 1 and table.loc[0, "speaker"] == "Smol" and table.loc[0, "utterances"] == 4
    assert table.loc[0, "persona_copy"] == pytest.approx(2 / 4)  # each speaker's own lines only
    no_persona = analyse_episodes({"x": read_log(write_log(tmp_path / "p.jsonl", [
        {"dialog": [[{"id": "a", "text": "hi"}, {"id": "b", "text": "yo"}]]}]))}, counts={})
    assert no_persona["persona_copy"].isna().all()


def test_turn_roles_and_custom_human_ids():
    assert turn_role({"id": "localHuman", "text": "x"}) == "human"
    assert turn_role({"id": "Bot_1", "text": "x"}) == "model"
    assert turn_role({"id": "localHuman", "text": "x", "seed": {"source": "s"}}) == "seed"
    assert turn_role({"id": "alice", "text": "x"}, human_ids=("alice",)) == "human"


def test_reference_counts_from_text_or_count_file(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_text("I love pizza\nPizza is great, I think\n", encoding="utf-8")
    assert read_counts(text)["pizza"] == 2 and read_counts(text)["i"] == 2
    counts = tmp_path / "counts.tsv"
    counts.write_text("pizza\t120\nlove\t7\n", encoding="utf-8")
    assert read_counts(counts) == {"pizza": 120, "love": 7}
    counts.write_text("pizza\t120\nlove\tmany\n", encoding="utf-8")
    from parlai_acute.errors import UserError

    with pytest.raises(UserError, match=r"counts.tsv:2: expected word<TAB>count"):
        read_counts(counts)
