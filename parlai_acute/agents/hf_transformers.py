"""A ParlAI agent for a local Hugging Face causal or seq2seq checkpoint (GPT-2, BlenderBot, GGUF...).

Researchers keep fine-tuned models as directories written by ``save_pretrained``; this
agent loads one (or a ``.gguf`` file, which transformers dequantises) without ever
touching a hub, formats the conversation with the tokenizer's chat template when it has
one (otherwise plain ``User:``/``Bot:`` turns, or newline-joined turns for seq2seq), and
decodes with the shared strategies of :mod:`parlai_acute.agents.decoding`.

:meth:`HfModel.score_reply` gives the token log-probabilities of any reply in any context;
sample-and-rank uses it. For a ``.gguf`` file the agent's own ``score_reply`` (perplexity,
hits@1/N) goes through llama.cpp's batched evaluation instead
(:class:`parlai_acute.agents.llama_logprobs.LlamaScorer`, same tokens, ``--hf-scorer``), and the
torch weights are loaded only if the agent generates.

    parlai interactive -m parlai_acute.agents.hf_transformers:HfTransformersAgent \\
        --hf-model /path/to/checkpoint --inference sample_rank --num-samples 8
"""
from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Optional, Sequence

# Never reach for a hub: every load below is local_files_only, and these make sure
# nothing inside transformers/huggingface_hub tries either.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from parlai.core.message import Message  # noqa: E402

from parlai_acute.agents.options import option_adder  # noqa: E402
from parlai_acute.agents import decoding  # noqa: E402
from parlai_acute.agents.chat_format import FORMATS, ChatFormat, first_line as _first_line  # noqa: E402
from parlai_acute.agents.turn_agent import TurnTakingAgent  # noqa: E402
from parlai_acute.errors import UserError  # noqa: E402
from parlai_acute.parallel import threads_of  # noqa: E402

DTYPES = ("float32", "bfloat16", "float16")
SCORERS = ("auto", "llama.cpp", "torch")


def add_model_args(parser):
    """The model options of this agent (decoding options come from decoding.add_decoding_args)."""
    group, add = option_adder(parser, "Hugging Face transformers model (parlai_acute)")

    add("--hf-model", type=str, default=None,
        help="local directory written by save_pretrained, or a .gguf file (never downloaded); default: -mf")
    add("--hf-dtype", type=str, default="float32", choices=list(DTYPES), help="weights dtype")
    add("--hf-device", type=str, default="cpu", help="torch device, e.g. cpu or cuda:0")
    add("--hf-threads", type=int, default=1,
        help="CPU threads for torch, and for llama.cpp's scoring of a .gguf file (0: the machine's cores; "
             "default 1: on a machine shared with other work, one-thread engines never wait for each other)")
    add("--hf-format", type=str, default="auto", choices=list(FORMATS),
        help="prompt format: the tokenizer's chat template if it has one (auto), or plain speaker turns")
    add("--system-prompt", type=str, default=None,
        help="system prompt put before the conversation (default: none for this agent)")
    add("--persona", type=str, default="",
        help="persona text added to the system prompt (contexts' 'your persona:' lines add to it)")
    add("--hf-scorer", type=str, default="auto", choices=list(SCORERS),
        help="engine of given replies' log-probabilities (perplexity, hits@1/N): llama.cpp's batched evaluation "
             "for a .gguf file (auto), or torch; generation always uses torch")
    return group


class HfModel(ChatFormat):
    """A loaded model + tokenizer: prompt formatting, generation and log-probabilities.

    One instance is shared by every copy of the agent (``share()``) and is thread-safe.
    """

    def __init__(self, path: str, dtype: str = "float32", device: str = "cpu", threads: int = 1,
                 fmt: str = "auto"):
        import torch
        import transformers

        self.torch = torch
        self.path = path
        model_dir, gguf = _locate(path)
        if dtype not in DTYPES:
            raise UserError(f"hf_dtype {dtype!r} is not supported; use one of {', '.join(DTYPES)}", param="hf_dtype")
        if fmt not in FORMATS:
            raise UserError(f"hf_format {fmt!r} is not supported; use one of {', '.join(FORMATS)}", param="hf_format")
        try:
            self.device = torch.device(device)
        except RuntimeError:
            raise UserError(f"hf_device {device!r} is not a torch device; use cpu or cuda:N",
                            param="hf_device") from None
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise UserError(f"hf_device {device} asks for a GPU but torch sees none; use hf_device=cpu",
                            param="hf_device")
        torch.set_num_threads(threads_of(threads, "hf_threads"))
        kw = dict(local_files_only=True)
        if gguf:
            kw["gguf_file"] = gguf
        try:
            config = transformers.AutoConfig.from_pretrained(model_dir, **kw)
        except (OSError, ValueError, KeyError) as exc:
            raise UserError(f"{path}: transformers cannot read the model config ({_first_line(exc)}); "
                            "pass a directory written by save_pretrained or a .gguf file") from None
        self.seq2seq = bool(getattr(config, "is_encoder_decoder", False))
        auto = transformers.AutoModelForSeq2SeqLM if self.seq2seq else transformers.AutoModelForCausalLM
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, **kw)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}: no usable tokenizer ({_first_line(exc)}); save the tokenizer "
                            "next to the model with tokenizer.save_pretrained(DIR)") from None
        try:
            self.model = auto.from_pretrained(model_dir, config=config, torch_dtype=getattr(torch, dtype), **kw)
        except ValueError as exc:
            kind = "seq2seq" if self.seq2seq else "causal"
            raise UserError(f"{path}: {type(config).__name__} is not a {kind} language model "
                            f"({_first_line(exc)}); pass a GPT-2/Llama-style or BART/T5/BlenderBot checkpoint") from None
        except OSError as exc:
            raise UserError(f"{path}: cannot load the weights ({_first_line(exc)}); check the directory "
                            "holds model.safetensors or pytorch_model.bin") from None
        self.model.to(self.device).eval()
        self.lock = threading.Lock()
        self.eos_id = self.tokenizer.eos_token_id
        self.chat_template = self._choose_template(getattr(self.tokenizer, "chat_template", None), fmt)
        self._end_ids, self._stop_text = self._end_of_turn()  # renders the template once: bad ones fail here
        self.max_positions = _max_positions(self.model.config, self.tokenizer)

    # ------------------------------------------------------------------ tokenizer (for ChatFormat)

    def _special(self) -> dict:
        tok = self.tokenizer
        return {name: getattr(tok, name, None) for name in
                ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token")}

    def _tokenize(self, text: str, add_special: bool) -> list:
        return self.tokenizer(text, add_special_tokens=add_special)["input_ids"]

    # ------------------------------------------------------------------ log-probabilities

    def score_reply(self, context: Sequence, reply: str, system: str = "", with_end: bool = False):
        """Token log-probabilities of ``reply`` after ``context``: ``(list of floats, their sum)``.

        ``context`` is a list of turns (strings alternating, the last the user's, or
        ``(role, text)`` pairs). ``with_end`` adds the end-of-turn token, so that the
        probability of stopping there counts too (sample-and-rank uses it).
        """
        return self.score_replies(context, [reply], system, with_end)[0]

    def score_replies(self, context: Sequence, replies: Sequence[str], system: str = "", with_end: bool = False):
        """:meth:`score_reply` for several replies to the same context, in one forward pass."""
        torch = self.torch
        targets = self.targets(replies, with_end)
        room = max((len(t) for t in targets), default=0) + 1
        prompt = self.prompt(context, system, room=room)
        if not any(targets):
            return [([], 0.0) for _ in replies]
        with self.lock, torch.no_grad():
            if self.seq2seq:
                logprobs = self._seq2seq_logprobs(prompt.ids, targets)
            else:
                logprobs = self._causal_logprobs(prompt.ids, targets)
        return [(lp, float(sum(lp))) for lp in logprobs]

    def _causal_logprobs(self, prompt_ids: list, targets: list) -> list:
        """The context is run once; its key/value cache is copied for every reply."""
        torch = self.torch
        prompt = torch.tensor([prompt_ids], dtype=torch.long, device=self.device)
        out = self.model(input_ids=prompt, use_cache=True)
        first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
        cache = out.past_key_values
        width = max(len(t) for t in targets)
        if width == 1 or not hasattr(cache, "batch_repeat_interleave"):
            if width > 1:  # a model without a copyable cache: score the full sequences
                return self._causal_logprobs_full(prompt_ids, targets)
            return [[first[t[0]].item()] if t else [] for t in targets]
        cache.batch_repeat_interleave(len(targets))
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.full((len(targets), width - 1), pad, dtype=torch.long)
        mask = torch.zeros((len(targets), len(prompt_ids) + width - 1), dtype=torch.long)
        mask[:, :len(prompt_ids)] = 1
        for i, t in enumerate(targets):
            ids[i, :len(t) - 1] = torch.tensor(t[:-1], dtype=torch.long)
            mask[i, len(prompt_ids):len(prompt_ids) + len(t) - 1] = 1
        logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device),
                            past_key_values=cache, use_cache=True).logits
        logp = torch.log_softmax(logits.float(), dim=-1)
        out = []
        for i, t in enumerate(targets):
            if not t:
                out.append([])
                continue
            rest = logp[i, torch.arange(len(t) - 1), torch.tensor(t[1:], dtype=torch.long)].tolist()
            out.append([first[t[0]].item()] + rest)
        return out

    def _padded(self, rows: list) -> tuple:
        """(token ids, attention mask) of ``rows``, right-padded to the longest."""
        torch = self.torch
        width = max(len(r) for r in rows)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.tensor(r)
            mask[i, :len(r)] = 1
        return ids, mask

    def _causal_logprobs_full(self, prompt_ids: list, targets: list) -> list:
        torch = self.torch
        ids, mask = self._padded([prompt_ids + t for t in targets])
        logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
        logp = torch.log_softmax(logits.float(), dim=-1)
        start = len(prompt_ids)
        out = []
        for i, t in enumerate(targets):
            pos = torch.arange(start - 1, start - 1 + len(t))
            out.append(logp[i, pos, torch.tensor(t, dtype=torch.long)].tolist())
        return out

    def _seq2seq_logprobs(self, prompt_ids: list, targets: list) -> list:
        torch = self.torch
        gen = self.model.generation_config
        prefix = [gen.forced_bos_token_id] if getattr(gen, "forced_bos_token_id", None) is not None else []
        start = self.model.config.decoder_start_token_id
        if start is None:
            start = gen.decoder_start_token_id
        dec, dmask = self._padded([[start] + prefix + t for t in targets])
        enc = torch.tensor([prompt_ids] * len(targets), dtype=torch.long)
        logits = self.model(input_ids=enc.to(self.device), decoder_input_ids=dec.to(self.device),
                            decoder_attention_mask=dmask.to(self.device)).logits
        logp = torch.log_softmax(logits.float(), dim=-1)
        out = []
        for i, t in enumerate(targets):
            first = len(prefix)  # position whose logits predict the first reply token
            pos = torch.arange(first, first + len(t))
            out.append(logp[i, pos, torch.tensor(t, dtype=torch.long)].tolist())
        return out

    # ------------------------------------------------------------------ generation

    def generate(self, context: Sequence, config: decoding.DecodingConfig, system: str = "",
                 seed_key: Optional[str] = None) -> list:
        """``config.n_candidates`` candidates, each scored by :meth:`score_replies` (with the end token).

        The samples are drawn with a seed derived from ``seed_key`` (default: the prompt).
        """
        torch = self.torch
        prompt = self.prompt(context, system, room=config.max_new_tokens + len(self._end_ids))
        n = 1 if config.greedy else config.n_candidates
        gen = self._generation_config(config, n)
        ids = torch.tensor([prompt.ids], dtype=torch.long, device=self.device)
        with self.lock, torch.no_grad():
            torch.manual_seed(decoding.sample_seed(config.seed, seed_key or prompt.text, 0))
            out = self.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), generation_config=gen)
        new = out if self.seq2seq else out[:, ids.shape[1]:]
        texts = [self._clean(self.tokenizer.decode(row, skip_special_tokens=True)) for row in new]
        if n < config.n_candidates:  # greedy sample_rank: the N samples would all be the same
            texts = texts * config.n_candidates
        scored = self.score_replies(context, texts, system, with_end=True)
        return [decoding.Candidate(text=t, score=s, num_tokens=len(lp)) for t, (lp, s) in zip(texts, scored)]

    def _generation_config(self, config: decoding.DecodingConfig, n: int):
        gen = self.model.generation_config.__class__.from_dict(self.model.generation_config.to_dict())
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self._end_ids[0] if self._end_ids else 0
        # our options decide the decoding; a checkpoint's beam/penalty defaults must not leak in
        gen.update(num_beams=1, num_return_sequences=n, max_new_tokens=config.max_new_tokens, max_length=None,
                   min_length=0, min_new_tokens=1, no_repeat_ngram_size=0, repetition_penalty=1.0,
                   do_sample=not config.greedy, pad_token_id=pad, eos_token_id=self._stop_ids() or None)
        if config.greedy:
            gen.update(temperature=None, top_p=None, top_k=None)
        else:
            gen.update(temperature=config.temperature, top_p=config.topp, top_k=config.topk)
        return gen

    def _stop_ids(self) -> list:
        eos = self.tokenizer.eos_token_id
        return list(self._end_ids) + ([eos] if eos is not None and eos not in self._end_ids else [])

    def _clean(self, text: str) -> str:
        if self._stop_text and self._stop_text in text:
            text = text[:text.index(self._stop_text)]
        return text.strip().rstrip("\ufffd")  # a reply cut at max tokens may end inside a UTF-8 character



def _locate(path: Optional[str]):
    """(directory, gguf file name or None) for ``hf_model``, with one-line errors for bad paths."""
    if not path:
        raise UserError("hf_model is required; pass a directory written by save_pretrained or a .gguf file",
                        param="hf_model")
    p = Path(path).expanduser()
    if not p.exists():
        raise UserError(f"hf_model {path}: no such file or directory; pass a local model directory "
                        "(models are never downloaded)", param="hf_model")
    if p.is_file():
        if p.suffix != ".gguf":
            raise UserError(f"hf_model {path} is a file but not a .gguf; pass the model directory instead",
                            param="hf_model")
        return str(p.parent), p.name
    if not (p / "config.json").is_file():
        raise UserError(f"hf_model {path} is not a Hugging Face model directory (no config.json); "
                        "pass the directory save_pretrained wrote, or a .gguf file", param="hf_model")
    return str(p), None


def _max_positions(config, tokenizer) -> int:
    for name in ("n_positions", "max_position_embeddings", "n_ctx"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    limit = getattr(tokenizer, "model_max_length", None)
    return limit if isinstance(limit, int) and 0 < limit < 1_000_000 else 2048


@functools.lru_cache(maxsize=2)
def load_model(path: str, dtype: str = "float32", device: str = "cpu", threads: int = 1, fmt: str = "auto") -> HfModel:
    """Load (once per process) the model at ``path``; agents created from scratch reuse it."""
    return HfModel(path, dtype=dtype, device=device, threads=threads, fmt=fmt)


# --------------------------------------------------------------------------- agent

class HfTransformersAgent(TurnTakingAgent):
    """``-m parlai_acute.agents.hf_transformers:HfTransformersAgent --hf-model DIR``.

    Keeps the conversation per episode (see turn_agent); every reply act carries all
    candidates (see decoding.package).
    """

    shared_attrs = ("_hf", "scorer")
    options = staticmethod(add_model_args)

    def __init__(self, opt, shared=None):
        self.config = decoding.DecodingConfig.from_opt(opt)
        path = opt.get("hf_model") or opt.get("model_file")
        self.model_path = path  # what the judge records as its weights, without loading them
        threads, fmt = threads_of(opt.get("hf_threads", 1), "hf_threads"), opt.get("hf_format") or "auto"
        load = functools.partial(load_model, path, opt.get("hf_dtype") or "float32", opt.get("hf_device") or "cpu",
                                 threads, fmt)
        self.scorer = self.from_shared(shared, "scorer", lambda: _scorer(path, opt.get("hf_scorer") or "auto",
                                                                         threads, fmt))
        # with llama.cpp scoring, the torch weights are loaded only when the agent first generates
        self._hf = self.from_shared(shared, "_hf", lambda: _Once(load) if self.scorer else load())
        super().__init__(opt, shared)
        self.id = "HfTransformers"

    @property
    def hf(self) -> HfModel:
        return self._hf.get() if isinstance(self._hf, _Once) else self._hf

    def reply_batch(self, contexts: list) -> list:
        return [self._reply(c) for c in contexts]

    def _reply(self, context) -> Message:
        choice = decoding.decode(lambda n: self.hf.generate(context.turns, self.config, context.system, context.seed_key),
                                 context.history, self.config)
        act = Message({"id": self.getID(), "episode_done": False})
        return decoding.package(act, choice, self.config, extra={"model": self.hf.path})

    def score_reply(self, context_turns: Sequence, reply: str, with_end: bool = False):
        """Token log-probs of ``reply`` after ``context_turns`` (with this agent's system prompt)."""
        return (self.scorer or self.hf).score_reply(context_turns, reply, self.system, with_end=with_end)

    def score_replies(self, context_turns: Sequence, replies: Sequence[str], system: str = "", with_end: bool = False):
        """Token log-probs of each of ``replies`` after ``context_turns``, the context evaluated once.

        Through llama.cpp for a GGUF file (the torch weights are never loaded for scoring), so a
        judge reading its answer from label log-probabilities runs at the engine's speed."""
        return (self.scorer or self.hf).score_replies(context_turns, replies, system, with_end=with_end)


class _Once:
    """A value built on first use, once, whichever thread asks first."""

    def __init__(self, build):
        self._build, self._value, self._lock = build, None, threading.Lock()

    def get(self):
        with self._lock:
            if self._value is None:
                self._value = self._build()
            return self._value


def _scorer(path, scorer: str, threads: int, fmt: str):
    """The llama.cpp scorer of a GGUF file (``hf_scorer`` auto or llama.cpp), else None (torch scores)."""
    if scorer not in SCORERS:
        raise UserError(f"hf_scorer {scorer!r} is not one of {', '.join(SCORERS)}", param="hf_scorer")
    gguf = str(path or "").endswith(".gguf")
    if scorer == "llama.cpp" and not gguf:
        raise UserError(f"hf_scorer llama.cpp needs a .gguf file, not {path}; use hf_scorer=torch for a "
                        "checkpoint directory", param="hf_scorer")
    if scorer == "torch" or not gguf:
        return None
    _locate(path)  # the same one-line errors as the torch path for a missing file
    from parlai_acute.agents.llama_logprobs import LlamaScorer

    return LlamaScorer(path, threads=threads, fmt=fmt)
