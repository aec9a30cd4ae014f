"""Judge throughput against the engine underneath it, on the same requests.

``judge_throughput_ratio``: a judge run (the Runner: prompts rendered, cache looked up,
calls made, answers parsed and recorded) on the 5 gold ACUTE items x 2 orders with the embedded SmolLM2
(greedy, up to 64 tokens, 4 calls in flight), against the engine alone given the very requests
the judge sent (recorded on their way in, replayed with the same 4 in flight): ``value`` =
judge tokens/s / engine tokens/s for the same prompt and completion tokens (target >= 0.8).
Rows for the embedded engine and for llama.cpp's OpenAI-compatible server
(``parlai-acute serve``'s, 4 slots) with the OpenAI-compatible judge. Each side is timed
twice alternately, best kept (the machine is shared); ``cpu_ratio`` compares CPU seconds of
this process (the engine runs in it, the endpoint's server too), which a busy machine moves less.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor

from benchmarks.bench_judge import gold_items  # the same five gold pairs as judge_items_per_second

TARGET = 0.8
CONCURRENCY = 4
ROUNDS = 2


def _record(obj, name):
    """Wrap ``obj.name`` so that every request it is given is kept (the judge's exact calls)."""
    original, seen = getattr(obj, name), []

    def recording(body):
        seen.append(body)
        return original(body)

    setattr(obj, name, recording)
    return original, seen


def _measure(judge, protocol, items, call, recorded_name, holder):
    from parlai_acute.judges.runner import JudgeSettings, Runner

    settings = JudgeSettings(answer_from="text", retries=0)
    original, seen = _record(holder, recorded_name)
    warm = Runner(judge, settings)
    warm.run(protocol, items)  # loads, fills the prompt cache of every slot
    requests = list(seen)
    setattr(holder, recorded_name, original)
    judge_best = engine_best = judge_cpu = engine_cpu = float("inf")
    tokens = 0
    for _ in range(ROUNDS):
        runner = Runner(judge, settings)
        start, cpu = time.perf_counter(), time.process_time()
        runner.run(protocol, items)
        judge_best, judge_cpu = min(judge_best, time.perf_counter() - start), min(judge_cpu, time.process_time() - cpu)
        tokens = runner.prompt_tokens + runner.completion_tokens
        start, cpu = time.perf_counter(), time.process_time()
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            answers = list(pool.map(call, requests))
        engine_best, engine_cpu = min(engine_best, time.perf_counter() - start), min(engine_cpu, time.process_time() - cpu)
    engine_tokens = sum(a["usage"]["prompt_tokens"] + a["usage"]["completion_tokens"] for a in answers)
    return judge_best, engine_best, tokens, engine_tokens, len(requests), judge_cpu, engine_cpu


def _row(kind, judge_s, engine_s, tokens, engine_tokens, calls, judge_cpu, engine_cpu):
    ratio = (tokens / judge_s) / (engine_tokens / engine_s)
    return {"name": "judge_throughput_ratio", "kind": kind, "value": round(ratio, 3), "target": TARGET,
            "ratio": round(ratio / TARGET, 3), "judge_tokens_per_s": round(tokens / judge_s, 1),
            "engine_tokens_per_s": round(engine_tokens / engine_s, 1), "judge_seconds": round(judge_s, 2),
            "engine_seconds": round(engine_s, 2), "calls": calls, "tokens": tokens, "engine_tokens": engine_tokens,
            "in_flight": CONCURRENCY, "cpu_ratio": round((tokens / judge_cpu) / (engine_tokens / engine_cpu), 3),
            "load_average": round(os.getloadavg()[0], 1)}


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.judges.model import JudgeModel

    protocol, items = gold_items()
    judge = JudgeModel(None, concurrency=CONCURRENCY)
    engine = judge.agent.engine
    yield _row("embedded", *_measure(judge, protocol, items, engine.chat, "chat", engine))
    del judge, engine

    from parlai_acute.agents.llama_engine import http_server
    from parlai_acute.paths import default_gguf

    server, url = http_server(default_gguf(), slots=CONCURRENCY, context_length=2048, threads=0)
    judge = JudgeModel(f"-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url {url}",
                       concurrency=CONCURRENCY)
    client = judge.agent.client
    yield _row("endpoint", *_measure(judge, protocol, items, client.post, "post", client))
    del server
