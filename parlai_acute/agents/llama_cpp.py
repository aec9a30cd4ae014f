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
* Threads default to the machine's cores (``--llama-threads 0``); several configurations in one
  process (per-turn's models) are spread over one-thread engines, one per core
  (:func:`share_engines`), so no core idles while a worker waits and none is fought over.
* Persona lines, history and seed keys are kept as for every model wrapper, by
  :class:`parlai_acute.agents.turn_agent.TurnTakingAgent`; speaking first, the system
  prompt gets a cue to open the conversation.
"""
from __future__ import annotations

import json
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

from parlai.core.message import Message

from parlai_acute.agents import decoding
from parlai_acute.agents.turn_agent import DEFAULT_SYSTEM_PROMPT, TurnTakingAgent, chat_messages
from parlai_acute.errors import UserError

OPENING_CUE = "You speak first: greet the other person and say something about yourself."
KV_CACHE_TYPES = {"f16": "GGML_TYPE_F16", "q8_0": "GGML_TYPE_Q8_0"}


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
    if candidates and isinstance(response.get("usage"), dict):  # token counts of the whole request, once
        candidates[0].extra["usage"] = response["usage"]
    return candidates


_ENGINES: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
_ENGINES_LOCK = threading.Lock()


def get_engine(model_path: str, context_length: int, slots: int, threads: int,
               kv_cache_type: str = "q8_0", replica: int = 0) -> LlamaEngine:
    """The live engine for these settings, or a new one (independent agents share models too);
    ``replica`` tells apart engines of the same settings loaded on purpose (:func:`share_engines`)."""
    settings = (check_model_file(model_path), context_length, slots, threads, kv_cache_type)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(settings + (replica,))
        if engine is None:
            engine = LlamaEngine(*settings)
            _ENGINES[settings + (replica,)] = engine
        return engine


def cores() -> int:
    """CPU cores this process may run on (a container's or taskset's limit, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def is_llama_opt(opt) -> bool:
    return str(opt.get("model") or "").endswith("llama_cpp:LlamaCppAgent")


def engine_key(opt) -> tuple:
    """What decides which engine an opt's agent uses (its threads aside)."""
    path, context_length, slots, _, kv = engine_settings(opt, decoding.DecodingConfig.from_opt(opt))
    return path, context_length, slots, kv, int(opt.get("llama_replica") or 0)


def share_engines(opts) -> None:
    """Plan the engines of several llama.cpp configurations loaded in one process (in place).

    The configurations of one GGUF (same context length and KV type) left on automatic slots
    and threads are spread over ``min(configurations, cores)`` engines, heaviest first (by
    candidates per reply) onto the least loaded, each engine with slots for its members; the
    cores are divided between all engines. Four SmolLM2 configurations of a per-turn task on
    two cores are two one-thread engines replying at the same time. Not one engine on all the
    cores: at every layer its threads wait for each other, and on a machine whose cores are
    also busy with other work a descheduled thread stalls them all (measured: four
    configurations on one 2-thread engine were 8x slower than on one 1-thread engine at load
    7 on 2 cores, and the per-turn benchmark 13.4x its floor at load 4 against 1.9x for
    one-thread engines); engines on one thread each never wait for one another. (Measured
    too: two engines in one process answer one after the other -- two requests on two engines
    took the sum of their times alone -- so today the second core is not used by them either;
    a process per engine would be the next step.)
    """
    llama = [opt for opt in opts if is_llama_opt(opt)]
    budget = cores()
    groups: dict[tuple, list] = {}
    for opt in llama:
        path, context_length, slots, _, kv = engine_settings(opt, decoding.DecodingConfig.from_opt(opt))
        if not int(opt.get("llama_slots") or 0) and not int(opt.get("llama_threads") or 0):
            weight = decoding.DecodingConfig.from_opt(opt).n_candidates
            groups.setdefault((path, context_length, kv), []).append((opt, slots, weight))
    for members in groups.values():
        replicas = [[] for _ in range(min(len(members), budget))]
        for member in sorted(members, key=lambda m: -m[2]):  # longest first onto the least loaded engine
            min(replicas, key=lambda r: sum(w for _, _, w in r)).append(member)
        for index, replica in enumerate(replicas):
            for opt, _, _ in replica:
                opt["llama_slots"] = min(16, sum(slots for _, slots, _ in replica))
                opt["llama_replica"] = index
    engines = {engine_key(opt) for opt in llama}
    for opt in llama:
        if not int(opt.get("llama_threads") or 0):
            opt["llama_threads"] = max(1, budget // max(1, len(engines)))


# --------------------------------------------------------------------------- agent

class LlamaCppAgent(TurnTakingAgent):
    """A GGUF chat model run by llama.cpp, decoded with the shared strategies.

    The conversation is kept by :class:`~parlai_acute.agents.turn_agent.TurnTakingAgent`.
    Each reply act carries ``candidates`` (every sample with its log-prob score and
    whether the repetition filter dropped it) and ``decoding`` (the settings and choice).
    """

    shared_attrs = ("engine",)

    default_system = DEFAULT_SYSTEM_PROMPT

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
        group.add_argument("--llama-threads", type=int, default=0,
                           help="CPU threads for llama.cpp (0: the machine's cores, divided between the engines "
                                "of one per-turn task)")
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
        self.engine = self.from_shared(shared, "engine", lambda: get_engine(
            *engine_settings(opt, self.config), replica=int(opt.get("llama_replica") or 0)))

    @property
    def turns(self) -> list:
        """The conversation so far as chat messages, without the system prompt."""
        return chat_messages("", self._turns)

    @staticmethod
    def prompt(system: str, turns) -> list:
        """The chat messages sent to the model for a system prompt and ``(role, text)`` turns."""
        if not turns:  # speaking first: without a cue small models ramble or apologise
            system = (system + "\n" + OPENING_CUE).strip()
        return chat_messages(system, turns)

    def messages(self) -> list:
        """The prompt of the conversation so far."""
        return self.prompt(self.system, self._turns)

    def prompt_key(self, system: str, turns: list) -> str:
        return json.dumps(self.prompt(system, turns), sort_keys=True)

    def reply_batch(self, contexts: list) -> list:
        """All conversations' candidates in one submission to the engine (continuous batching)."""
        conversations = [(self.prompt(c.system, c.turns), c.seed_key) for c in contexts]
        per_conversation = self.engine.candidates(conversations, self.config)
        replies = []
        for context, candidates in zip(contexts, per_conversation):
            choice = decoding.choose(candidates, context.history, self.config)
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

    context_length, threads, slots = number("context_length", 1024), number("llama_threads", 0), number("llama_slots", 0)
    if context_length < 64:
        raise UserError(f"--context-length {context_length} is too small; use 64 or more (e.g. 1024)")
    if config.max_new_tokens >= context_length // 2:
        raise UserError(f"--max-new-tokens {config.max_new_tokens} leaves too little of --context-length "
                        f"{context_length} for the conversation; lower it or raise --context-length")
    if threads < 0:
        raise UserError(f"--llama-threads {threads} is negative; use 0 (the machine's cores) or a positive number")
    threads = threads or cores()
    if slots < 0:
        raise UserError(f"--llama-slots {slots} is negative; use 0 (automatic) or a positive number")
    if slots == 0:
        slots = min(16, 2 * max(1, int(opt.get("batchsize") or 1)) * config.n_candidates)
    kv_cache_type = opt.get("kv_cache_type") or "q8_0"
    if kv_cache_type not in KV_CACHE_TYPES:
        raise UserError(f"--kv-cache-type {kv_cache_type!r} is not supported; use one of {', '.join(sorted(KV_CACHE_TYPES))}")
    return path, context_length, slots, threads, kv_cache_type
