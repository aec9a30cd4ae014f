"""Fixtures for the model wrappers: tiny local HF checkpoints, the real SmolLM2 in
transformers, and a real llama.cpp HTTP server (xllamacpp) on loopback serving SmolLM2."""
from __future__ import annotations

import http.server
import socket
import threading

import pytest

SENTENCES = [
    "hello how are you today",
    "i am fine thank you and you",
    "what do you like to do on weekends",
    "i like to read books and walk my dog",
    "do you have any pets at home",
    "yes i have a cat and a dog",
]


def _word_tokenizer(seq2seq: bool):
    """A word-level tokenizer trained here on a few sentences (no hub download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>"]
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(SENTENCES + ["User: Bot: system persona :"],
                            trainers.WordLevelTrainer(special_tokens=specials))
    if seq2seq:
        tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 2), ("</s>", 3)])
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", eos_token="</s>")


@pytest.fixture(scope="session")
def tiny_gpt2_dir(tmp_path_factory) -> str:
    """A randomly initialised 2-layer GPT-2 and its tokenizer, saved with save_pretrained."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    tok = _word_tokenizer(seq2seq=False)
    tok.add_tokens(["\n"])
    config = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    path = tmp_path_factory.mktemp("tiny_gpt2")
    GPT2LMHeadModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def tiny_bart_dir(tmp_path_factory) -> str:
    """A randomly initialised tiny BART (seq2seq) and its tokenizer."""
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    torch.manual_seed(0)
    tok = _word_tokenizer(seq2seq=True)
    config = BartConfig(vocab_size=len(tok), d_model=32, encoder_layers=1, decoder_layers=1,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                        decoder_ffn_dim=64, max_position_embeddings=128, pad_token_id=tok.pad_token_id,
                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                        decoder_start_token_id=tok.eos_token_id, forced_bos_token_id=None)
    path = tmp_path_factory.mktemp("tiny_bart")
    BartForConditionalGeneration(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def smollm2_hf(gguf_path):
    """The real SmolLM2-135M-Instruct GGUF loaded through transformers (dequantised once per session)."""
    from parlai_acute.agents.hf_transformers import load_model

    return load_model(gguf_path)


# --------------------------------------------------------------------------- loopback servers

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(gguf_path):
    """xllamacpp's llama.cpp HTTP server on 127.0.0.1 serving SmolLM2; yields its base URL (…/v1)."""
    yield from _llama_server(gguf_path, api_keys=None)


@pytest.fixture(scope="session")
def llama_server_with_key(gguf_path):
    """The same server requiring ``Authorization: Bearer test-key-123``."""
    yield from _llama_server(gguf_path, api_keys=["test-key-123"])


def _llama_server(gguf_path, api_keys):
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = gguf_path
    params.n_ctx = 4096
    params.n_parallel = 4
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.hostnames = ["127.0.0.1"]
    params.port = free_port()
    params.verbosity = -1  # quiet: its log goes straight to fd 2
    if api_keys:
        params.api_keys = api_keys
    server = xllamacpp.Server(params)
    try:
        yield server.listening_address.rstrip("/") + "/v1"
    finally:
        del server


class FlakyProxy:
    """A loopback HTTP proxy in front of a real server.

    It answers the first ``fail`` POSTs with ``status``, then forwards; ``delay`` seconds
    of sleep before forwarding make a slow server (timeouts, concurrency);
    ``strip_logprobs`` removes logprobs from answers (a server without logprobs support);
    ``max_choices`` keeps only that many choices (a server that ignores ``n``).
    Records the headers and JSON body of every request and the most requests in flight.
    """

    def __init__(self, upstream: str, fail: int = 0, status: int = 503, delay: float = 0.0,
                 strip_logprobs: bool = False, max_choices: int = 0):
        import json

        import requests

        proxy = self
        self.upstream, self.fail, self.status, self.delay = upstream.rstrip("/"), fail, status, delay
        self.seen: list = []
        self.bodies: list = []
        self.inflight = self.max_inflight = 0
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy.lock:
                    proxy.seen.append(dict(self.headers))
                    proxy.bodies.append(json.loads(body or b"null"))
                    failing = proxy.fail > 0
                    proxy.fail -= failing
                    proxy.inflight += 1
                    proxy.max_inflight = max(proxy.max_inflight, proxy.inflight)
                try:
                    self._answer(body, failing)
                finally:
                    with proxy.lock:
                        proxy.inflight -= 1

            def _answer(self, body, failing):
                if failing:
                    payload = b'{"error": {"message": "try again"}}'
                    self.send_response(proxy.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if proxy.delay:
                    threading.Event().wait(proxy.delay)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
                try:
                    resp = requests.post(proxy.upstream + self.path, data=body, headers=headers, timeout=120)
                except requests.RequestException:
                    return
                content = resp.content
                if (strip_logprobs or max_choices) and resp.status_code == 200:
                    data = resp.json()
                    for choice in data.get("choices", []):
                        if strip_logprobs:
                            choice.pop("logprobs", None)
                    if max_choices:
                        data["choices"] = data["choices"][:max_choices]
                    content = json.dumps(data).encode()
                self.send_response(resp.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                try:
                    self.wfile.write(content)
                except OSError:
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def flaky_proxy(llama_server):
    """Factory: ``flaky_proxy(fail=1, status=503, ...)`` -> proxy whose ``url + '/v1'`` is the API.

    ``upstream=`` another base URL (…/v1) to put the proxy in front of; default: llama_server.
    """
    proxies = []

    def make(upstream=None, **kwargs):
        upstream = (upstream or llama_server)[: -len("/v1")]
        proxies.append(FlakyProxy(upstream, **kwargs))
        return proxies[-1]

    yield make
    for p in proxies:
        p.close()


@pytest.fixture()
def closed_port_url() -> str:
    """A loopback URL with nothing listening."""
    return f"http://127.0.0.1:{free_port()}/v1"
