"""Model wrappers on the embedded SmolLM2-135M (2-core CPU, 1 thread per model).

* openai_compat: ``batch_act`` of 4 conversations (sent concurrently to a llama.cpp
  server, xllamacpp, 4 slots, on loopback) against the same 4 requests posted
  concurrently with bare ``requests``: the wrapper's overhead, target ratio <= 1.2.
  Also the speed-up of ``batch_act`` over answering one after another: on this 2-core CPU
  with 1 llama.cpp thread decoding is compute-bound and the speed-up is about 1x (a bare
  client measures the same); it pays off with servers whose latency is not our CPU.
* hf_transformers: the GGUF loaded through transformers (dequantised), then token
  log-probabilities of 8 replies per context (``score_replies``, one forward pass) in
  tokens per second, and one sample-and-rank reply (4 samples x 24 tokens).
"""
import socket
import time
from concurrent.futures import ThreadPoolExecutor

import requests

CONTEXTS = ["Hi! What is your favourite food?", "What do you do for a living?",
            "Do you like travelling? Where did you go last?", "What music do you listen to?"]
REPLIES = ["I love pizza, especially with mushrooms.", "Sushi, I think. And you?",
           "Probably pasta with tomato sauce.", "I am not sure, maybe soup.",
           "Chocolate cake is my weakness!", "Fresh bread with butter.",
           "I eat almost anything, but curry is the best.", "Ice cream in summer, soup in winter."]
OVERHEAD_TARGET = 1.2


def _server(gguf: str, slots: int):
    import xllamacpp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    params = xllamacpp.CommonParams()
    params.model.path = gguf
    params.n_ctx = 1024 * slots
    params.n_parallel = slots
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.verbosity = -1
    return xllamacpp.Server(params)


def _openai_agents(url: str, n: int):
    from parlai.core.params import ParlaiParser

    from parlai_acute.agents.openai_compat import OpenAICompatAgent

    parser = ParlaiParser(False, False)
    OpenAICompatAgent.add_cmdline_args(parser)
    opt = parser.parse_args(["--openai-base-url", url, "--inference", "sample", "--max-new-tokens", "24",
                             "--openai-extra-body", '{"ignore_eos": true}'])
    parent = OpenAICompatAgent(opt)
    return [OpenAICompatAgent(opt, parent.share()) for _ in range(n)]


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.paths import default_gguf

    gguf = default_gguf()
    server = _server(gguf, slots=len(CONTEXTS))
    url = server.listening_address.rstrip("/") + "/v1"
    agents = _openai_agents(url, len(CONTEXTS))
    agents[0].observe({"text": "warm up", "episode_done": True})
    agents[0].act()
    start = time.perf_counter()
    for agent, text in zip(agents, CONTEXTS):
        agent.observe({"text": text, "episode_done": True})
        agent.act()
    one_by_one = time.perf_counter() - start
    observed = [a.observe({"text": t, "episode_done": True}) for a, t in zip(agents, CONTEXTS)]
    start = time.perf_counter()
    agents[0].batch_act(observed)
    concurrent = time.perf_counter() - start
    bodies = [agents[0].client.request_body(agents[0].messages(agents[0].context_of(o)), agents[0].config, 1, 0)
              for o in observed]
    start = time.perf_counter()
    with ThreadPoolExecutor(len(bodies)) as pool:
        list(pool.map(lambda b: requests.post(url + "/chat/completions", json=b, timeout=120), bodies))
    bare = time.perf_counter() - start
    del server
    yield {"name": "openai_compat_batch_act_seconds", "value": round(concurrent, 3), "unit": "s",
           "baseline": round(bare, 3), "ratio": round(concurrent / bare, 2), "target": OVERHEAD_TARGET,
           "conversations": len(CONTEXTS), "tokens_each": 24}
    yield {"name": "openai_compat_batch_act_speedup_over_sequential", "value": round(one_by_one / concurrent, 2),
           "unit": "x", "baseline": round(one_by_one, 3), "conversations": len(CONTEXTS)}

    from parlai_acute.agents.decoding import DecodingConfig
    from parlai_acute.agents.hf_transformers import HfModel

    start = time.perf_counter()
    model = HfModel(gguf, threads=1)
    yield {"name": "hf_transformers_gguf_load_seconds", "value": round(time.perf_counter() - start, 1), "unit": "s"}
    model.score_replies(CONTEXTS[:1], REPLIES[:1])  # warm up
    tokens = 0
    start = time.perf_counter()
    for context in CONTEXTS:
        tokens += sum(len(lp) for lp, _ in model.score_replies([context], REPLIES, with_end=True))
    took = time.perf_counter() - start
    yield {"name": "hf_transformers_scored_tokens_per_second", "value": round(tokens / took, 1), "unit": "tokens/s",
           "tokens": tokens, "replies": len(CONTEXTS) * len(REPLIES)}
    config = DecodingConfig(inference="sample_rank", num_samples=4, temperature=0.88, topp=1.0, max_new_tokens=24)
    start = time.perf_counter()
    cands = model.generate(CONTEXTS[:1], config)
    yield {"name": "hf_transformers_sample_rank_reply_seconds", "value": round(time.perf_counter() - start, 2),
           "unit": "s", "samples": 4, "max_new_tokens": 24, "generated_tokens": sum(c.num_tokens for c in cands)}
