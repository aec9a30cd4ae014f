"""Per-turn evaluation with models in the loop: one conversation, k models answering each turn.

A person chats; at every turn each of the ``k`` models of the dialogue proposes a reply, the
person judges them (:mod:`parlai_acute.mephisto_tasks.per_turn` shows and stores that), and
ONE reply continues the conversation for every model: each model conditions on the real
conversation (the person's turns and whichever reply continued it), never on its own
rejected candidates. That is the design of Liu et al. (per-turn, multi-model evaluation),
and what this module guarantees:

* :class:`ModelPool` loads each model once (any ParlAI agent, zoo model file or this package's
  wrappers) and gives every dialogue its own copies via ParlAI's ``share()``;
* :class:`PerTurnDialogue` feeds a turn to every model copy, gets the ``k`` replies
  *concurrently* (``batch_act`` on each copy in a shared thread pool, so a model never hears
  its own candidate), retries a model that fails or times out, then gives every copy the
  continuing reply with ``self_observe`` -- ParlAI's "observe your own utterance" hook, here
  used for the reply actually said, whoever wrote it.
No Mephisto here: the same object runs in a test, a script or the live task.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from parlai.core.message import Message

from parlai_acute.errors import UserError

BOT_ID = "bot"
HUMAN_ID = "human"


@dataclass
class Candidate:
    """One model's reply at one turn (``error`` set, ``text`` empty: the model failed)."""

    model: str
    text: str = ""
    latency: float = 0.0  # seconds from the person's message to this reply settled: every attempt, any queue
    attempts: int = 1
    generation_seconds: float = 0.0  # the last attempt's own time in the model (latency minus the rest)
    error: str = ""
    extra: dict = field(default_factory=dict)  # the act's decoding record, candidates of sample-and-rank, ...
    context_digest: str | None = None  # sha1 of the turns the model conditioned on (None: keeps no history)

    @property
    def ok(self) -> bool:
        return not self.error


def history_digest(texts: Sequence[str]) -> str:
    """sha1 of conversation turns, oldest first (whitespace-normalised)."""
    joined = "\x00".join(" ".join(t.split()) for t in texts)
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()


def _thread_safe(agent) -> bool:
    """Agents whose copies may act at the same time (their model is a thread-safe server or none)."""
    from parlai_acute.agents.generic_bot import GenericBotAgent
    from parlai_acute.agents.turn_agent import TurnTakingAgent

    return isinstance(agent, (TurnTakingAgent, GenericBotAgent))


class ModelPool:
    """Named models, each loaded once; :meth:`copy` gives a dialogue its own agent.

    ``models`` maps a name to a model string (:mod:`parlai_acute.worlds.model_spec`). Copies
    of a ParlAI agent that is not one of this package's wrappers act one at a time (a lock per
    model: ParlAI's torch agents share one module); different models always run in parallel.
    The pool's threads mostly wait (on llama.cpp's queue or an HTTP endpoint); there are many
    (``max_workers``) so every worker's requests reach the model's own queue at once: with 32,
    50 workers x 2 models behind a serving endpoint waited here, 2.4x the endpoint's own time.
    """

    def __init__(self, models: dict[str, str], datapath: str, *, timeout: float = 60.0, retries: int = 1,
                 max_workers: int = 256):
        from parlai_acute.agents.llama_cpp import share_engines
        from parlai_acute.worlds.model_spec import create_agent_checked, model_opt

        if not models:
            raise UserError("nothing to serve; name at least one in models, e.g. {'smol': "
                            "'parlai_acute.agents.llama_cpp:LlamaCppAgent'}", param="models")
        self.timeout, self.retries = float(timeout), int(retries)
        self.specs = dict(models)
        self.opts, self._masters, self._locks = {}, {}, {}
        for name, spec in models.items():
            self.opts[name] = model_opt(spec, datapath, what=f"model {name!r}", param=None)
        share_engines(self.opts.values())  # llama.cpp configurations: one engine per GGUF, the cores divided
        for name, opt in self.opts.items():
            agent = create_agent_checked(opt)
            self._masters[name] = agent
            self._locks[name] = None if _thread_safe(agent) else threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="per-turn")

    @property
    def names(self) -> list[str]:
        return list(self.specs)

    def copy(self, name: str):
        """A fresh agent of model ``name`` sharing the loaded weights/engine."""
        from parlai.core.agents import create_agent_from_shared

        if name not in self._masters:
            raise UserError(f"unknown model {name!r}; the models are {', '.join(self.names)}")
        return create_agent_from_shared(self._masters[name].share())

    def describe(self, name: str) -> dict:
        """What a report records of a model: its string, agent class and the options that matter."""
        opt = self.opts[name]
        keys = ("model", "model_file", "gguf", "inference", "temperature", "topp", "topk", "num_samples",
                "beam_size", "max_new_tokens", "repetition_filter", "persona", "system_prompt", "seed",
                "openai_base_url", "openai_model", "hf_model", "llama_threads", "llama_slots", "llama_replica",
                "llama_nice")
        return {"spec": self.specs[name], "agent": type(self._masters[name]).__name__,
                "options": {k: opt.get(k) for k in keys if opt.get(k) not in (None, "")}}

    def submit(self, name: str, fn, *args):
        lock = self._locks[name]

        def call():
            if lock is None:
                return fn(*args)
            with lock:
                return fn(*args)

        return self._pool.submit(call)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _act(agent, observation) -> tuple:
    """(reply, seconds): one reply without self-observation (``batch_act`` of one), or ``act``
    for agents without it; timed in the thread that runs it, so waiting in line is not counted."""
    started = time.monotonic()
    reply = None
    if hasattr(agent, "batch_act"):
        try:
            replies = agent.batch_act([observation])
        except NotImplementedError:
            replies = None
        if replies:
            reply = replies[0]
    if reply is None:
        reply = agent.act()
    return reply, time.monotonic() - started


def _reply_record(reply) -> tuple[str, dict]:
    reply = reply or {}
    text = str(reply.get("text") or "").strip()
    extra = {k: reply[k] for k in ("decoding", "candidates", "beam_texts") if k in reply}
    return text, extra


PROGRESS_POLL = 0.5  # seconds between looks at a model's progress while its reply is awaited


class _Attempt:
    """One request for a model's reply, and when it last showed progress.

    Why progress and not wall time: on a busy machine a generation that is working, only slowly, ran
    into the 60 s timeout and was asked again from scratch (a worker waited 106.9 s for a first turn,
    the abandoned generation still running beside its retry). A model whose agent has ``progress()``
    (this package's llama.cpp agent: the CPU seconds its engine has computed) times out only after
    ``timeout`` seconds in which that did not move -- a stalled or hung engine; one without it (an HTTP
    endpoint, a ParlAI agent) after ``timeout`` seconds of wall time, as before."""

    def __init__(self, future, number: int, probe):
        self.future, self.number, self.probe = future, number, probe
        self.started = self.last_progress = time.monotonic()
        self.seen = self._read()

    def _read(self):
        if self.probe is None:
            return None
        try:
            return self.probe()
        except Exception:  # a probe that fails says nothing: the wall clock decides
            return None

    def stalled(self, timeout: float) -> bool:
        """True once ``timeout`` seconds have passed without progress (without a probe: since the start)."""
        now = time.monotonic()
        if self.probe is not None:
            value = self._read()
            if value is not None and value != self.seen:
                self.seen, self.last_progress = value, now
        return now - self.last_progress >= timeout


class PerTurnDialogue:
    """One conversation between a person and the ``models`` of a set, judged turn by turn.

    ``contexts`` = (person's context, models' context), e.g. personas; ``opening`` = real
    utterances said on the models' side before the person speaks (a chitchat seed). Both are
    recorded as seed turns and never credited to a model.
    """

    def __init__(self, pool: ModelPool, models: Sequence[str], *, model_context: str = "",
                 opening: Sequence[str] = ()):
        self.pool, self.models = pool, list(models)
        if len(set(self.models)) != len(self.models):
            raise UserError(f"model set {self.models} names a model twice; give each model once per set")
        self.agents = {name: pool.copy(name) for name in self.models}
        self.history: list[dict] = []  # {"speaker": "human"|"bot", "text", "seed"?: True, "model"?: name}
        self.model_context = model_context
        if model_context:
            context = Message({"id": "context", "text": model_context, "episode_done": False})
            for agent in self.agents.values():
                agent.observe(context)
                # the context answered by nothing: speakers after it alternate normally
        for text in opening:
            self.continue_with(text, source="seed")

    # ------------------------------------------------------------------ one turn
    def candidates(self, human_text: str, on_ready: Callable[[int], None] | None = None,
                   on_retry: Callable[[str, int, str], None] | None = None) -> list[Candidate]:
        """Every model's reply to the person's message, produced concurrently, in model order.

        ``on_ready(n)`` is called (in this thread) each time a model is settled -- replied, or
        failed for good -- with how many are, so a page can show the wait's progress;
        ``on_retry(model, attempt, error)`` each time a model that failed or was too slow is asked
        again (``attempt``: the one starting now), so the wait can say why it is long. A candidate's
        ``latency`` is what the person waited for it: from this call to it settled, retries included.
        """
        began = time.monotonic()
        human_text = (human_text or "").strip()
        message = Message({"id": HUMAN_ID, "text": human_text, "episode_done": False})
        self.history.append({"speaker": HUMAN_ID, "text": human_text})
        observations = {name: agent.observe(Message(message)) for name, agent in self.agents.items()}
        digests = {name: self.context_digest(name) for name in self.models}
        pending = {name: self._attempt(name, observations[name], 1) for name in self.models}
        results: dict[str, Candidate] = {}
        while pending:
            now = time.monotonic()
            deadline = min(a.last_progress for a in pending.values()) + self.pool.timeout
            watched = any(a.probe is not None for a in pending.values())
            concurrent.futures.wait([a.future for a in pending.values()],
                                    return_when=concurrent.futures.FIRST_COMPLETED,
                                    timeout=max(0.0, min(deadline - now, PROGRESS_POLL if watched else deadline - now)))
            for name, a in list(pending.items()):
                if not a.future.done() and not a.stalled(self.pool.timeout):
                    continue
                del pending[name]
                try:
                    if not a.future.done():
                        raise concurrent.futures.TimeoutError
                    reply, seconds = a.future.result()
                    text, extra = _reply_record(reply)
                    if not text:
                        raise ValueError("the model returned an empty reply")
                    results[name] = Candidate(name, text, time.monotonic() - began, a.number, extra=extra,
                                              context_digest=digests[name], generation_seconds=seconds)
                except concurrent.futures.TimeoutError:
                    error = (f"no progress for {self.pool.timeout:g} s" if a.probe is not None
                             else f"no reply within {self.pool.timeout:g} s")
                except Exception as exc:  # the model's own failure: recorded, never fatal to the dialogue
                    error = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
                if name in results:
                    pass
                elif a.number <= self.pool.retries:
                    pending[name] = self._attempt(name, observations[name], a.number + 1)
                    if on_retry is not None:
                        on_retry(name, a.number + 1, error)
                    continue
                else:
                    results[name] = Candidate(name, "", time.monotonic() - began, a.number, error=error,
                                              context_digest=digests[name],
                                              generation_seconds=time.monotonic() - a.started)
                if on_ready is not None:
                    on_ready(len(results))
        return [results[name] for name in self.models]

    def replay(self, human_text: str, reply: str, *, source: str) -> None:
        """Rebuild a stored turn without asking the models again (a dialogue picked up anew)."""
        self.hear(human_text)
        self.continue_with(reply, source=source)

    def hear(self, human_text: str) -> None:
        """The person's message, heard by every model without asking for replies (a stored turn
        whose candidates are already made)."""
        human_text = (human_text or "").strip()
        self.history.append({"speaker": HUMAN_ID, "text": human_text})
        for agent in self.agents.values():
            agent.observe(Message({"id": HUMAN_ID, "text": human_text, "episode_done": False}))

    def _start(self, name: str, observation):
        return self.pool.submit(name, _act, self.agents[name], observation)

    def _attempt(self, name: str, observation, number: int) -> "_Attempt":
        return _Attempt(self._start(name, observation), number, getattr(self.agents[name], "progress", None))

    def continue_with(self, text: str, *, source: str) -> None:
        """``text`` continues the conversation: every model hears it as its own turn.

        ``source`` is the model that wrote it, ``"human"`` for a reply the person wrote
        (SATA-User) or ``"seed"`` for an opening utterance.
        """
        text = (text or "").strip()
        if not text:
            return
        entry = {"speaker": BOT_ID, "text": text, "source": source}
        if source == "seed":
            entry["seed"] = True
        self.history.append(entry)
        said = Message({"id": BOT_ID, "text": text, "episode_done": False})
        for agent in self.agents.values():
            if not hasattr(agent, "self_observe"):
                continue
            if getattr(agent, "observation", None) is None and source == "seed":
                # nothing observed yet (the models speak first): ParlAI agents need an observation
                agent.observe(Message({"id": HUMAN_ID, "text": "__SILENCE__", "episode_done": False}))
            agent.self_observe(said)

    def context_digest(self, name: str) -> str | None:
        """A fingerprint of :meth:`model_history` (recorded per candidate: proof of what each model saw)."""
        try:
            return history_digest(self.model_history(name))
        except TypeError:
            return None

    def model_history(self, name: str) -> list[str]:
        """The turns model ``name`` conditions on now, oldest first (for checks and tests).

        This package's wrappers keep ``(role, text)`` turns; ParlAI's torch agents (zoo
        models) keep ``history.history_strings``; other agents keep no history.
        """
        agent = self.agents[name]
        turns = getattr(agent, "_turns", None)
        if turns is not None:
            return [text for _, text in turns]
        history = getattr(agent, "history", None)
        if history is not None and hasattr(history, "history_strings"):
            return [s for s in history.history_strings if s != "__SILENCE__"]
        raise TypeError(f"{type(agent).__name__} keeps no conversation history to read")
