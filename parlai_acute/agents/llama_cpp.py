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
  (:func:`share_engines`), each in its own process (:class:`~parlai_acute.agents.llama_engine.ProcessEngine`:
  engines of one process take turns), so no core idles while a worker waits and none is fought over.
* An engine's compute threads run at raised priority (``--llama-nice``, default -10; needs root or
  CAP_SYS_NICE, else one note and no change), and the per-turn task's engines, a lone one too, each run
  in a process and session of their own at that priority. Why: llama.cpp's threads meet at a barrier
  after every layer; beside other CPU-bound work a descheduled thread stalls the rest, and a lone
  SmolLM2 at 2 threads on 2 cores beside two busy processes kept a worker waiting 106.9 s for a first
  turn. With the priority the engine takes the cores while it generates and nothing while idle
  (``perturn_first_turn_wait`` in docs/benchmarks.md has the figures).
* The engines live in :mod:`parlai_acute.agents.llama_engine` (no ParlAI, so an engine process is light).
* Persona lines, history and seed keys are kept as for every model wrapper, by
  :class:`parlai_acute.agents.turn_agent.TurnTakingAgent`; speaking first, the system
  prompt gets a cue to open the conversation.
"""
from __future__ import annotations

import json
import os
import threading
import weakref

from parlai.core.message import Message

from parlai_acute.agents import decoding
from parlai_acute.agents.llama_engine import (DEFAULT_NICE, KV_CACHE_TYPES, NICE_HELP, LlamaEngine, ProcessEngine,
                                              check_model_file, check_nice)
from parlai_acute.agents.turn_agent import DEFAULT_SYSTEM_PROMPT, TurnTakingAgent, chat_messages
from parlai_acute.errors import UserError
from parlai_acute.parallel import cores

OPENING_CUE = "You speak first: greet the other person and say something about yourself."


# --------------------------------------------------------------------------- engines

_ENGINES: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
_ENGINES_LOCK = threading.Lock()


def get_engine(model_path: str, context_length: int, slots: int, threads: int,
               kv_cache_type: str = "q8_0", replica: int = 0, process: bool = False,
               nice: int = 0) -> LlamaEngine:
    """The live engine for these settings, or a new one (independent agents share models too);
    ``replica`` tells apart engines of the same settings loaded on purpose (:func:`share_engines`);
    ``process``: in its own process (:class:`ProcessEngine`), to generate alongside other engines;
    ``nice``: the niceness of its compute threads (:func:`~parlai_acute.agents.llama_engine.raised_priority`)."""
    settings = (check_model_file(model_path), context_length, slots, threads, kv_cache_type)
    key = settings + (replica, bool(process), int(nice))
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = (ProcessEngine if process else LlamaEngine)(*settings, nice=int(nice))
            _ENGINES[key] = engine
        return engine


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
    one-thread engines); engines on one thread each never wait for one another. Two or more
    engines each get a process (``llama_process``): two engines in one process answer one after
    the other (two requests on two engines took the sum of their times alone).
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
        # engines in one process would take turns; and an engine of raised priority (llama_nice, the
        # default) is in a process and session of its own, so its priority counts against the other
        # sessions' work too and raises nothing else of the task (llama_engine.raise_session_priority)
        opt["llama_process"] = len(engines) > 1 or engine_nice(opt) != 0


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
        group.add_argument("--llama-nice", type=int, default=DEFAULT_NICE, help=NICE_HELP)
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
            *engine_settings(opt, self.config), replica=int(opt.get("llama_replica") or 0),
            process=bool(opt.get("llama_process")), nice=engine_nice(opt)))

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

    def progress(self) -> float | None:
        """How far the engine has got (its CPU seconds): the per-turn world times a reply out when this
        stands still, not after a fixed wall time (:class:`~parlai_acute.worlds.per_turn.PerTurnDialogue`)."""
        return self.engine.progress()

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


def engine_nice(opt) -> int:
    """The niceness an opt asks for its engine's threads, validated (see ``--llama-nice``)."""
    return check_nice(opt.get("llama_nice"))


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
        raise UserError(f"context_length {context_length} is too small; use 64 or more (e.g. 1024)",
                        param="context_length")
    if config.max_new_tokens >= context_length // 2:
        raise UserError(f"max_new_tokens {config.max_new_tokens} leaves too little of context_length "
                        f"{context_length} for the conversation; lower it or raise context_length",
                        param=("max_new_tokens", "context_length"))
    if threads < 0:
        raise UserError(f"llama_threads {threads} is negative; use 0 (the machine's cores) or a positive number",
                        param="llama_threads")
    threads = threads or cores()
    if slots < 0:
        raise UserError(f"llama_slots {slots} is negative; use 0 (automatic) or a positive number",
                        param="llama_slots")
    if slots == 0:
        slots = min(16, 2 * max(1, int(opt.get("batchsize") or 1)) * config.n_candidates)
    kv_cache_type = opt.get("kv_cache_type") or "q8_0"
    if kv_cache_type not in KV_CACHE_TYPES:
        raise UserError(f"kv_cache_type {kv_cache_type!r} is not supported; use one of "
                        f"{', '.join(sorted(KV_CACHE_TYPES))}", param="kv_cache_type")
    return path, context_length, slots, threads, kv_cache_type

