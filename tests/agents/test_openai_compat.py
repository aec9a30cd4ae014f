"""OpenAICompatAgent against a real llama.cpp HTTP server (xllamacpp) serving SmolLM2 on loopback."""
from __future__ import annotations

import pytest
from parlai.core.params import ParlaiParser

from parlai_acute.agents.openai_compat import ChatClient, OpenAICompatAgent
from parlai_acute.errors import UserError


def make_agent(url, *args, shared=None):
    parser = ParlaiParser(False, False)
    OpenAICompatAgent.add_cmdline_args(parser)
    opt = parser.parse_args(["--openai-base-url", url, "--max-new-tokens", "16", "--openai-backoff", "0.05", *args])
    return OpenAICompatAgent(opt, shared)


def test_greedy_reply_and_history(llama_server):
    agent = make_agent(llama_server, "--inference", "greedy", "--system-prompt", "You are a friendly person.")
    agent.observe({"text": "Hi! What is your favourite food?", "episode_done": False})
    act = agent.act()
    assert act["text"].strip() and len(act["candidates"]) == 1
    assert act["decoding"]["endpoint"] == llama_server + "/chat/completions"
    assert agent.turns == [("user", "Hi! What is your favourite food?"), ("assistant", act["text"])]
    assert agent.observation["context_system"] == "You are a friendly person."
    agent.observe({"text": "Why?", "episode_done": True})
    agent.act()
    assert agent.turns == []


def test_sample_and_rank_uses_server_logprobs(llama_server, flaky_proxy):
    proxy = flaky_proxy()
    agent = make_agent(proxy.url + "/v1", "--inference", "sample_rank", "--num-samples", "3",
                       "--temperature", "0.88", "--topp", "1", "--topk", "40",
                       "--openai-extra-body", '{"min_p": 0, "repeat_penalty": 1.0}')
    agent.observe({"text": "Tell me something about cats.", "episode_done": False})
    act = agent.act()
    body = proxy.bodies[0]
    assert body["n"] == 3 and body["logprobs"] is True and body["temperature"] == 0.88
    assert body["top_p"] == 1 and body["top_k"] == 40 and body["max_tokens"] == 16
    assert body["min_p"] == 0 and body["repeat_penalty"] == 1.0
    cands = act["candidates"]
    assert len(cands) == 3 and all(c["num_tokens"] > 0 and c["score"] < 0 for c in cands)
    chosen = next(c for c in cands if c["chosen"])
    assert chosen["text"] == act["text"]
    assert chosen["score"] == max(c["score"] for c in cands if not c["filtered"])


def test_server_ignoring_n_is_asked_again(flaky_proxy):
    proxy = flaky_proxy(max_choices=1)
    agent = make_agent(proxy.url + "/v1", "--inference", "sample_rank", "--num-samples", "3", "--temperature", "1.0")
    agent.observe({"text": "Tell me something about dogs.", "episode_done": False})
    act = agent.act()
    assert len(act["candidates"]) == 3
    assert [b.get("n", 1) for b in proxy.bodies] == [3, 2, 1]
    assert len({b["seed"] for b in proxy.bodies}) == 3  # each request samples afresh


def test_missing_logprobs_is_a_clear_error(flaky_proxy):
    proxy = flaky_proxy(strip_logprobs=True)
    agent = make_agent(proxy.url + "/v1", "--inference", "sample_rank", "--num-samples", "2")
    agent.observe({"text": "Hello there.", "episode_done": False})
    with pytest.raises(UserError, match="no logprobs.*inference=sample"):
        agent.act()
    # plain sampling does not need them
    sampler = make_agent(proxy.url + "/v1", "--inference", "sample")
    sampler.observe({"text": "Hello there.", "episode_done": False})
    assert sampler.act()["text"]


def test_retries_transient_failures_not_client_errors(flaky_proxy):
    proxy = flaky_proxy(fail=2, status=503)
    agent = make_agent(proxy.url + "/v1", "--inference", "greedy", "--openai-retries", "3")
    agent.observe({"text": "Hello!", "episode_done": False})
    assert agent.act()["text"]
    assert len(proxy.seen) == 3  # two 503s, then the real answer

    limited = flaky_proxy(fail=5, status=429)
    agent = make_agent(limited.url + "/v1", "--inference", "greedy", "--openai-retries", "1")
    agent.observe({"text": "Hello!", "episode_done": False})
    with pytest.raises(UserError, match=r"kept failing \(HTTP 429.*after 2 attempts"):
        agent.act()

    bad = flaky_proxy(fail=1, status=400)
    agent = make_agent(bad.url + "/v1", "--inference", "greedy", "--openai-retries", "3")
    agent.observe({"text": "Hello!", "episode_done": False})
    with pytest.raises(UserError, match=r"HTTP 400"):
        agent.act()
    assert len(bad.seen) == 1  # a 4xx is never retried


def test_timeout(flaky_proxy):
    slow = flaky_proxy(delay=3.0)
    agent = make_agent(slow.url + "/v1", "--inference", "greedy", "--openai-timeout", "0.5", "--openai-retries", "1")
    agent.observe({"text": "Hello!", "episode_done": False})
    with pytest.raises(UserError, match=r"did not answer within 0.5s \(2 attempts\).*openai_timeout"):
        agent.act()
    assert len(slow.seen) == 2


def test_api_key_from_environment(llama_server_with_key, flaky_proxy, monkeypatch):
    proxy = flaky_proxy(upstream=llama_server_with_key)
    monkeypatch.setenv("ACUTE_TEST_KEY", "test-key-123")
    agent = make_agent(proxy.url + "/v1", "--inference", "greedy", "--openai-api-key-env", "ACUTE_TEST_KEY")
    agent.observe({"text": "Hello!", "episode_done": False})
    assert agent.act()["text"]
    assert proxy.seen[-1]["Authorization"] == "Bearer test-key-123"

    monkeypatch.setenv("ACUTE_TEST_KEY", "wrong-key")
    agent = make_agent(llama_server_with_key, "--inference", "greedy", "--openai-api-key-env", "ACUTE_TEST_KEY")
    agent.observe({"text": "Hello!", "episode_done": False})
    with pytest.raises(UserError, match=r"HTTP 401.*check the key in ACUTE_TEST_KEY"):
        agent.act()

    keyless = make_agent(llama_server_with_key, "--inference", "greedy")
    keyless.observe({"text": "Hello!", "episode_done": False})
    with pytest.raises(UserError, match=r"HTTP 401.*openai_api_key_env"):
        keyless.act()

    monkeypatch.delenv("ACUTE_TEST_KEY")
    with pytest.raises(UserError, match=r"ACUTE_TEST_KEY .* is not set"):
        make_agent(llama_server_with_key, "--openai-api-key-env", "ACUTE_TEST_KEY")


def test_unreachable_and_wrong_urls(closed_port_url, llama_server):
    agent = make_agent(closed_port_url, "--inference", "greedy", "--openai-retries", "1")
    agent.observe({"text": "Hello!", "episode_done": False})
    with pytest.raises(UserError, match=r"cannot connect to http://127\.0\.0\.1:\d+/v1/chat/completions.*openai_base_url"):
        agent.act()
    wrong = make_agent(llama_server.replace("/v1", "/v2"), "--inference", "greedy")
    wrong.observe({"text": "Hello!", "episode_done": False})
    with pytest.raises(UserError, match=r"HTTP 404.*ending in /v1"):
        wrong.act()
    with pytest.raises(UserError, match="^openai_base_url is required"):
        ChatClient(None)
    with pytest.raises(UserError, match="not an http"):
        ChatClient("127.0.0.1:8080/v1")
    with pytest.raises(UserError, match="^openai_extra_body is not valid JSON"):
        make_agent(llama_server, "--openai-extra-body", "{min_p: 0}")
    with pytest.raises(UserError, match="^openai_extra_body must be a JSON object"):
        make_agent(llama_server, "--openai-extra-body", "[1]")


def test_batch_act_sends_requests_concurrently(flaky_proxy):
    proxy = flaky_proxy(delay=0.5)
    parent = make_agent(proxy.url + "/v1", "--inference", "greedy")
    copies = [make_agent(proxy.url + "/v1", "--inference", "greedy", shared=parent.share()) for _ in range(3)]
    assert all(c.client is parent.client for c in copies)
    texts = ["Hello!", "What is your job?", "Do you like music?"]
    observed = [c.observe({"text": t, "episode_done": False}) for c, t in zip(copies, texts)]
    replies = copies[0].batch_act(observed)
    assert len(replies) == 3 and all(r["text"] for r in replies)
    assert proxy.max_inflight == 3  # all three were in flight at once
    asked = sorted(b["messages"][-1]["content"] for b in proxy.bodies)
    assert asked == sorted(texts)
    for copy, text, reply in zip(copies, texts, replies):
        copy.self_observe(reply)
        assert copy.turns == [("user", text), ("assistant", reply["text"])]


def test_parlai_batch_world_keeps_one_history_per_conversation(flaky_proxy, tmp_path):
    """ParlAI's own BatchWorld (teacher episodes, --batchsize 2) drives the agent copies."""
    from parlai.core.agents import create_agent
    from parlai.core.worlds import create_task

    proxy = flaky_proxy()
    data = tmp_path / "dialogs.txt"
    data.write_text("text:Hello, I am Ann.\tlabels:Hi Ann!\n"
                    "text:Do you like tea?\tlabels:Yes.\tepisode_done:True\n"
                    "text:Good morning from Bob.\tlabels:Morning Bob!\n"
                    "text:Is it raining?\tlabels:No.\tepisode_done:True\n")
    parser = ParlaiParser(True, True)
    parser.set_params(model="parlai_acute.agents.openai_compat:OpenAICompatAgent")
    opt = parser.parse_args(["-t", "fromfile:parlaiformat", "--fromfile-datapath", str(data), "-dt", "valid",
                             "--batchsize", "2", "--datapath", str(tmp_path), "--openai-base-url", proxy.url + "/v1",
                             "--inference", "greedy", "--max-new-tokens", "8"])
    world = create_task(opt, create_agent(opt))
    world.parley()
    copies = [w.get_agents()[1] for w in world.worlds]
    first = {c.turns[0][1]: list(c.turns) for c in copies}
    assert set(first) == {"Hello, I am Ann.", "Good morning from Bob."}
    for c, w in zip(copies, world.worlds):
        assert c.turns[1] == ("assistant", w.get_acts()[1]["text"])
    world.parley()
    second = {tuple(m["content"] for m in b["messages"][1:]) for b in proxy.bodies[2:]}
    assert second == {(*(t for _, t in first["Hello, I am Ann."]), "Do you like tea?"),
                      (*(t for _, t in first["Good morning from Bob."]), "Is it raining?")}
    assert all(c.turns == [] for c in copies)  # replied to episode_done: history cleared
