"""``parlai-acute serve``: the embedded model (or any GGUF) as an OpenAI-compatible endpoint.

llama.cpp's own HTTP server (the xllamacpp wheel, no other install): /v1/chat/completions with
log-probabilities, /v1/completions, /v1/models. One loaded model answers every client at once
(--llama-slots conversations in parallel): models and judges through
``-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url URL``, or any OpenAI
client. It prints that URL on a line of its own, the last while it runs; Ctrl-C or SIGTERM stops it.

    parlai-acute serve
    parlai-acute serve --gguf models/qwen2.5-1.5b-instruct-q4_k_m.gguf --port 8081 --llama-slots 8
    parlai-acute judge ssa --items items.jsonl -o judge_ssa \\
        --judge="-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url http://127.0.0.1:8080/v1"
"""
from __future__ import annotations

import argparse

NEEDS = ("models",)  # the extras this command needs beyond the analysis core (main checks them first)

AGENT = "parlai_acute.agents.openai_compat:OpenAICompatAgent"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--gguf", default=None, metavar="PATH",
                        help="GGUF chat model (default: the embedded SmolLM2-135M-Instruct)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every network)")
    parser.add_argument("--port", type=int, default=8080, help="port (default 8080; 0 picks a free one)")
    parser.add_argument("--llama-slots", type=int, default=4,
                        help="conversations answered in parallel (default 4)")
    parser.add_argument("--context-length", type=int, default=2048,
                        help="tokens of each conversation: prompt and reply (default 2048)")
    parser.add_argument("--llama-threads", type=int, default=0, help="CPU threads (default 0: every core)")
    from parlai_acute.agents.llama_engine import DEFAULT_NICE, NICE_HELP

    parser.add_argument("--llama-nice", type=int, default=DEFAULT_NICE, help=NICE_HELP)
    parser.add_argument("--api-key-env", default="", metavar="VAR",
                        help="require the key in environment variable VAR from every client (clients: "
                             "--openai-api-key-env VAR); default: no key")


def run(args) -> int:
    import os
    import signal
    import threading

    from parlai_acute.agents.llama_engine import http_server
    from parlai_acute.errors import UserError
    from parlai_acute.paths import default_gguf

    for name, value, low in (("--llama-slots", args.llama_slots, 1), ("--context-length", args.context_length, 64),
                             ("--llama-threads", args.llama_threads, 0)):
        if value < low:
            raise UserError(f"{name} {value} is too small; use {low} or more")
    keys = []
    if args.api_key_env:
        if not os.environ.get(args.api_key_env):
            raise UserError(f"environment variable {args.api_key_env} (from --api-key-env) is not set; "
                            f"export {args.api_key_env}=<a key> or drop the option")
        keys = [os.environ[args.api_key_env]]
    model = args.gguf or default_gguf()
    server, url = http_server(model, args.host, args.port, args.llama_slots, args.context_length,
                              args.llama_threads, api_keys=keys, nice=args.llama_nice)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    print(f"serving {os.path.basename(model)} ({args.llama_slots} conversation{'s' * (args.llama_slots > 1)} at once, "
          f"{args.context_length} tokens each); Ctrl-C stops it")
    print(f"models and judges: -m {AGENT} --openai-base-url {url}"
          + (f" --openai-api-key-env {args.api_key_env}" if keys else ""))
    print(url, flush=True)
    stop.wait()
    del server  # stops llama.cpp's server
    print("stopped")
    return 0
