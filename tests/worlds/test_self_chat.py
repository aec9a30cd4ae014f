"""Self-chat through ParlAI's own script and through our runner, with real ParlAI agents."""
from __future__ import annotations

import json

import pytest
from parlai.scripts.self_chat import SelfChat, setup_args
from parlai.utils.conversations import Conversations

from parlai_acute.logs import read_log
from parlai_acute.tasks import sources
from parlai_acute.worlds.runner import make_world, run_self_chats

GENERIC = "parlai_acute.agents.generic_bot:GenericBotAgent"


def parlai_self_chat(quiet, **kwargs):
    with quiet():
        return SelfChat.main(**kwargs)


def test_parlai_self_chat_script_writes_conversations_log(tmp_path, datapath, quiet):
    out = tmp_path / "generic.jsonl"
    parlai_self_chat(quiet, model=GENERIC, task="parlai_acute.tasks.chitchat", num_self_chats=3,
                     selfchat_max_turns=4, outfile=str(out), datapath=datapath, seed=5)
    convs = list(Conversations(str(out)))
    assert len(convs) == 3 and all(len(c) == 8 for c in convs)
    meta = Conversations(str(out)).metadata
    assert meta.self_chat and meta.speakers == ["GenericBot_1", "GenericBot_2"]
    assert meta.extra_data["context_seed"] == 5 and meta.extra_data["task"] == "parlai_acute.tasks.chitchat"
    episodes = read_log(out)
    assert [t["id"] for t in episodes[0].turns] == ["GenericBot_1", "GenericBot_2"] * 4
    episodes[0].check_alternating()
    # the opening is the first turn of a real human conversation, marked as a seed
    first = episodes[0].turns[0]
    conv = next(c for c in sources.chitchat("train") if c.id == first["seed"]["conversation_id"])
    assert first["text"] == conv.turns[0]
    # GenericBot replied to it; every later turn is the bot's own
    assert episodes[0].turns[1]["text"] in ("ok", "I don't know") and "seed" not in episodes[0].turns[1]
    assert json.loads(out.read_text().splitlines()[0])["metadata_path"] == str(out.with_suffix(".metadata"))


def test_seeds_are_reproducible_and_follow_the_seed(tmp_path, datapath, quiet):
    def openings(seed, name):
        out = tmp_path / name
        parlai_self_chat(quiet, model=GENERIC, task="parlai_acute.tasks.chitchat", num_self_chats=4,
                         selfchat_max_turns=1, outfile=str(out), datapath=datapath, seed=seed)
        return [e.turns[0]["text"] for e in read_log(out)]

    assert openings(1, "a.jsonl") == openings(1, "b.jsonl")
    assert openings(1, "a.jsonl") != openings(2, "c.jsonl")
    assert len(set(openings(1, "a.jsonl"))) == 4


def test_more_seed_turns(tmp_path, datapath, quiet):
    out = tmp_path / "two.jsonl"
    parlai_self_chat(quiet, model=GENERIC, task="parlai_acute.tasks.chitchat", num_self_chats=2,
                     selfchat_max_turns=3, outfile=str(out), datapath=datapath, chitchat_seed_turns=2)
    for episode in read_log(out):
        conv = next(c for c in sources.chitchat("train") if c.id == episode.turns[0]["seed"]["conversation_id"])
        assert [t["text"] for t in episode.turns[:2]] == list(conv.turns[:2])
        assert "seed" in episode.turns[1] and "seed" not in episode.turns[2]


def test_partner_model_file_as_in_parlai(tmp_path, datapath, quiet):
    partner = tmp_path / "partner" / "model"
    partner.parent.mkdir()
    (tmp_path / "partner" / "model.opt").write_text(json.dumps({"model": "repeat_query"}))
    out = tmp_path / "pair.jsonl"
    parlai_self_chat(quiet, model=GENERIC, task="parlai_acute.tasks.topics", num_self_chats=2,
                     selfchat_max_turns=3, outfile=str(out), datapath=datapath, partner_model_file=str(partner))
    episodes = read_log(out)
    assert episodes[0].speakers == ["GenericBot_1", "RepeatQueryAgent_2"]
    # repeat_query repeats its partner, so its turns copy GenericBot's
    turns = episodes[0].turns
    assert all(turns[k + 1]["text"] == turns[k]["text"] for k in range(0, len(turns), 2))
    # topics: both speakers got the same topic as context
    assert [c["text"] for c in episodes[0].context][0] == [c["text"] for c in episodes[0].context][1]
    assert episodes[0].context[0]["text"].startswith("Let's talk about ")


def test_persona_reaches_both_agents_first_observation(datapath, recorder):
    opt = setup_args().parse_args(["-t", "parlai_acute.tasks.persona", "--datapath", datapath,
                                   "-m", "repeat_query", "--selfchat-max-turns", "3"])
    a, b = recorder(opt, name="a"), recorder(opt, name="b")
    world = make_world(opt, [a, b])
    for _ in range(3):
        world.parley()
    persona_a, persona_b = world.seed.info["personas"]
    assert a.seen[0]["id"] == b.seen[0]["id"] == "context"
    assert a.seen[0]["text"] == "\n".join(f"your persona: {line}" for line in persona_a)
    assert b.seen[0]["text"] == "\n".join(f"your persona: {line}" for line in persona_b)
    assert persona_a != persona_b
    # then the conversation proper: b observes a's reply, a observes b's
    assert b.seen[1]["text"] == "a turn 1" and a.seen[1]["text"] == "b turn 2"


def test_topic_reaches_both_agents(datapath, recorder):
    opt = setup_args().parse_args(["-t", "parlai_acute.tasks.topics", "--datapath", datapath, "-m", "repeat_query"])
    a, b = recorder(opt, name="a"), recorder(opt, name="b")
    world = make_world(opt, [a, b])
    world.parley()
    topic = world.seed.info["topic"]
    assert a.seen[0]["text"] == b.seen[0]["text"] == f"Let's talk about {topic}."


def run_ours(tmp_path, datapath, name, *args):
    opt = setup_args().parse_args(["-t", "parlai_acute.tasks.chitchat", "--datapath", datapath,
                                   "--outfile", str(tmp_path / name), *args])
    return read_log(run_self_chats(opt, progress=False))


def test_batched_self_chat_matches_unbatched(tmp_path, datapath):
    common = ["-m", "repeat_query", "--num-self-chats", "5", "--selfchat-max-turns", "3", "--seed", "9"]
    single = run_ours(tmp_path, datapath, "b1.jsonl", *common)
    batched = run_ours(tmp_path, datapath, "b3.jsonl", *common, "--batchsize", "3")
    assert len(batched) == 5
    as_text = [[t["text"] for t in e.turns] for e in single]
    assert [[t["text"] for t in e.turns] for e in batched] == as_text
    assert [[t["id"] for t in e.turns] for e in batched] == [[t["id"] for t in e.turns] for e in single]
    assert batched[0].speakers == ["RepeatQueryAgent_1", "RepeatQueryAgent_2"]
    # repeat_query repeats the seed: every conversation stays on its own opening
    assert all(len(set(texts)) == 1 for texts in as_text) and len({t[0] for t in as_text}) == 5


def test_batched_self_chat_uses_batch_act_once_per_turn(tmp_path, datapath, recorder, monkeypatch):
    from parlai.agents.repeat_query.repeat_query import RepeatQueryAgent

    sizes = []
    original = RepeatQueryAgent.batch_act

    def counting(self, observations):
        sizes.append(len(observations))
        return original(self, observations)

    monkeypatch.setattr(RepeatQueryAgent, "batch_act", counting)
    run_ours(tmp_path, datapath, "b4.jsonl", "-m", "repeat_query", "--num-self-chats", "4", "--selfchat-max-turns",
             "3", "--batchsize", "4")
    # per parley: agent 0 seeded on the first, so 1 + 2 + 2 batch_act calls, each over 4 conversations
    assert sizes == [4] * 5


def test_partner_opt_in_our_runner(tmp_path, datapath):
    opt = setup_args().parse_args(["-t", "parlai_acute.tasks.persona", "--datapath", datapath, "-m", GENERIC,
                                   "--num-self-chats", "2", "--selfchat-max-turns", "2",
                                   "--outfile", str(tmp_path / "p.jsonl")])
    partner = setup_args().parse_args(["-t", "parlai_acute.tasks.persona", "--datapath", datapath,
                                       "-m", "repeat_query"])
    episodes = read_log(run_self_chats(opt, partner, progress=False))
    assert episodes[0].speakers == ["GenericBot_1", "RepeatQueryAgent_2"]
    meta = Conversations(str(tmp_path / "p.jsonl")).metadata
    assert meta.extra_data["partner_opt"] == {"model": "repeat_query"}


@pytest.mark.parametrize("task", ["parlai_acute.tasks.persona", "parlai_acute.tasks.topics"])
def test_parlai_agents_unchanged_in_every_world(task, tmp_path, datapath, quiet):
    for model in ("repeat_label", "repeat_query", GENERIC):
        out = tmp_path / f"{model.split(':')[-1]}.jsonl"
        parlai_self_chat(quiet, model=model, task=task, num_self_chats=1, selfchat_max_turns=2,
                         outfile=str(out), datapath=datapath)
        (episode,) = read_log(out)
        assert len(episode.turns) == 2 and len(episode.context) == 2


def test_torch_generator_agent_keeps_each_batched_conversation_apart(datapath):
    """A real ParlAI TorchGeneratorAgent (test_agents/unigram, untrained) in BatchSelfChatWorld:
    every copy's history holds its own world's persona and its own partner's words."""
    opt = setup_args().parse_args(["-t", "parlai_acute.tasks.persona", "--datapath", datapath,
                                   "-m", "test_agents/unigram", "--batchsize", "2", "--selfchat-max-turns", "3"])
    from parlai_acute.worlds.runner import make_agents

    world = make_world(opt, make_agents(opt))
    for _ in range(2):
        world.parley()
    histories = []
    for w in world.worlds:
        for i in (0, 1):
            history = w.agents[i].history.get_history_str()
            assert history.startswith(w.seed.contexts[i])
            histories.append(history)
        # the second speaker heard the first speaker's reply in this world
        assert w.acts[0]["text"] in w.agents[1].history.get_history_str()
    assert histories[0] != histories[2] and histories[1] != histories[3]
