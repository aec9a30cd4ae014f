"""llama.cpp engines for :mod:`parlai_acute.agents.llama_cpp`, without ParlAI (the engine
process imports only this, ``xllamacpp`` and the decoding helpers: no torch, a light process).

:class:`LlamaEngine` is an in-process ``xllamacpp.Server`` with parallel slots;
:class:`ProcessEngine` is the same engine in a child process (``python -m
parlai_acute.agents.llama_engine SETTINGS``), so several engines can generate at once.
"""
from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Sequence

from parlai_acute.agents import decoding
from parlai_acute.errors import UserError
from parlai_acute.parallel import cores

KV_CACHE_TYPES = {"f16": "GGML_TYPE_F16", "q8_0": "GGML_TYPE_Q8_0"}
DEFAULT_NICE = -10  # the niceness of an engine's compute threads: see raised_priority
#: what --llama-nice means, wherever an engine starts (a model agent, ``parlai-acute serve``)
NICE_HELP = ("niceness of llama.cpp's compute threads (-20..19; default %(default)s: ahead of other CPU-bound work, so "
             "a busy machine does not stall the engine's threads at their barriers; needs root or CAP_SYS_NICE, else "
             "one note and the engine runs unchanged; 0 leaves it as the caller's)")


def check_nice(nice) -> int:
    """A niceness for an engine's threads, or a one-line error naming ``llama_nice``."""
    nice = DEFAULT_NICE if nice is None else int(nice)
    if not -20 <= nice <= 19:
        raise UserError(f"llama_nice {nice} is not a niceness; use -20..19 (0: the caller's own, "
                        f"{DEFAULT_NICE}: the default)", param="llama_nice")
    return nice


class EngineDied(RuntimeError):
    """An engine process ended without being closed (crashed, killed): :class:`ProcessEngine` starts a
    fresh one for the request, within its restart bound."""

def check_model_file(path: str) -> str:
    """Return the absolute path of a readable GGUF file, else raise a one-line UserError."""
    path = os.path.abspath(os.path.expanduser(str(path)))
    if not os.path.exists(path):
        raise UserError(f"GGUF model file {path} does not exist; pass gguf=PATH.gguf "
                        "(or omit it for the embedded SmolLM2)", param="gguf")
    if os.path.isdir(path):
        raise UserError(f"gguf {path} is a directory, not a model; pass the .gguf file inside it", param="gguf")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise UserError(f"cannot read GGUF model file {path}: {exc.strerror}; check its permissions") from None
    if magic != b"GGUF":
        raise UserError(f"{path} is not a GGUF model (no GGUF header); pass a .gguf file made for llama.cpp")
    return path


_NICE_NOTED: set = set()


@contextlib.contextmanager
def raised_priority(nice: int):
    """Threads started inside this block run at niceness ``nice`` (lower = more CPU when cores are
    contended); the calling thread gets its own niceness back at the end.

    Why: llama.cpp's threads meet at a barrier after every layer, so on cores shared with other
    CPU-bound work one descheduled thread stalls the others, and a lone SmolLM2 on 2 cores beside two
    busy processes took many times its time alone (a worker waited 106.9 s for a first turn). At
    niceness -10 the scheduler gives each engine thread about 90% of a core it shares with a
    niceness-0 process (CFS weights 9548 against 1024), so the generation keeps its pace; when the
    engine is idle its threads sleep and take nothing from anyone. Linux niceness is per thread and
    inherited by the threads a thread starts: the llama.cpp server started here (its loop and the
    compute threads it starts) gets the raised priority, the rest of the task process does not.
    Lowering niceness needs CAP_SYS_NICE (root has it): without it the engine runs at the caller's
    niceness and one line says so, once per process. ``nice=0`` changes nothing."""
    nice = int(nice)
    if not nice or not hasattr(os, "setpriority"):
        yield
        return
    tid = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, tid)
    try:
        os.setpriority(os.PRIO_PROCESS, tid, max(-20, min(19, nice)))
    except OSError as exc:  # PermissionError without CAP_SYS_NICE
        if nice not in _NICE_NOTED:
            _NICE_NOTED.add(nice)
            print(f"note: llama.cpp engine left at niceness {before}, not {nice} ({exc.strerror or exc}: lowering "
                  "niceness needs root or CAP_SYS_NICE); on a busy machine its replies may be slower",
                  file=sys.stderr, flush=True)
        yield
        return
    try:
        yield
    finally:
        os.setpriority(os.PRIO_PROCESS, tid, before)  # raising niceness back is always permitted


def raise_session_priority(nice: int) -> None:
    """Give this process's scheduling group (its Linux autogroup: its session) niceness ``nice``.

    Why, beside :func:`raised_priority`: with ``kernel.sched_autogroup_enabled`` (the default of most
    distributions for processes outside a systemd service) the CPU is first shared out fairly between
    sessions, and niceness counts only inside one; a lone SmolLM2 on a machine where other sessions
    run CPU-bound work got its session's share, split between its own threads, whatever their
    niceness. A :class:`ProcessEngine` runs in a session of its own, so this raises the engine alone,
    never the task. Without the permission (or without autogroups) it does nothing: the engine's
    threads are still raised within their session where that is allowed."""
    if not nice or not os.path.exists("/proc/self/autogroup"):
        return
    try:
        with open("/proc/self/autogroup", "w") as fh:
            fh.write(str(max(-20, min(19, int(nice)))))
    except OSError:
        pass  # raised_priority says, once, when niceness cannot be lowered


def cpu_seconds(pid: int | str = "self", tids=None) -> float | None:
    """CPU seconds (nanosecond resolution) the threads ``tids`` of process ``pid`` (all of them if
    None) have run so far: how the per-turn world tells a slow generation from a stalled one
    (:meth:`LlamaEngine.progress`). None where /proc has no ``schedstat`` (not Linux)."""
    root = f"/proc/{pid}/task"
    try:
        names = os.listdir(root) if tids is None else tids
    except OSError:
        return None
    total, found = 0, False
    for tid in names:
        try:
            with open(f"{root}/{tid}/schedstat") as fh:
                total += int(fh.read().split()[0])
            found = True
        except (OSError, ValueError, IndexError):  # a thread that has ended
            continue
    return total / 1e9 if found else None


def _thread_ids() -> set:
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


def server_params(model_path: str, context_length: int, slots: int, threads: int, kv_cache_type: str = "q8_0"):
    """llama.cpp server settings for a checked model file: ``slots`` parallel conversations of
    ``context_length`` tokens each, ``threads`` threads, quiet. Every engine and ``parlai-acute serve``
    load a model with these."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model_path
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
    return params


def start_server(params):
    """The llama.cpp server of ``params``, loaded; a file llama.cpp cannot load is one line."""
    import xllamacpp

    try:
        return xllamacpp.Server(params)
    except Exception as exc:  # llama.cpp reports a bad file only as a failed load
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise UserError(f"llama.cpp could not load {params.model.path}: {message}; "
                        "pass a GGUF chat model that llama.cpp supports") from None


def keep_until_exit(server):
    """``server``, never destroyed while the process lives (the kernel frees it at exit).

    xllamacpp's ``Server`` destructor joins the thread of its HTTP listener, which sits in
    ``accept()`` and never returns: dropping an in-process engine's server (the pool closed, the
    launch that found nothing to launch) hung the process for good -- a relaunch of a stopped task
    under ``nohup ... &`` printed "nothing to launch" and never exited. One extra reference, never
    released, keeps the destructor from running at all."""
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(server))
    return server


def http_server(model_path: str, host: str = "127.0.0.1", port: int = 0, slots: int = 4,
                context_length: int = 2048, threads: int = 0, kv_cache_type: str = "q8_0",
                api_keys: Sequence[str] = (), nice: int = 0) -> tuple[object, str]:
    """(server, base URL ending in /v1): llama.cpp's own OpenAI-compatible HTTP server for a GGUF
    model on ``host``:``port`` (0: a free port), so any client -- ``OpenAICompatAgent``, a judge, a
    notebook -- uses one loaded model. The model is named after its file in ``/v1/models``. Its
    threads run at niceness ``nice`` (:func:`raised_priority`; 0: the caller's). Dropping the server
    object stops it."""
    import errno
    import socket

    path = check_model_file(model_path)
    if not 0 <= int(port) <= 65535:
        raise UserError(f"port={port} is not a port number; use 1-65535, or 0 for a free one")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:  # a one-line refusal, not llama.cpp's abort
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, int(port)))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UserError(f"port {port} on {host} is already in use; pass another port "
                                f"(0 picks a free one) or stop what is using it") from None
            raise UserError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); pass a host "
                            f"of this machine (127.0.0.1 for this machine only)") from None
    params = server_params(path, context_length, slots, threads or cores(), kv_cache_type)
    params.hostnames = [host]
    params.port = int(port)
    params.model_alias = {os.path.basename(path).removesuffix(".gguf")}
    if api_keys:
        params.api_keys = list(api_keys)
    with raised_priority(check_nice(nice)):
        server = start_server(params)
    return server, str(server.listening_address).rstrip("/") + "/v1"


class LlamaEngine:
    """One GGUF model loaded in an in-process llama.cpp server with parallel slots.

    Thread-safe: every call of :meth:`chat` may come from any thread; requests beyond
    the number of slots wait in llama.cpp's queue.
    """

    def __init__(self, model_path: str, context_length: int = 1024, slots: int = 1, threads: int = 1,
                 kv_cache_type: str = "q8_0", nice: int = 0):
        self.model_path = check_model_file(model_path)
        self.context_length, self.slots, self.threads, self.nice = context_length, slots, threads, int(nice)
        params = server_params(self.model_path, context_length, slots, threads, kv_cache_type)
        before = _thread_ids()
        with raised_priority(self.nice):
            self.server = keep_until_exit(start_server(params))
        # the server's own threads (its loop computes as llama.cpp's thread 0): their CPU time is the
        # engine's progress, whatever the rest of the process does
        self._engine_tids = sorted(_thread_ids() - before)
        self._pool = ThreadPoolExecutor(max_workers=max(4, 2 * slots), thread_name_prefix="llama")

    def progress(self) -> float | None:
        """CPU seconds the engine has computed so far (None: not measurable here). It grows while the
        engine works on any request, however slowly the machine lets it, and stands still when it is
        stalled: a caller times out on no progress rather than on wall time."""
        return cpu_seconds("self", self._engine_tids) if self._engine_tids else None

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
                raise UserError(f"the system prompt and persona do not fit in context_length "
                                f"{self.context_length}; shorten them or raise context_length",
                                param="context_length")
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


class _EngineLink:
    """The parent's end of an engine process: pending requests by id, and the reader thread that
    settles them. Holds no reference to the :class:`ProcessEngine`, so dropping the engine stops it."""

    def __init__(self, proc: subprocess.Popen, name: str, generations: collections.deque):
        self.proc, self.name = proc, name
        self.pending: dict[int, Future] = {}
        self.lock = threading.Lock()
        self.ids = itertools.count()
        self.dead = ""  # why the process cannot answer any more (one line)
        self.closed = False  # closed on purpose: never restarted
        self.generations = generations  # (started, finished) wall clock, kept across restarts
        threading.Thread(target=self._read, name=f"llama-engine-{proc.pid}", daemon=True).start()

    def send(self, request: dict) -> Future:
        future: Future = Future()
        with self.lock:
            if self.dead:
                raise (RuntimeError if self.closed else EngineDied)(self.dead)
            key = next(self.ids)
            self.pending[key] = future
            try:
                self.proc.stdin.write(json.dumps({"id": key, "request": request}).encode() + b"\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                del self.pending[key]
                raise EngineDied(self._exited()) from None
        return future

    def _read(self) -> None:
        try:
            for line in self.proc.stdout:
                try:
                    answer = json.loads(line)
                    key = answer["id"]
                except (ValueError, KeyError, TypeError):
                    # a line cut short (killed mid-write) or not ours: the process cannot be trusted
                    # with the answers it owes; end it, so they fail (and are sent again) below
                    self.proc.kill()
                    break
                with self.lock:
                    future = self.pending.pop(key, None)
                if future is None:
                    continue
                if "response" in answer:
                    self.generations.append((answer["started"], answer["finished"]))
                    future.set_result(answer["response"])
                else:
                    future.set_exception(UserError(answer["error"], param=tuple(answer.get("params", ())))
                                         if answer.get("user") else RuntimeError(answer["error"]))
        finally:  # however the loop ends, no request is left waiting for ever
            self._fail_pending()

    def _fail_pending(self) -> None:
        message = self._exited()
        with self.lock:
            self.dead, pending, self.pending = self.dead or message, self.pending, {}
        for future in pending.values():
            future.set_exception((RuntimeError if self.closed else EngineDied)(self.dead))

    def _exited(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        how = ("closed its pipe" if code is None else f"was killed by {signal.Signals(-code).name}" if code < 0
               else f"exited with code {code}")
        return f"the llama.cpp engine process of {self.name} (pid {self.proc.pid}) {how}"

    def stop(self) -> None:
        """Close the pipe (the process exits at end of input) and reap it; SIGKILL if it hangs."""
        with self.lock:
            self.closed = True
            self.dead = self.dead or f"the llama.cpp engine of {self.name} was closed"
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class ProcessEngine(LlamaEngine):
    """A :class:`LlamaEngine` in its own process, so several engines generate at the same time.

    Why: two ``xllamacpp`` engines in ONE process answer one after the other (measured: two
    requests on two one-thread engines took the sum of their times alone, although the GIL is
    released), so the per-turn task's configurations could not use the second core. Each
    engine here is ``python -m parlai_acute.agents.llama_engine SETTINGS`` speaking JSON lines on
    its stdin/stdout (one request and one answer per line, answered out of order by id). The
    process exits at the end of its input -- when the engine is closed or dropped, and when the
    task's process ends in any way (SIGINT, SIGTERM, even SIGKILL), since the kernel closes the
    pipe -- and ignores SIGINT itself, so Ctrl-C stops the task, not its models mid-turn.

    A crashed process (out of memory, killed) is replaced: the requests it was answering and every
    later one go to a fresh process, started once and logged in one line, so one crash costs a
    worker a wait, not the rest of the task. A model that keeps crashing is not restarted forever:
    after ``max_restarts`` restarts within ``restart_window`` seconds every request fails with one
    line saying so (a crash that comes back is a memory or model-file problem a restart hides).
    """

    max_restarts = 3
    restart_window = 600.0

    def __init__(self, model_path: str, context_length: int = 1024, slots: int = 1, threads: int = 1,
                 kv_cache_type: str = "q8_0", nice: int = 0):
        self.model_path = check_model_file(model_path)
        self.context_length, self.slots, self.threads, self.nice = context_length, slots, threads, int(nice)
        self._settings = {"model_path": self.model_path, "context_length": context_length, "slots": slots,
                          "threads": threads, "kv_cache_type": kv_cache_type, "nice": self.nice}
        self._generations: collections.deque = collections.deque(maxlen=4096)
        self._restarts: collections.deque = collections.deque()  # monotonic times of recent restarts
        self._failed = ""  # set once the restart bound is reached: every request fails with it
        self._restart_lock = threading.Lock()
        self._links = [self._spawn()]  # the current link, in a list the finalizer shares (no reference to self)
        self._stop = weakref.finalize(self, _stop_current, self._links)
        self._pool = ThreadPoolExecutor(max_workers=max(4, 2 * slots), thread_name_prefix="llama")

    def _spawn(self) -> "_EngineLink":
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        # a session of its own: its own scheduling group, whose priority it may raise without raising the
        # task's (raise_session_priority); it still ends with the task, at the end of its input
        proc = subprocess.Popen([sys.executable, "-m", "parlai_acute.agents.llama_engine",
                                 json.dumps(self._settings)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                start_new_session=True)
        first = proc.stdout.readline()
        try:
            ready = json.loads(first) if first.strip() else {}
        except ValueError:
            ready = None
        if not isinstance(ready, dict) or "ready" not in ready:
            if not isinstance(ready, dict):  # it said something that is not ours: never leave it running
                proc.kill()
                ready = {}
            proc.stdin.close()
            code = proc.wait()
            raise UserError(ready.get("error") or f"the llama.cpp engine process for {self.model_path} exited "
                            f"with code {code} while loading; run it alone to see why (memory, the model file)",
                            param=tuple(ready.get("params", ())) if ready.get("error") else None)
        self.pid = proc.pid
        return _EngineLink(proc, os.path.basename(self.model_path), self._generations)

    def _revive(self, dead: "_EngineLink", why: str) -> None:
        """Replace the crashed process ``dead`` (once, however many requests saw it die), or raise the
        one-line error once the restart bound is reached."""
        with self._restart_lock:
            if self._links[0] is not dead:
                return  # another request has already restarted it
            if dead.closed:  # closed while this request saw it die: nothing to restart
                raise RuntimeError(dead.dead)
            if self._failed:
                raise RuntimeError(self._failed)
            now = time.monotonic()
            while self._restarts and now - self._restarts[0] > self.restart_window:
                self._restarts.popleft()
            if len(self._restarts) >= self.max_restarts:
                self._failed = (f"{why}; it crashed {len(self._restarts) + 1} times within "
                                f"{self.restart_window / 60:g} min, so it is not restarted again -- check memory "
                                "and the model file, then restart the task")
                raise RuntimeError(self._failed)
            self._restarts.append(now)
            self._links[0] = self._spawn()
            # one line on stderr, as the task's own lines (a logging handler may wrap it over several)
            print(f"{why}; restarted it as pid {self.pid} (restart {len(self._restarts)} of at most "
                  f"{self.max_restarts} in {self.restart_window / 60:g} min)", file=sys.stderr, flush=True)

    def progress(self) -> float | None:
        """CPU seconds of the engine process (every thread; see :meth:`LlamaEngine.progress`); a
        restarted process starts again from 0, which is a change, hence progress too."""
        return cpu_seconds(self._links[0].proc.pid)

    @property
    def generations(self) -> list:
        """(started, finished) wall-clock times of this engine's recent generations, as it timed them."""
        return list(self._generations)

    def chat(self, request: dict) -> dict:
        while True:
            link = self._links[0]
            try:
                return link.send(request).result()
            except EngineDied as exc:
                self._revive(link, str(exc))

    def close(self) -> None:
        super().close()
        with self._restart_lock:  # never a restart after the close
            self._stop()


def _stop_current(links: list) -> None:
    links[0].stop()


def serve(settings_json: str) -> int:
    """The engine process: load one :class:`LlamaEngine`, answer JSON-line requests from stdin
    (concurrently: llama.cpp batches them in its slots) until stdin ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the task decides
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything llama.cpp prints goes to stderr, never into the protocol
    settings = json.loads(settings_json)
    raise_session_priority(int(settings.get("nice") or 0))
    try:
        engine = LlamaEngine(**settings)
    except UserError as exc:
        out.write(json.dumps({"error": str(exc), "params": exc.params}).encode() + b"\n")
        out.flush()
        return 2
    lock = threading.Lock()
    out.write(json.dumps({"ready": os.getpid()}).encode() + b"\n")
    out.flush()

    def answer(key: int, request: dict) -> None:
        started = time.time()
        try:
            message = {"id": key, "response": engine.chat(request), "started": started, "finished": time.time()}
        except Exception as exc:  # sent back as one line; the engine keeps serving
            message = {"id": key, "error": " ".join(str(exc).split()) or type(exc).__name__,
                       "user": isinstance(exc, UserError), "params": getattr(exc, "params", ())}
        with lock:
            out.write(json.dumps(message).encode() + b"\n")
            out.flush()

    workers = ThreadPoolExecutor(max_workers=64, thread_name_prefix="llama-serve")
    for line in sys.stdin.buffer:
        task = json.loads(line)
        workers.submit(answer, task["id"], task["request"])
    os._exit(0)  # end of input: the task is gone or closed us; generations in flight have no reader


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


if __name__ == "__main__":  # an engine process of ProcessEngine
    sys.exit(serve(sys.argv[1]))
