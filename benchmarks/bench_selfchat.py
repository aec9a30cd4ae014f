"""Self-chat with LlamaCppAgent against raw xllamacpp on the same requests, measured in one run.

* ``selfchat_throughput``: generated tokens/s of a real self-chat (ParlAI worlds, our agent,
  decoding, logging; default threads: the machine's cores) over raw ``Server.handle_chat_completions``
  replaying exactly the requests that self-chat sent (same prompts, samplers, seeds, so the same
  tokens) at the raw engine's best thread count (1 .. cores, each measured).
* ``selfchat_batching``: our gain from ``--batchsize 8`` over 1 beside the raw engine's gain
  from 8 concurrent sequences over 1 (the batch-8 run's requests, replayed in groups of 8
  concurrently and then one at a time).
* ``selfchat_peak_rss_mb``: peak RSS of a default ``parlai self_chat`` subprocess, that process alone.

Settings are those of ``parlai-acute self-chat``'s defaults except fewer/shorter turns.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

AGENT = "parlai_acute.agents.llama_cpp:LlamaCppAgent"
TASK = "parlai_acute.tasks.persona"
CHATS, TURNS, MAX_NEW_TOKENS = 8, 3, 24
THROUGHPUT_TARGET, BATCHING_TARGET, RSS_TARGET_MB = 0.90, 0.90, 600


def _opt(tmp, batchsize, chats):
    from parlai.scripts.self_chat import setup_args

    return setup_args().parse_args([
        "-m", AGENT, "-t", TASK, "--num-self-chats", str(chats), "--selfchat-max-turns", str(TURNS),
        "--batchsize", str(batchsize), "--outfile", os.path.join(tmp, f"b{batchsize}.jsonl"), "--datapath",
        os.path.join(tmp, "data"), "--max-new-tokens", str(MAX_NEW_TOKENS), "--display-examples", "false"])


def _our_selfchat(tmp, batchsize, chats):
    """(tokens, seconds, request groups) of one self-chat run with the model already loaded."""
    from parlai_acute.agents import decoding, llama_cpp
    from parlai_acute.logs import read_log
    from parlai_acute.worlds.runner import run_self_chats

    opt = _opt(tmp, batchsize, chats)
    # load the model before the clock starts; the agents below find it in the engine cache
    engine = llama_cpp.get_engine(*llama_cpp.engine_settings(opt, decoding.DecodingConfig.from_opt(opt)))
    groups = []
    original = llama_cpp.LlamaEngine.chat_many

    clock = {}

    def recording(self, requests):
        # the clock starts at the first generation: world and agent setup are not throughput
        clock.setdefault("start", (time.perf_counter(), time.process_time()))
        groups.append([dict(r) for r in requests])
        return original(self, requests)

    llama_cpp.LlamaEngine.chat_many = recording
    try:
        path = run_self_chats(opt, progress=False)
        took, cpu = time.perf_counter() - clock["start"][0], time.process_time() - clock["start"][1]
    finally:
        llama_cpp.LlamaEngine.chat_many = original
    tokens = sum(c["num_tokens"] for e in read_log(path) for t in e.turns for c in t.get("candidates", []))
    return tokens, (took, cpu), groups, engine


def _raw(server, groups, concurrent: bool):
    """(tokens, seconds) of plain xllamacpp calls: each group at once (threads) or one by one."""
    requests = [r for g in groups for r in g]
    start, cpu = time.perf_counter(), time.process_time()
    if concurrent:
        with ThreadPoolExecutor(max_workers=max(len(g) for g in groups)) as pool:
            responses = [resp for g in groups for resp in pool.map(server.handle_chat_completions, g)]
    else:
        responses = [server.handle_chat_completions(r) for r in requests]
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    return sum(r["usage"]["completion_tokens"] for r in responses), (took, cpu)


# Runs ``python -m MODULE ARGS`` in this child and writes its own VmHWM (KiB) to a file at exit.
_RUN_AND_REPORT = """
import runpy, sys
report, module = sys.argv[1], sys.argv[2]
sys.argv = [module] + sys.argv[3:]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
finally:
    with open("/proc/self/status") as fh:
        hwm = next(line for line in fh if line.startswith("VmHWM:")).split()[1]
    with open(report, "w") as fh:
        fh.write(hwm)
"""


def child_peak_rss_mb(module: str, args: list[str], tmp: str) -> float:
    """Peak RSS of ``python -m module args`` alone, as that process reports it (``VmHWM``).

    Neither ``RUSAGE_CHILDREN`` (the largest of *all* children this process ever waited for:
    under ``make bench`` another benchmark's bigger child) nor ``wait4``'s ``ru_maxrss`` of
    the pid (Linux carries the parent's size over from before ``exec`` into it).
    """
    report = os.path.join(tmp, f"vmhwm-{os.getpid()}-{time.monotonic_ns()}")
    subprocess.run([sys.executable, "-c", _RUN_AND_REPORT, report, module, *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(report, encoding="ascii") as fh:
        return int(fh.read()) / 1024


def _peak_rss_mb(tmp) -> float:
    return child_peak_rss_mb("parlai", ["self_chat", "-m", AGENT, "-t", TASK, "--num-self-chats", "2",
                                        "--selfchat-max-turns", "3", "--outfile", os.path.join(tmp, "rss.jsonl"),
                                        "--datapath", os.path.join(tmp, "data"), "--display-examples", "false"], tmp)


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.agents import llama_cpp
    from parlai_acute.agents.llama_cpp import cores

    with tempfile.TemporaryDirectory() as tmp:
        rss = _peak_rss_mb(tmp)
        yield {"name": "selfchat_peak_rss_mb", "value": round(rss, 1), "unit": "MB", "target": RSS_TARGET_MB,
               "ratio": round(rss / RSS_TARGET_MB, 2), "command": "parlai self_chat -m " + AGENT + " -t " + TASK}

        tok1, (sec1, cpu1), groups1, engine1 = _our_selfchat(tmp, 1, CHATS)
        # raw llama.cpp at its best thread count (1 .. the cores), not at ours: the baseline is the engine's best
        raw_by_threads = {}
        for threads in range(1, cores() + 1):
            engine = engine1 if threads == engine1.threads else llama_cpp.LlamaEngine(
                engine1.model_path, engine1.context_length, engine1.slots, threads)
            raw_by_threads[threads] = _raw(engine.server, groups1, concurrent=False)
            if engine is not engine1:
                engine.close()
                del engine
        best = max(raw_by_threads, key=lambda t: raw_by_threads[t][0] / raw_by_threads[t][1][0])
        raw_tok1, (raw_sec1, raw_cpu1) = raw_by_threads[best]
        ours1, raw1 = tok1 / sec1, raw_tok1 / raw_sec1
        yield {"name": "selfchat_throughput", "value": round(ours1, 1), "unit": "tokens/s",
               "baseline": round(raw1, 1), "ratio": round(ours1 / raw1, 3), "target": THROUGHPUT_TARGET,
               "threads": engine1.threads, "baseline_threads": best,
               "raw_tokens_per_s_by_threads": {t: round(tok / sec, 1) for t, (tok, (sec, _)) in raw_by_threads.items()},
               # CPU seconds of this process (all threads): steadier than wall time on a shared machine
               "cpu_ratio": round((tok1 / cpu1) / (raw_tok1 / raw_cpu1), 3),
               "tokens": tok1, "raw_tokens": raw_tok1, "conversations": CHATS, "max_new_tokens": MAX_NEW_TOKENS,
               "load_average": os.getloadavg()[0]}
        del engine1

        tok8, (sec8, cpu8), groups8, engine8 = _our_selfchat(tmp, 8, CHATS)
        raw_tok8, (raw_sec8, raw_cpu8) = _raw(engine8.server, groups8, concurrent=True)
        raw_tok8_seq, (raw_sec8_seq, raw_cpu8_seq) = _raw(engine8.server, groups8, concurrent=False)
        our_gain = (tok8 / sec8) / ours1
        raw_gain = (raw_tok8 / raw_sec8) / (raw_tok8_seq / raw_sec8_seq)
        our_cpu_gain = (tok8 / cpu8) / (tok1 / cpu1)
        raw_cpu_gain = (raw_tok8 / raw_cpu8) / (raw_tok8_seq / raw_cpu8_seq)
        yield {"name": "selfchat_batching", "value": round(our_gain, 2), "unit": "x (batch 8 / batch 1 tokens/s)",
               "baseline": round(raw_gain, 2), "ratio": round(our_gain / raw_gain, 3), "target": BATCHING_TARGET,
               "ours_tokens_per_s": {"b1": round(ours1, 1), "b8": round(tok8 / sec8, 1)},
               "raw_tokens_per_s": {"1": round(raw_tok8_seq / raw_sec8_seq, 1), "8": round(raw_tok8 / raw_sec8, 1)},
               "cpu_gain": {"ours": round(our_cpu_gain, 2), "raw": round(raw_cpu_gain, 2),
                            "ratio": round(our_cpu_gain / raw_cpu_gain, 3)},
               "load_average": os.getloadavg()[0]}
