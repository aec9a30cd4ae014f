"""GGUF chat models in ParlAI through llama.cpp (the ``xllamacpp`` wheel).

``-m parlai_acute.agents.llama_cpp:LlamaCppAgent`` works with every ParlAI script
(``self_chat``, ``interactive``, ``eval_model``) and with ``parlai-acute``. The default
weights are the embedded SmolLM2-135M-Instruct (:func:`parlai_acute.paths.default_gguf`);
``--gguf PATH`` or ParlAI's ``-mf PATH.gguf`` pick another model.

Why it is built this way:

* One :class:`LlamaEngine` (an in-process ``xllamacpp.Server``) per model and settings.
  ``share()`` hands it to copies, so ``--batchsize B`` worlds and the two sides of a
  self-chat use ONE loaded model.
* The server has ``n_parallel`` slots and continuous batching: ``batch_act`` submits all
  B conversations (times N samples for sample-and-rank) at once from threads, and
  llama.cpp decodes them in the same forward passes, so throughput grows with B.
* Each reply is built with the model's own chat template (``/v1/chat/completions``) and
  comes back with the log-probability of every sampled token, which the shared
  :mod:`parlai_acute.agents.decoding` uses to rank, filter and record candidates.
* Persona/context: a first observation's ``your persona: ...`` lines (ParlAI's
  ConvAI2/BlendedSkillTalk convention) go into the system prompt; the rest of a context
  is the partner's first words.
"""
from __future__ import annotations

import json
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Optional, Sequence

from parlai.core.agents import Agent
from parlai.core.message import Message

from parlai_acute.agents import decoding
from parlai_acute.errors import UserError

DEFAULT_SYSTEM_PROMPT = ("You are a person chatting casually with someone you just met. "
                         "Reply in one or two short sentences.")
OPENING_CUE = "You speak first: greet the other person and say something about yourself."
PERSONA_PREFIXES = ("your persona:",)
KV_CACHE_TYPES = {"f16": "GGML_TYPE_F16", "q8_0": "GGML_TYPE_Q8_0"}
PARTNER_PREFIXES = ("partner's persona:", "their persona:")


# --------------------------------------------------------------------------- context

def split_context(text: str) -> tuple:
    """(own persona lines, partner persona lines, remaining text) of a context message."""
    own, partner, rest = [], [], []
    for line in (text or "").splitlines():
        low = line.strip().lower()
        for prefix in PERSONA_PREFIXES:
            if low.startswith(prefix):
                own.append(line.strip()[len(prefix):].strip())
                break
        else:
            for prefix in PARTNER_PREFIXES:
                if low.startswith(prefix):
                    partner.append(line.strip()[len(prefix):].strip())
                    break
            else:
                rest.append(line)
    return own, partner, "\n".join(rest).strip()


def build_system_prompt(base: str, persona: Sequence[str] = (), partner: Sequence[str] = ()) -> str:
    parts = [base.strip()] if base and base.strip() else []
    if persona:
        parts.append("Your persona: " + " ".join(persona))
    if partner:
        parts.append("The other person's persona: " + " ".join(partner))
    return "\n".join(parts)


# --------------------------------------------------------------------------- engine

def check_model_file(path: str) -> str:
    """Return the absolute path of a readable GGUF file, else raise a one-line UserError."""
    path = os.path.abspath(os.path.expanduser(str(path)))
    if not os.path.exists(path):
        raise UserError(f"GGUF model file {path} does not exist; pass --gguf PATH.gguf "
                        "(or omit it for the embedded SmolLM2)")
    if os.path.isdir(path):
        raise UserError(f"--gguf {path} is a directory, not a model; pass the .gguf file inside it")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise UserError(f"cannot read GGUF model file {path}: {exc.strerror}; check its permissions") from None
    if magic != b"GGUF":
        raise UserError(f"{path} is not a GGUF model (no GGUF header); pass a .gguf file made for llama.cpp")
    return path


class LlamaEngine:
    """One GGUF model loaded in an in-process llama.cpp server with parallel slots.

    Thread-safe: every call of :meth:`chat` may come from any thread; requests beyond
    the number of slots wait in llama.cpp's queue.
    """

    def __init__(self, model_path: str, context_length: int = 1024, slots: int = 1, threads: int = 1,
                 kv_cache_type: str = "q8_0"):
        import xllamacpp

        self.model_path = check_model_file(model_path)
        self.context_length, self.slots, self.threads = context_length, slots, threads
        params = xllamacpp.CommonParams()
        params.model.path = self.model_path
        params.n_parallel = slots
        params.n_ctx = context_length * slots  # llama.cpp splits it evenly between slots
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.cache_ram_mib = 0  # no host-RAM prompt cache: keeps RSS near the model size
        # q8_0 keys/values halve the KV memory (about 11 instead of 23 MB per 1024-token slot
        # for SmolLM2) at no measurable speed cost here; f16 is llama.cpp's default
        kv_type = getattr(xllamacpp.ggml_type, KV_CACHE_TYPES[kv_cache_type])
        params.cache_type_k = params.cache_type_v = kv_type
        params.verbosity = -1
        params.warmup = False
        try:
            self.server = xllamacpp.Server(params)
        except Exception as exc:  # llama.cpp reports a bad file only as a failed load
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise UserError(f"llama.cpp could not load {self.model_path}: {message}; "
                            "pass a GGUF chat model that llama.cpp supports") from None
        self._pool = ThreadPoolExecutor(max_workers=max(4, 2 * slots), thread_name_prefix="llama")

    def chat(self, request: dict) -> dict:
        """One ``/v1/chat/completions`` request. A prompt longer than the context loses its
        oldest turns first; a single over-long turn keeps only its end."""
        request = dict(request)
        messages = list(request["messages"])
        while True:
            request["messages"] = messages
            response = self.server.handle_chat_completions(request)
            error = response.get("error") if isinstance(response, dict) else None
            if not error:
                return response
            if error.get("type") != "exceed_context_size_error":
                raise RuntimeError(f"llama.cpp: {error.get('message', error)}")
            turns = [i for i, m in enumerate(messages) if m["role"] != "system"]
            if len(turns) > 1:
                del messages[turns[0]]
                continue
            if not turns or len(messages[turns[0]]["content"]) < 16:
                raise UserError(f"the system prompt and persona do not fit in --context-length "
                                f"{self.context_length}; shorten them or raise --context-length")
            # keep the end of the one remaining turn, cut in proportion to the overflow
            last = messages[turns[0]]
            keep = max(0.1, (error.get("n_ctx", 0) * 0.9) / max(1, error.get("n_prompt_tokens", 1)))
            messages[turns[0]] = dict(last, content=last["content"][-int(len(last["content"]) * min(keep, 0.9)):])

    def chat_many(self, requests: Sequence[dict]) -> list:
        """Submit all requests at once (continuous batching); results in request order."""
        if len(requests) == 1:
            return [self.chat(requests[0])]
        return list(self._pool.map(self.chat, requests))

    def candidates(self, conversations: Sequence[tuple], config: decoding.DecodingConfig) -> list:
        """For each ``(messages, seed_key)``, ``config.n_candidates`` sampled Candidates.

        The N samples of one prompt go in requests of up to ``slots`` completions each
        (llama.cpp's ``n``): the prompt is evaluated once per request, not once per sample.
        """
        n = config.n_candidates
        chunks = [min(self.slots, n - start) for start in range(0, n, self.slots)]
        requests = [sampling_request(messages, config, decoding.sample_seed(config.seed, key, c), size)
                    for messages, key in conversations for c, size in enumerate(chunks)]
        responses = iter(self.chat_many(requests))
        return [[cand for _ in chunks for cand in to_candidates(next(responses))] for _ in conversations]

    def close(self) -> None:
        self._pool.shutdown(wait=False)


def sampling_request(messages: Sequence[dict], config: decoding.DecodingConfig, seed: int, n: int = 1) -> dict:
    """The chat-completions request for ``n`` samples: only the samplers our options name are on."""
    request = {
        "messages": list(messages),
        "max_tokens": config.max_new_tokens,
        "temperature": 0.0 if config.greedy else config.temperature,
        "top_p": config.topp,
        "top_k": config.topk,
        # llama.cpp enables min-p (0.05) and other samplers by default; plain sampling needs them off
        "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0, "presence_penalty": 0.0,
        "frequency_penalty": 0.0, "dry_multiplier": 0.0, "xtc_probability": 0.0,
        "seed": seed,
        "logprobs": True,
        "top_logprobs": 1,  # 0 turns per-token log-probs off entirely
    }
    if n > 1:
        request["n"] = n
    return request


def to_candidates(response: dict) -> list:
    """One Candidate per choice, scored by the sum of its sampled tokens' log-probs."""
    candidates = []
    for choice in sorted(response["choices"], key=lambda c: c.get("index", 0)):
        tokens = ((choice.get("logprobs") or {}).get("content")) or []
        candidates.append(decoding.Candidate(
            text=(choice["message"].get("content") or "").strip(), score=float(sum(t["logprob"] for t in tokens)),
            num_tokens=len(tokens), extra={"finish_reason": choice.get("finish_reason")}))
    return candidates


_ENGINES: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
_ENGINES_LOCK = threading.Lock()


def get_engine(model_path: str, context_length: int, slots: int, threads: int,
               kv_cache_type: str = "q8_0") -> LlamaEngine:
    """The live engine for these settings, or a new one (independent agents share models too)."""
    key = (check_model_file(model_path), context_length, slots, threads, kv_cache_type)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = LlamaEngine(*key)
            _ENGINES[key] = engine
        return engine


# --------------------------------------------------------------------------- agent

class LlamaCppAgent(Agent):
    """A GGUF chat model run by llama.cpp, decoded with the shared strategies.

    Each reply act carries ``candidates`` (every sample with its log-prob score and
    whether the repetition filter dropped it) and ``decoding`` (the settings and choice).
    """

    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        group = parser.add_argument_group("llama.cpp model (parlai_acute)")
        group.add_argument("--gguf", type=str, default=None,
                           help="GGUF chat model (default: -mf if it is a .gguf, else the embedded "
                                "SmolLM2-135M-Instruct)")
        group.add_argument("--system-prompt", type=str, default=DEFAULT_SYSTEM_PROMPT,
                           help="system prompt of every conversation")
        group.add_argument("--persona", type=str, default="",
                           help="persona text added to the system prompt (contexts' 'your persona:' lines add to it)")
        group.add_argument("--context-length", type=int, default=1024,
                           help="tokens of context per conversation; older turns are dropped to fit")
        group.add_argument("--llama-threads", type=int, default=1, help="CPU threads for llama.cpp")
        group.add_argument("--kv-cache-type", type=str, default="q8_0", choices=sorted(KV_CACHE_TYPES),
                           help="llama.cpp KV cache precision: q8_0 uses half the memory of f16")
        group.add_argument("--llama-slots", type=int, default=0,
                           help="parallel sequences decoded together (0: 2 x batchsize x candidates, at most 16; "
                                "two per conversation so both sides of a self-chat keep their prompt cache)")
        decoding.add_decoding_args(parser)
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = "LlamaCpp"
        self.config = decoding.DecodingConfig.from_opt(opt)
        if shared is not None:
            self.engine = shared["engine"]
        else:
            self.engine = get_engine(*engine_settings(opt, self.config))
        self.batch_index = int(opt.get("batchindex") or 0)
        self.batch_size = max(1, int(opt.get("batchsize") or 1))
        self.conversations_started = 0
        self._last_reply = None
        self.reset()

    def share(self):
        shared = super().share()
        shared["engine"] = self.engine
        return shared

    # ---- per-conversation state

    def reset(self):
        super().reset()
        self.persona = [self.opt["persona"]] if self.opt.get("persona") else []
        self.partner_persona = []
        self.turns = []  # chat messages without the system prompt
        self.started = False
        self._reset_after_reply = False

    def _start(self):
        if not self.started:
            self.started = True
            self.conversations_started += 1

    def _add(self, role: str, text: str):
        self._start()
        text = (text or "").strip()
        if not text:
            return
        if self.turns and self.turns[-1]["role"] == role:
            self.turns[-1] = {"role": role, "content": self.turns[-1]["content"] + "\n" + text}
        else:
            self.turns.append({"role": role, "content": text})

    def messages(self) -> list:
        system = build_system_prompt(self.opt.get("system_prompt", DEFAULT_SYSTEM_PROMPT), self.persona,
                                     self.partner_persona)
        if not self.turns:  # speaking first: without a cue small models ramble or apologise
            system = (system + "\n" + OPENING_CUE).strip()
        return ([{"role": "system", "content": system}] if system else []) + list(self.turns)

    def seed_key(self, messages) -> str:
        """Conversation number (global across batch slots, as ParlAI's batch worlds count) + prompt."""
        number = (self.conversations_started - 1) * self.batch_size + self.batch_index
        return f"{number}\x00{json.dumps(messages, sort_keys=True)}"

    # ---- ParlAI API

    def observe(self, observation):
        if self._reset_after_reply:
            self.reset()
        obs = Message(observation or {})
        text = obs.get("text") or ""
        if not self.started or obs.get("id") == "context":
            own, partner, text = split_context(text)
            self.persona += own
            self.partner_persona += partner
        self._add("user", text if text != "__SILENCE__" else "")
        if obs.get("episode_done"):
            self._reset_after_reply = True
        messages = self.messages()
        obs.force_set("llama_messages", messages)
        obs.force_set("llama_seed_key", self.seed_key(messages))
        self.observation = obs
        return obs

    def self_observe(self, self_message):
        """Remember what this agent said (its reply, or a seed utterance said on its behalf)."""
        if self_message is None or self_message is self._last_reply:
            return
        self._last_reply = self_message
        if self._reset_after_reply:
            self.reset()
            return
        self._add("assistant", self_message.get("text", ""))

    def act(self):
        if self.observation is None:  # speaks first, e.g. the opener of a self-chat
            self.observe({"episode_done": False})
        reply = self.batch_act([self.observation])[0]
        self.self_observe(reply)
        return reply

    def batch_act(self, observations):
        conversations = []
        for obs in observations:
            obs = obs or {}
            messages = obs.get("llama_messages")
            if messages is None:  # not observed by a LlamaCppAgent: answer the text alone
                messages = [{"role": "system", "content": self.opt.get("system_prompt", DEFAULT_SYSTEM_PROMPT)},
                            {"role": "user", "content": obs.get("text") or ""}]
            key = obs.get("llama_seed_key") or json.dumps(messages, sort_keys=True)
            conversations.append((messages, key))
        per_conversation = self.engine.candidates(conversations, self.config)
        replies = []
        for (messages, _), candidates in zip(conversations, per_conversation):
            history = [m["content"] for m in messages if m["role"] != "system"]
            choice = decoding.choose(candidates, history, self.config)
            act = Message({"id": self.getID(), "episode_done": False})
            decoding.package(act, choice, self.config,
                             extra={"model": os.path.basename(self.engine.model_path), "engine": "llama.cpp"})
            replies.append(act)
        return replies


def engine_settings(opt, config: decoding.DecodingConfig) -> tuple:
    """(model path, context length, slots, threads, KV cache type) from an opt, validated."""
    from parlai_acute.paths import default_gguf

    path = opt.get("gguf")
    if not path and str(opt.get("model_file") or "").endswith(".gguf"):
        path = opt["model_file"]
    path = path or default_gguf()
    def number(key, default):
        return int(default if opt.get(key) is None else opt[key])

    context_length, threads, slots = number("context_length", 1024), number("llama_threads", 1), number("llama_slots", 0)
    if context_length < 64:
        raise UserError(f"--context-length {context_length} is too small; use 64 or more (e.g. 1024)")
    if config.max_new_tokens >= context_length // 2:
        raise UserError(f"--max-new-tokens {config.max_new_tokens} leaves too little of --context-length "
                        f"{context_length} for the conversation; lower it or raise --context-length")
    if threads < 1:
        raise UserError(f"--llama-threads {threads} is too small; use 1 or more")
    if slots < 0:
        raise UserError(f"--llama-slots {slots} is negative; use 0 (automatic) or a positive number")
    if slots == 0:
        slots = min(16, 2 * max(1, int(opt.get("batchsize") or 1)) * config.n_candidates)
    kv_cache_type = opt.get("kv_cache_type") or "q8_0"
    if kv_cache_type not in KV_CACHE_TYPES:
        raise UserError(f"--kv-cache-type {kv_cache_type!r} is not supported; use one of {', '.join(sorted(KV_CACHE_TYPES))}")
    return path, context_length, slots, threads, kv_cache_type
