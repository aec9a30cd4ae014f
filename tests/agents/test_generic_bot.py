"""GenericBot's rule (Meena sec. 2.1): "I don't know" to questions, "ok" to statements."""
import pytest
from parlai.core.agents import create_agent_from_shared
from parlai.core.params import ParlaiParser

from parlai_acute.agents.generic_bot import GenericBotAgent, generic_reply, is_question


@pytest.mark.parametrize("text", [
    "How are you?", "what's up ?", "Do you like dogs", "I went out. Did you see the game?",
    'He asked "why?"', "Is it raining (again?)", "where do you live", "So... you like it?  ",
])
def test_questions(text):
    assert is_question(text) and generic_reply(text) == "I don't know"


@pytest.mark.parametrize("text", [
    "I like dogs.", "Is that so? Well, I like cats.", "Hello!", "", "   ", "What a day!",
    "How wonderful that is.", "I wonder how it works.", "Who knows. I like it anyway!",
])
def test_statements(text):
    assert not is_question(text) and generic_reply(text) == "ok"


def test_agent_in_parlai_observe_act_and_batch_act():
    opt = ParlaiParser(True, True).parse_args(["-m", "parlai_acute.agents.generic_bot:GenericBotAgent"])
    agent = GenericBotAgent(opt)
    agent.observe({"text": "Do you like jazz?", "episode_done": False})
    reply = agent.act()
    assert reply["text"] == "I don't know" and reply["id"] == "GenericBot" and reply["episode_done"] is False
    copy = create_agent_from_shared(agent.share())
    assert [r["text"] for r in copy.batch_act([{"text": "I like jazz."}, {"text": "Why?"}, {}, None])] == \
        ["ok", "I don't know", "ok", "ok"]


def test_agent_with_no_observation_says_ok():
    agent = GenericBotAgent(ParlaiParser(True, True).parse_args([]))
    agent.observe(None)
    assert agent.act()["text"] == "ok"
