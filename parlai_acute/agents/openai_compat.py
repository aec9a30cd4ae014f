"""A ParlAI agent for any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp server, TGI, hosted APIs).

The shared decoding options map onto request fields (``temperature``, ``top_p``,
``top_k`` when set, ``max_tokens``, ``seed``); Meena's sample-and-rank asks for ``n``
samples with ``logprobs`` and ranks them in :mod:`parlai_acute.agents.decoding`. The API
key is read from an environment variable whose *name* is an option, so keys never land
in command lines, opt files or logs.

    parlai self_chat -m parlai_acute.agents.openai_compat:OpenAICompatAgent \\
        --openai-base-url http://127.0.0.1:8080/v1 --openai-model smollm2 --inference sample_rank
"""
from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import requests
from parlai.core.message import Message

from parlai_acute.agents.options import option_adder
from parlai_acute.agents import decoding
from parlai_acute.agents.turn_agent import DEFAULT_SYSTEM_PROMPT, TurnTakingAgent, chat_messages
from parlai_acute.errors import UserError

RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER = 60.0


def add_client_args(parser):
    """The endpoint options (decoding options come from decoding.add_decoding_args)."""
    group, add = option_adder(parser, "OpenAI-compatible endpoint (parlai_acute)")

    add("--openai-base-url", type=str, default=None,
        help="API base URL ending in /v1, e.g. http://127.0.0.1:8080/v1")
    add("--openai-model", type=str, default="", help="model name sent with each request (servers with one model ignore it)")
    add("--openai-api-key-env", type=str, default="",
        help="NAME of the environment variable holding the API key (the key itself is never an option)")
    add("--openai-timeout", type=float, default=60.0, help="seconds to wait for one response")
    add("--openai-retries", type=int, default=3,
        help="retries after connection errors, timeouts, 429 and 5xx (never after other 4xx)")
    add("--openai-backoff", type=float, default=1.0,
        help="first retry waits this many seconds, doubling each time (a Retry-After header wins)")
    add("--openai-extra-body", type=str, default="",
        help='JSON object merged into every request, for server-specific samplers, e.g. '
             '\'{"top_k": 0, "min_p": 0}\' (llama.cpp server otherwise applies top-k 40 and min-p 0.05)')
    add("--system-prompt", type=str, default=DEFAULT_SYSTEM_PROMPT, help="system prompt of every conversation")
    add("--persona", type=str, default="",
        help="persona text added to the system prompt (contexts' 'your persona:' lines add to it)")
    return group


class ChatClient:
    """Chat-completions requests with retries and one-line errors. Thread-safe."""

    def __init__(self, base_url: Optional[str], model: str = "", api_key_env: str = "", timeout: float = 60.0,
                 retries: int = 3, backoff: float = 1.0, extra_body: Optional[dict] = None):
        if not base_url:
            raise UserError("openai_base_url is required; pass the server's API root, e.g. http://127.0.0.1:8080/v1",
                            param="openai_base_url")
        if not base_url.startswith(("http://", "https://")):
            raise UserError(f"openai_base_url {base_url!r} is not an http(s) URL; use e.g. http://127.0.0.1:8080/v1",
                            param="openai_base_url")
        if timeout <= 0:
            raise UserError(f"openai_timeout {timeout} must be positive; use e.g. 60", param="openai_timeout")
        if retries < 0:
            raise UserError(f"openai_retries {retries} is negative; use 0 or more", param="openai_retries")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.timeout, self.retries, self.backoff = model, timeout, retries, max(0.0, backoff)
        self.api_key_env = api_key_env
        self.extra_body = dict(extra_body or {})
        self.headers = {"Content-Type": "application/json"}
        if api_key_env:
            key = os.environ.get(api_key_env, "")
            if not key:
                raise UserError(f"environment variable {api_key_env} (from openai_api_key_env) is not set; "
                                f"export {api_key_env}=<your key> or drop the option for a server without keys",
                                param="openai_api_key_env")
            self.headers["Authorization"] = f"Bearer {key}"
        self._local = threading.local()

    def _session(self) -> requests.Session:
        if not hasattr(self._local, "session"):
            self._local.session = requests.Session()
        return self._local.session

    def post(self, body: dict) -> dict:
        """POST one request; retry transient failures with exponential backoff; return the JSON."""
        attempts = self.retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                resp = self._session().post(self.url, json=body, headers=self.headers, timeout=self.timeout)
            except requests.Timeout:
                if last:
                    raise UserError(f"{self.url} did not answer within {self.timeout:g}s ({attempts} attempts); "
                                    "raise openai_timeout or check the server", param="openai_timeout") from None
                self._sleep(attempt)
                continue
            except requests.ConnectionError as exc:
                if last:
                    raise UserError(f"cannot connect to {self.url} ({type(exc).__name__}, {attempts} attempts); "
                                    "start the server or fix openai_base_url", param="openai_base_url") from None
                self._sleep(attempt)
                continue
            if resp.status_code == 200:
                try:
                    return resp.json()
                except ValueError:
                    raise UserError(f"{self.url} answered with something other than JSON; check that "
                                    "openai_base_url points at an OpenAI-compatible API (it usually ends in /v1)",
                                    param="openai_base_url") from None
            if resp.status_code in RETRY_STATUS and not last:
                self._sleep(attempt, resp.headers.get("Retry-After"))
                continue
            raise self._http_error(resp, attempts)
        raise AssertionError("unreachable")

    def _sleep(self, attempt: int, retry_after: Optional[str] = None):
        wait = self.backoff * (2 ** attempt)
        try:
            if retry_after is not None:
                wait = min(MAX_RETRY_AFTER, max(0.0, float(retry_after)))
        except ValueError:
            pass
        time.sleep(wait)

    def _http_error(self, resp, attempts: int) -> UserError:
        code, detail = resp.status_code, _server_message(resp)
        if code in (401, 403):
            if self.api_key_env:
                return UserError(f"{self.url} refused the request (HTTP {code}: {detail}); check the key in "
                                 f"{self.api_key_env}")
            return UserError(f"{self.url} refused the request (HTTP {code}: {detail}); pass openai_api_key_env=NAME "
                             "of the variable that holds the key", param="openai_api_key_env")
        if code == 404 and "model" in detail.lower():
            return UserError(f"{self.url} does not serve model {self.model!r} (HTTP 404: {detail}); "
                             "pass the name the server lists at /v1/models as openai_model", param="openai_model")
        if code == 404:
            return UserError(f"{self.url} does not exist (HTTP 404: {detail}); openai_base_url should be the "
                             "API root ending in /v1, e.g. http://127.0.0.1:8080/v1", param="openai_base_url")
        if code in RETRY_STATUS:
            return UserError(f"{self.url} kept failing (HTTP {code}: {detail}) after {attempts} attempts; "
                             "check the server, or raise openai_retries", param="openai_retries")
        return UserError(f"{self.url} rejected the request (HTTP {code}: {detail}); check openai_model and "
                         "the decoding options this server supports", param="openai_model")

    # ------------------------------------------------------------------ decoding

    def request_body(self, messages: list, config: decoding.DecodingConfig, n: int, seed: int) -> dict:
        """The request fields for the shared decoding options."""
        body = {"messages": messages, "max_tokens": config.max_new_tokens, "seed": seed}
        if self.model:
            body["model"] = self.model
        if config.greedy:
            body["temperature"] = 0.0
        else:
            body.update(temperature=config.temperature, top_p=config.topp)
            if config.topk > 0:
                body["top_k"] = config.topk  # not in OpenAI's API; vLLM, llama.cpp and TGI accept it
        if n > 1:
            body["n"] = n
        if config.inference == "sample_rank":
            body["logprobs"] = True
        body.update(self.extra_body)
        return body

    def candidates(self, messages: list, config: decoding.DecodingConfig, key: str) -> list:
        """``config.n_candidates`` candidates; asks again if the server returns fewer choices than ``n``."""
        want = 1 if config.greedy else config.n_candidates
        found: list = []
        for round_ in range(want):
            if len(found) >= want:
                break
            body = self.request_body(messages, config, want - len(found), decoding.sample_seed(config.seed, key, round_))
            response = self.post(body)
            choices = response.get("choices") or []
            if not choices:
                raise UserError(f"{self.url} returned no choices; check that it is a chat-completions endpoint")
            batch = [self._candidate(c, config) for c in choices]
            if isinstance(response.get("usage"), dict):  # token counts of the whole request, once
                batch[0].extra["usage"] = response["usage"]
            found += batch
        found = found[:want]
        if len(found) < config.n_candidates:  # greedy sample_rank: the N samples would all be the same
            found = found * config.n_candidates
        return found

    def _candidate(self, choice: dict, config: decoding.DecodingConfig) -> decoding.Candidate:
        text = ((choice.get("message") or {}).get("content") or "").strip()
        content = (choice.get("logprobs") or {}).get("content")
        extra = {"finish_reason": choice.get("finish_reason")}
        if content is None:
            if config.inference == "sample_rank":
                raise UserError(f"{self.url} returned no logprobs, which inference=sample_rank needs to rank "
                                "samples; use inference=sample or greedy, or a server with logprobs (vLLM, llama.cpp)",
                                param="inference")
            return decoding.Candidate(text=text, extra=extra)
        logprobs = [float(t["logprob"]) for t in content]
        return decoding.Candidate(text=text, score=sum(logprobs), num_tokens=len(logprobs), extra=extra)


def parse_extra_body(text: Optional[str]) -> dict:
    """The ``openai_extra_body`` JSON object (empty when not given)."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UserError(f"openai_extra_body is not valid JSON ({exc}); pass an object like '{{\"min_p\": 0}}'",
                        param="openai_extra_body") from None
    if not isinstance(value, dict):
        raise UserError("openai_extra_body must be a JSON object like '{\"min_p\": 0}'", param="openai_extra_body")
    return value


def _server_message(resp) -> str:
    try:
        err = resp.json().get("error")
        text = err.get("message") if isinstance(err, dict) else str(err or "")
    except (ValueError, AttributeError):
        text = resp.text
    text = " ".join((text or resp.reason or "").split())
    return text[:160] or "no message"


class OpenAICompatAgent(TurnTakingAgent):
    """``-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url URL``.

    ``batch_act`` sends the batch's requests concurrently, one thread each.
    """

    shared_attrs = ("client",)
    options = staticmethod(add_client_args)

    default_system = DEFAULT_SYSTEM_PROMPT

    def __init__(self, opt, shared=None):
        self.config = decoding.DecodingConfig.from_opt(opt)
        self.client = self.from_shared(shared, "client", lambda: ChatClient(
            opt.get("openai_base_url"), opt.get("openai_model") or "", opt.get("openai_api_key_env") or "",
            float(opt.get("openai_timeout") or 60.0),
            int(opt.get("openai_retries") if opt.get("openai_retries") is not None else 3),
            float(opt.get("openai_backoff") if opt.get("openai_backoff") is not None else 1.0),
            parse_extra_body(opt.get("openai_extra_body"))))
        super().__init__(opt, shared)
        self.id = "OpenAICompat"

    @staticmethod
    def messages(context) -> list:
        return chat_messages(context.system, context.turns)

    def reply_batch(self, contexts: list) -> list:
        if len(contexts) <= 1:
            return [self._reply(c) for c in contexts]
        with ThreadPoolExecutor(max_workers=len(contexts)) as pool:
            return list(pool.map(self._reply, contexts))

    def _reply(self, context) -> Message:
        messages = self.messages(context)
        choice = decoding.decode(lambda n: self.client.candidates(messages, self.config, context.seed_key),
                                 context.history, self.config)
        act = Message({"id": self.getID(), "episode_done": False})
        return decoding.package(act, choice, self.config, extra={"endpoint": self.client.url})
