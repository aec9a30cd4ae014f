"""Token log-probabilities of given replies from a GGUF model, by llama.cpp's batched prompt
evaluation: the engine under perplexity and hits@1/N for GGUF files.

Why not the llama.cpp server the other engines use: its endpoints return log-probabilities
only of the tokens it samples, never of a given text (no ``echo``). Why not the Hugging Face
wrapper: it dequantises the whole GGUF into float32 torch weights (about 30 s to load
SmolLM2-135M) and runs at about 100 tokens/s. So this module calls llama.cpp's C API itself,
through :mod:`ctypes`, from the library the ``xllamacpp`` wheel already ships (no second
build of llama.cpp, nothing downloaded):

* the context is evaluated once, in batches, in sequence 0; every candidate reply gets a
  sequence of its own that shares the context's key/value cells (``llama_memory_seq_cp``
  on a unified cache: no copy), and all candidates of a context go in one batch, each token
  returning its logits;
* the next context keeps the cells of the longest prefix it shares with the last one
  (ConvAI2's contexts are successive turns of the same dialogues);
* prompts and replies are formatted and tokenised exactly as the Hugging Face wrapper does
  (:class:`parlai_acute.agents.chat_format.ChatFormat`, llama.cpp's tokenizer), so the two
  engines score the same token sequences. On a float32 GGUF they agree to about 5e-4 nats
  per token (llama.cpp keeps the cache in float16); on a quantised GGUF llama.cpp also
  quantises the activations it multiplies with quantised weights (8 bits), which moves the
  numbers by up to about 0.1 nats per token for 4-bit SmolLM2 -- the engine's arithmetic,
  the same as when it generates.

Only the few ``llama_context_params`` fields set here are written into llama.cpp's own
defaults; their places are checked against the defaults llama.cpp documents (and the unified
cache against ``llama_n_ctx_seq``) so that another build fails with one line, never silently.
"""
from __future__ import annotations

import ctypes
import struct
import threading
from typing import Sequence

import numpy as np

from parlai_acute.agents.chat_format import ChatFormat
from parlai_acute.errors import UserError
from parlai_acute.parallel import threads_of

CONTEXT_CELLS = 2048  # key/value cells: the context and all candidates of one group (float32: 94 MB for SmolLM2)
BATCH = 256  # tokens per llama_decode; also the rows of logits llama.cpp keeps (256 x vocab floats)
SEQUENCES = 64  # sequence ids: 0 for the context, the rest for candidates decoded together


class _Params(ctypes.Structure):
    """llama.cpp's parameter structs, passed by value as opaque bytes (larger than any of them:
    the callee reads only its own size, and they are the last argument of every call here)."""

    _fields_ = [("raw", ctypes.c_ubyte * 1024)]


class _Batch(ctypes.Structure):
    _fields_ = [("n_tokens", ctypes.c_int32), ("token", ctypes.POINTER(ctypes.c_int32)),
                ("embd", ctypes.POINTER(ctypes.c_float)), ("pos", ctypes.POINTER(ctypes.c_int32)),
                ("n_seq_id", ctypes.POINTER(ctypes.c_int32)),
                ("seq_id", ctypes.POINTER(ctypes.POINTER(ctypes.c_int32))), ("logits", ctypes.POINTER(ctypes.c_int8))]


_LOG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_QUIET = _LOG_CALLBACK(lambda level, text, data: None)  # kept alive for the process
_LIB = None
_LIB_LOCK = threading.Lock()


def _library():
    """llama.cpp's C API from the xllamacpp extension module, typed once per process."""
    global _LIB
    with _LIB_LOCK:
        if _LIB is not None:
            return _LIB
        import xllamacpp

        lib = ctypes.CDLL(xllamacpp.xllamacpp.__file__)
        vp, i32, u32 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32
        signatures = {
            "llama_backend_init": (None,), "llama_log_set": (None, _LOG_CALLBACK, vp),
            "llama_model_default_params": (_Params,), "llama_context_default_params": (_Params,),
            "llama_model_load_from_file": (vp, ctypes.c_char_p, _Params),
            "llama_init_from_model": (vp, vp, _Params), "llama_model_free": (None, vp), "llama_free": (None, vp),
            "llama_model_get_vocab": (vp, vp), "llama_vocab_n_tokens": (i32, vp),
            "llama_vocab_bos": (i32, vp), "llama_vocab_eos": (i32, vp),
            "llama_vocab_get_text": (ctypes.c_char_p, vp, i32),
            "llama_model_chat_template": (ctypes.c_char_p, vp, ctypes.c_char_p),
            "llama_model_n_ctx_train": (i32, vp), "llama_model_has_encoder": (ctypes.c_bool, vp),
            "llama_n_ctx": (u32, vp), "llama_n_ctx_seq": (u32, vp),
            "llama_set_n_threads": (None, vp, i32, i32),
            "llama_tokenize": (i32, vp, ctypes.c_char_p, i32, ctypes.POINTER(i32), i32, ctypes.c_bool, ctypes.c_bool),
            "llama_batch_init": (_Batch, i32, i32, i32), "llama_batch_free": (None, _Batch),
            "llama_decode": (i32, vp, _Batch), "llama_get_logits": (ctypes.POINTER(ctypes.c_float), vp),
            "llama_get_memory": (vp, vp), "llama_memory_clear": (None, vp, ctypes.c_bool),
            "llama_memory_seq_rm": (ctypes.c_bool, vp, i32, i32, i32),
            "llama_memory_seq_cp": (None, vp, i32, i32, i32, i32),
        }
        for name, (restype, *argtypes) in signatures.items():
            try:
                function = getattr(lib, name)
            except AttributeError:
                raise RuntimeError(f"the installed xllamacpp has no {name} in its llama.cpp; reinstall the version "
                                   "pinned in requirements/lock.txt") from None
            function.restype, function.argtypes = restype, argtypes
        lib.llama_backend_init()
        _LIB = lib
        return lib


def _context_params(lib, n_ctx: int, n_batch: int, n_seq: int) -> _Params:
    """llama.cpp's default context parameters with the sizes set and the unified cache on."""
    params = lib.llama_context_default_params()
    raw = params.raw
    # n_ctx, n_batch, n_ubatch, n_seq_max open the struct; llama.cpp's defaults are 512, 2048, 512, 1
    if struct.unpack_from("<4I", raw, 0) != (512, 2048, 512, 1):
        raise RuntimeError("the installed xllamacpp's llama_context_params do not start as llama.h documents; "
                           "reinstall the version pinned in requirements/lock.txt")
    struct.pack_into("<4I", raw, 0, n_ctx, n_batch, n_batch, n_seq)
    # the booleans close the struct: embeddings=false, offload_kqv, no_perf, op_offload, swa_full=true,
    # kv_unified=false; they follow type_k/type_v (F16, F16) and two pointers
    flags = bytes(raw).find(bytes([0, 1, 1, 1, 1, 0]), 96)
    if flags < 0:
        raise RuntimeError("cannot find kv_unified in the installed xllamacpp's llama_context_params; "
                           "reinstall the version pinned in requirements/lock.txt")
    raw[flags + 5] = 1
    # type_k, type_v (GGML_TYPE_F16 = 1 by default) are the int32 pair 32 bytes before the booleans
    # (the abort callback, its data and one more pointer between); float32 (0) keeps the cache exact
    kv = flags - 32
    if struct.unpack_from("<2i", raw, kv) != (1, 1):
        raise RuntimeError("cannot find type_k/type_v in the installed xllamacpp's llama_context_params; "
                           "reinstall the version pinned in requirements/lock.txt")
    struct.pack_into("<2i", raw, kv, 0, 0)
    # rope_scaling_type, pooling_type, attention_type, flash_attn_type follow the thread counts, all -1
    # (unspecified, auto); flash attention off (0): llama.cpp's CPU kernel accumulates in float16
    enums = bytes(raw).find(b"\xff" * 16, 16)
    if enums < 0 or enums % 4:
        raise RuntimeError("cannot find flash_attn_type in the installed xllamacpp's llama_context_params; "
                           "reinstall the version pinned in requirements/lock.txt")
    struct.pack_into("<i", raw, enums + 12, 0)
    return params


class LlamaScorer(ChatFormat):
    """Log-probabilities of replies after a context, for one GGUF causal model (thread-safe).

    ``score_replies`` has the signature and results of
    :meth:`parlai_acute.agents.hf_transformers.HfModel.score_replies`. ``threads`` CPU threads
    (one by default, as the Hugging Face wrapper: on a shared machine one-thread engines do not
    wait for each other's descheduled threads; 0: the machine's cores).
    """

    def __init__(self, path: str, threads: int = 1, fmt: str = "auto", context_cells: int = CONTEXT_CELLS):
        from parlai_acute.agents.llama_engine import check_model_file

        self.path = check_model_file(path)
        threads = threads_of(threads, "hf_threads")
        lib = self.lib = _library()
        lib.llama_log_set(_QUIET, None)  # llama.cpp would print every tensor it loads
        self.model = lib.llama_model_load_from_file(self.path.encode(), lib.llama_model_default_params())
        if not self.model:
            raise UserError(f"llama.cpp could not load {self.path}; pass a GGUF model that llama.cpp supports")
        self.ctx = None
        self.batch = None
        if lib.llama_model_has_encoder(self.model):
            raise UserError(f"{self.path} is an encoder-decoder model; llama.cpp scores causal models only")
        self.vocab = lib.llama_model_get_vocab(self.model)
        self.n_vocab = lib.llama_vocab_n_tokens(self.vocab)
        train = lib.llama_model_n_ctx_train(self.model)
        # the prompt's budget is the model's own context, as the Hugging Face wrapper's (its config's
        # positions): the same turns are kept, so the same numbers come out
        self.max_positions = train if train > 0 else context_cells
        self.threads = threads
        self._make_context(min(context_cells, self.max_positions))
        self.batch = lib.llama_batch_init(BATCH, 0, 1)
        self.lock = threading.Lock()
        bos, eos = lib.llama_vocab_bos(self.vocab), lib.llama_vocab_eos(self.vocab)
        self.eos_id = eos if eos >= 0 else None
        self._special_tokens = {"bos_token": self._text(bos), "eos_token": self._text(eos)}
        template = lib.llama_model_chat_template(self.model, None)
        self.chat_template = self._choose_template(template.decode() if template else None, fmt)
        self._end_ids, self._stop_text = self._end_of_turn()

    def _make_context(self, cells: int) -> None:
        """A context of ``cells`` key/value cells (the old one, if any, freed): the prompt and every
        candidate decoded beside it must fit."""
        lib = self.lib
        if self.ctx:
            lib.llama_free(self.ctx)
            self.ctx = None
        self._cached: list = []  # the tokens whose cells sequence 0 holds (a new context holds none)
        self.cells = cells
        self.ctx = lib.llama_init_from_model(self.model, _context_params(lib, cells, BATCH, SEQUENCES))
        if not self.ctx:
            raise UserError(f"llama.cpp could not make a context of {cells} tokens for {self.path}")
        if lib.llama_n_ctx_seq(self.ctx) != lib.llama_n_ctx(self.ctx):
            raise RuntimeError("llama.cpp did not take the unified key/value cache; reinstall the xllamacpp "
                               "version pinned in requirements/lock.txt")
        lib.llama_set_n_threads(self.ctx, self.threads, self.threads)
        self.memory = lib.llama_get_memory(self.ctx)

    def _fit(self, prompt_length: int, targets: list) -> None:
        """Grow the cache (doubling, up to the model's context) when the prompt and the longest reply
        do not fit it: a reply of a few thousand tokens is scored as the Hugging Face wrapper scores
        it, not refused by a full cache. Longer than the model's context: a one-line error."""
        needed = prompt_length + max((len(t) - 1 for t in targets), default=0)
        if needed <= self.cells:
            return
        if needed > self.max_positions:
            raise UserError(f"a reply of {max(len(t) for t in targets)} tokens after a prompt of {prompt_length} "
                            f"does not fit {self.path}'s context of {self.max_positions} tokens; leave that reply "
                            f"out or shorten it")
        cells = self.cells
        while cells < needed:
            cells *= 2
        self._make_context(min(cells, self.max_positions))

    def __del__(self):
        lib = getattr(self, "lib", None)
        if lib is None:
            return
        if getattr(self, "batch", None) is not None:
            lib.llama_batch_free(self.batch)
        if getattr(self, "ctx", None):
            lib.llama_free(self.ctx)
        if getattr(self, "model", None):
            lib.llama_model_free(self.model)

    # ------------------------------------------------------------------ tokenizer (for ChatFormat)

    def _text(self, token: int):
        return self.lib.llama_vocab_get_text(self.vocab, token).decode("utf-8", "replace") if token >= 0 else None

    def _special(self) -> dict:
        return dict(self._special_tokens, unk_token=None, pad_token=None, sep_token=None, cls_token=None)

    def _tokenize(self, text: str, add_special: bool) -> list:
        data = text.encode("utf-8")
        size = len(data) + 8
        out = (ctypes.c_int32 * size)()
        n = self.lib.llama_tokenize(self.vocab, data, len(data), out, size, add_special, True)
        if n < 0:  # more tokens than bytes cannot happen with the room above, but llama.cpp says how many
            size = -n
            out = (ctypes.c_int32 * size)()
            n = self.lib.llama_tokenize(self.vocab, data, len(data), out, size, add_special, True)
        return list(out[:n])

    def describe(self) -> dict:
        return {"model": self.path, "tokenizer": "llama.cpp", "vocab": int(self.n_vocab), "engine": "llama.cpp"}

    # ------------------------------------------------------------------ log-probabilities

    def score_reply(self, context: Sequence, reply: str, system: str = "", with_end: bool = False):
        return self.score_replies(context, [reply], system, with_end)[0]

    def score_replies(self, context: Sequence, replies: Sequence[str], system: str = "", with_end: bool = False):
        """``[(token log-probs, their sum)]`` of each reply after ``context`` (see the module)."""
        targets = self.targets(replies, with_end)
        longest = max((len(t) for t in targets), default=0)
        prompt = self.prompt(context, system, room=longest + 1)
        if not any(targets):
            return [([], 0.0) for _ in replies]
        logprobs = self.logprobs(prompt.ids, targets)
        return [(lp, float(sum(lp))) for lp in logprobs]

    def logprobs(self, prompt_ids: list, targets: list, want: bool = True) -> list:
        """Per target, the log-probability of each of its tokens after ``prompt_ids``.

        ``want=False`` evaluates the same batches but computes no probabilities (the engine
        alone: the reference the benchmarks compare with)."""
        with self.lock:
            self._fit(len(prompt_ids), targets)
            first = self._evaluate_prompt(prompt_ids, want)
            out: list = [None] * len(targets)
            for group in self._groups(len(prompt_ids), targets):
                self._evaluate_group(len(prompt_ids), targets, group, first, out, want)
            return out

    def _evaluate_prompt(self, ids: list, want: bool):
        lib = self.lib
        keep = 0
        for a, b in zip(self._cached, ids[:-1]):  # the last token is evaluated again for its logits
            if a != b:
                break
            keep += 1
        if not lib.llama_memory_seq_rm(self.memory, 0, keep, -1):
            lib.llama_memory_clear(self.memory, True)
            keep = 0
        self._cached = list(ids[:keep])
        rest = list(enumerate(ids))[keep:]
        for start in range(0, len(rest), BATCH):
            chunk = rest[start:start + BATCH]
            last = start + BATCH >= len(rest)
            self._decode([(token, pos, 0, last and k == len(chunk) - 1) for k, (pos, token) in enumerate(chunk)])
        self._cached = list(ids)
        if not want:
            return None
        row = self._logits(1)
        return row[0] - _logsumexp(row)[0]

    def _groups(self, prompt_length: int, targets: list):
        """Candidates decoded together: as many as fit the cells left after the context."""
        room = self.cells - prompt_length
        group, used = [], 0
        for i, t in enumerate(targets):
            need = max(0, len(t) - 1)
            if group and (used + need > room or len(group) == SEQUENCES - 1):
                yield group
                group, used = [], 0
            group.append(i)
            used += need
        if group:
            yield group

    def _evaluate_group(self, prompt_length: int, targets: list, group: list, first, out: list, want: bool):
        lib = self.lib
        tokens, owners = [], []  # (token, pos, seq, output) and which (target, position) each output predicts
        for seq, i in enumerate(group, start=1):
            t = targets[i]
            out[i] = [float(first[t[0]])] if (want and t) else []
            if len(t) < 2:
                continue
            lib.llama_memory_seq_cp(self.memory, 0, seq, -1, -1)
            for j, token in enumerate(t[:-1]):
                tokens.append((token, prompt_length + j, seq, True))
                owners.append((i, t[j + 1]))
        for start in range(0, len(tokens), BATCH):
            chunk = tokens[start:start + BATCH]
            self._decode(chunk)
            if want:
                logits = self._logits(len(chunk))
                mine = owners[start:start + BATCH]
                picked = logits[np.arange(len(mine)), [token for _, token in mine]] - _logsumexp(logits)
                for (i, _), value in zip(mine, picked.tolist()):
                    out[i].append(value)
        for seq in range(1, len(group) + 1):
            lib.llama_memory_seq_rm(self.memory, seq, -1, -1)

    def _decode(self, tokens: list) -> None:
        batch = self.batch
        batch.n_tokens = len(tokens)
        for k, (token, pos, seq, output) in enumerate(tokens):
            batch.token[k] = token
            batch.pos[k] = pos
            batch.n_seq_id[k] = 1
            batch.seq_id[k][0] = seq
            batch.logits[k] = 1 if output else 0
        code = self.lib.llama_decode(self.ctx, batch)
        if code != 0:
            self._cached = []
            self.lib.llama_memory_clear(self.memory, True)
            raise RuntimeError(f"llama.cpp could not evaluate a batch of {len(tokens)} tokens (llama_decode {code})")

    def _logits(self, rows: int) -> np.ndarray:
        return np.ctypeslib.as_array(self.lib.llama_get_logits(self.ctx), shape=(rows, self.n_vocab))


def _logsumexp(logits: np.ndarray, rows: int = 32) -> np.ndarray:
    """Row-wise log-sum-exp, a few rows at a time (a whole batch's exponentials would be
    256 x vocab floats at once)."""
    out = np.empty(len(logits))
    for start in range(0, len(logits), rows):
        block = logits[start:start + rows]
        top = block.max(axis=1, keepdims=True)
        out[start:start + rows] = top[:, 0] + np.log(np.exp(block - top).sum(axis=1, dtype=np.float64))
    return out
