"""The judge: any of this package's model wrappers (or any ParlAI agent) answering prompts.

The judge is created from a model string exactly as models are everywhere else
(:func:`parlai_acute.worlds.model_spec.model_args`: an agent name, a ``.gguf`` file, a
ParlAI model file or an opt string); the default is the embedded SmolLM2 via llama.cpp.
Its defaults differ from a chatting model's only in what a judge needs: greedy
decoding, no repetition filter, room for a reason, a longer context.

Two ways to read an answer:

* ``text``: the agent's own ``batch_act`` produces a reply (our wrappers decode the batch
  together); the reply is parsed strictly (:mod:`.parse`).
* ``logprobs``: the reply is started with ``Answer:`` and the choice is read from the
  log-probabilities of the next token (llama.cpp: its top log-probabilities; an
  OpenAI-compatible server: ``top_logprobs``, which needs a server that continues a final
  assistant message, as llama.cpp's does; transformers: the exact probability of each
  ``Answer: <label>``). Only single-choice questions can be answered this way.

The calls go through the wrappers' existing APIs (``batch_act``, the llama.cpp engine's
``chat``, the endpoint client's ``post``, the agent's ``score_replies``, llama.cpp for a GGUF file): no second client.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from parlai_acute.errors import UserError

ANSWER_FROM = ("text", "logprobs")
PREFILL = "Answer:"
TOP_LOGPROBS = 20
#: judge defaults (a user's own options for the model win over them)
DEFAULTS = {"inference": "greedy", "max_new_tokens": 64, "repetition_filter": "off", "context_length": 2048}


@dataclass
class Request:
    """One prompt: the system prompt, the user message, and the key seeding any sampling."""

    system: str
    user: str
    key: str


@dataclass
class Reply:
    text: str = ""
    label_logprobs: Optional[dict] = None  # logprobs mode: label -> log-probability (labels found only)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str = ""
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"text": self.text, "label_logprobs": self.label_logprobs, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "seconds": self.seconds}

    @classmethod
    def from_dict(cls, data: dict) -> "Reply":
        return cls(text=data.get("text", ""), label_logprobs=data.get("label_logprobs"),
                   prompt_tokens=int(data.get("prompt_tokens") or 0),
                   completion_tokens=int(data.get("completion_tokens") or 0), seconds=float(data.get("seconds") or 0))


def judge_opt(spec: Optional[str], concurrency: int = 1, seed: int = 0, datapath: Optional[str] = None):
    """The ParlAI opt of the judge model: the model string's options over the judge defaults."""
    from parlai.core.params import ParlaiParser

    from parlai_acute.paths import default_datapath
    from parlai_acute.worlds.model_spec import model_args, parse_parlai

    parser = ParlaiParser(True, True)
    parser.set_defaults(batchsize=concurrency, seed=seed, **DEFAULTS)
    argv = model_args(spec) + ["--datapath", datapath or default_datapath()]
    return parse_parlai(parser, argv, spec, "judge", "judge")


class JudgeModel:
    """A loaded judge. ``config`` describes it completely (recorded in outputs, part of cache keys)."""

    def __init__(self, spec: Optional[str] = None, name: Optional[str] = None, concurrency: int = 1, seed: int = 0,
                 datapath: Optional[str] = None, agent=None, call_retries: int = 2, backoff: float = 1.0):
        from parlai_acute.worlds.model_spec import create_agent_checked

        if concurrency < 1:
            raise UserError(f"concurrency {concurrency} must be at least 1", param="concurrency")
        self.spec = spec or "default"
        self.opt = judge_opt(spec, concurrency, seed, datapath) if agent is None else agent.opt
        self.agent = agent if agent is not None else create_agent_checked(self.opt)
        self.concurrency, self.seed = concurrency, seed
        self.call_retries, self.backoff = max(0, call_retries), max(0.0, backoff)
        self.backend = self._backend()
        self.config = self._config()
        self.name = name or f"judge:{self.config['weights'] or self.config['agent']}"

    # ------------------------------------------------------------------ description

    def _backend(self) -> str:
        agent = self.agent
        if hasattr(agent, "engine") and hasattr(agent.engine, "chat"):
            return "llama.cpp"
        if hasattr(agent, "client") and hasattr(agent.client, "post"):
            return "openai"
        if callable(getattr(agent, "score_replies", None)) and hasattr(agent, "model_path"):
            return "transformers"  # asked without touching agent.hf, which would load the torch weights
        return "parlai"

    def _config(self) -> dict:
        agent, opt = self.agent, self.opt
        weights = ""
        if self.backend == "llama.cpp":
            weights = os.path.basename(agent.engine.model_path)
        elif self.backend == "openai":
            weights = opt.get("openai_model") or agent.client.url
        elif self.backend == "transformers":
            weights = str(agent.model_path)
        elif opt.get("model_file"):
            weights = str(opt["model_file"])
        decoding = agent.config.as_dict() if hasattr(getattr(agent, "config", None), "as_dict") else {}
        return {"spec": self.spec, "agent": str(opt.get("model") or ""), "backend": self.backend, "weights": weights,
                "endpoint": agent.client.url if self.backend == "openai" else "",
                "decoding": decoding, "seed": self.seed}

    # ------------------------------------------------------------------ text answers

    def stream(self, requests: Sequence[Request], labels: Optional[Sequence] = None):
        """``(index, Reply)`` for every request as soon as it is answered, with ``concurrency`` calls
        always in flight (``labels``: one label list per request, to read the answer from
        log-probabilities). Why not batches: a batch waits for its slowest call, so the engine's
        slots idle while its last answers finish, the more so the more answer lengths differ (on
        the judge benchmark, 10 calls of up to 64 tokens, batches of 4 ran at 0.94 of the engine
        given the same requests 4 at a time, calls in flight at 0.96); answers given in
        log-probabilities were asked one at a time. Each call is one reply of the agent's
        ``batch_act``, which is stateless for a message that carries its turns, so calls run in
        threads; a plain ParlAI agent (observe/act keeps state) is asked one request at a time."""
        from concurrent.futures import ThreadPoolExecutor, as_completed

        from parlai_acute.agents.turn_agent import TurnTakingAgent

        if labels is not None:
            calls = [lambda r=r, ls=ls: self._with_retries(lambda: self._label_logprobs(r, ls))
                     for r, ls in zip(requests, labels)]
        elif isinstance(self.agent, TurnTakingAgent):
            calls = [lambda r=r: self._with_retries(lambda: self._batch([r])[0]) for r in requests]
        else:
            calls = [lambda r=r: self._with_retries(lambda: self._plain(r)) for r in requests]
        workers = self.concurrency if (labels is not None or isinstance(self.agent, TurnTakingAgent)) else 1
        if workers == 1 or len(calls) <= 1:
            for index, call in enumerate(calls):
                yield index, call()
            return
        with ThreadPoolExecutor(max_workers=min(workers, len(calls)), thread_name_prefix="judge") as pool:
            futures = {pool.submit(call): index for index, call in enumerate(calls)}
            for future in as_completed(futures):
                yield futures[future], future.result()

    def _with_retries(self, call) -> Reply:
        """A call retried with exponential backoff after errors (the endpoint client retries too)."""
        error = ""
        for attempt in range(self.call_retries + 1):
            start = time.perf_counter()
            try:
                reply = call()
                reply.seconds = time.perf_counter() - start
                return reply
            except Exception as exc:  # noqa: BLE001  recorded, never guessed
                error = " ".join(str(exc).split()) or type(exc).__name__
                if attempt < self.call_retries:
                    time.sleep(self.backoff * 2 ** attempt)
        return Reply(error=error[:300])

    def _batch(self, requests: Sequence[Request]) -> list:
        from parlai.core.message import Message

        from parlai_acute.agents.turn_agent import USER

        observations = [Message({"text": r.user, "episode_done": True, "context_system": r.system,
                                 "context_turns": [(USER, r.user)], "context_seed_key": r.key}) for r in requests]
        return [_reply_of(act) for act in self.agent.batch_act(observations)]

    def _plain(self, request: Request) -> Reply:
        """Any other ParlAI agent: one observe/act, the system prompt in front of the message."""
        self.agent.observe({"text": f"{request.system}\n\n{request.user}".strip(), "episode_done": True})
        act = self.agent.act()
        self.agent.reset()
        return _reply_of(act)

    # ------------------------------------------------------------------ log-probability answers

    def check_logprobs(self) -> None:
        if self.backend == "parlai":
            raise UserError(f"answer_from=logprobs needs a llama.cpp, OpenAI-compatible or transformers judge, "
                            f"not {self.config['agent']!r}; use answer_from=text", param="answer_from")

    def _label_logprobs(self, request: Request, labels: Sequence[str]) -> Reply:
        """The log-probability of each label as the token after ``Answer:``."""
        from parlai_acute.agents import decoding
        from parlai_acute.agents.turn_agent import BOT, USER, chat_messages

        if self.backend == "transformers":
            scored = self.agent.score_replies([(USER, request.user)], [f"{PREFILL} {label}" for label in labels],
                                                 request.system)
            return Reply(text="", label_logprobs={label: s for label, (_, s) in zip(labels, scored)})
        messages = chat_messages(request.system, [(USER, request.user), (BOT, PREFILL)])
        seed = decoding.sample_seed(self.seed, request.key, 0)
        body = {"messages": messages, "max_tokens": 3, "temperature": 0.0, "logprobs": True,
                "top_logprobs": TOP_LOGPROBS, "seed": seed}
        if self.backend == "llama.cpp":
            response = self.agent.engine.chat(body)
        else:
            client = self.agent.client
            if client.model:
                body["model"] = client.model
            body.update(client.extra_body)
            response = client.post(body)
        reply = _reply_of_response(response)
        reply.label_logprobs = answer_token_logprobs(response, labels)
        return reply


def _usage(reply: Reply, usage) -> None:
    if isinstance(usage, dict):
        reply.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        reply.completion_tokens += int(usage.get("completion_tokens") or 0)


def _reply_of(act) -> Reply:
    reply = Reply(text=str(act.get("text") or ""))
    for cand in act.get("candidates") or []:
        if isinstance(cand, dict):
            _usage(reply, cand.get("usage"))
    return reply


def _reply_of_response(response: dict) -> Reply:
    choices = response.get("choices") or [{}]
    reply = Reply(text=str((choices[0].get("message") or {}).get("content") or ""))
    _usage(reply, response.get("usage"))
    return reply


def answer_token_logprobs(response: dict, labels: Sequence[str]) -> dict:
    """label -> log-probability at the first non-blank generated token, from its top log-probs.

    Tokens are compared after stripping spaces and case (`` 1`` and ``1`` are both label 1);
    probabilities of tokens naming one label are added. A label outside the top list is
    absent from the result.
    """
    choices = response.get("choices") or []
    content = ((choices[0].get("logprobs") or {}).get("content") if choices else None) or []
    wanted = {str(label).lower(): label for label in labels}
    for token in content:
        if not str(token.get("token", "")).strip():
            continue
        found: dict = {}
        for alt in token.get("top_logprobs") or [token]:
            label = wanted.get(str(alt.get("token", "")).strip().lower())
            if label is not None:
                found.setdefault(label, []).append(float(alt["logprob"]))
        return {label: _logsumexp(values) for label, values in found.items()}
    return {}


def _logsumexp(values: list) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
