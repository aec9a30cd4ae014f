"""Likelihood measures (ConvAI2): perplexity of gold replies and hits@1/N, with the parrot.

* perplexity: ``exp(-sum log p / tokens)`` over the gold replies (the first reference of
  every context), in the model's own tokens; with ``with_end`` the end-of-turn token
  counts too (the model must also stop);
* hits@1/N: the gold reply among N-1 distractors, the gold replies of other contexts of
  the same test set drawn at random (seeded per context; ConvAI2 used N = 20), ranked by
  the model's log-likelihood (``sum``, or ``mean`` per token). A tie counts against the
  gold reply. Contexts are independent draws, so shares get exact (Clopper-Pearson)
  intervals; perplexity a bootstrap interval over contexts;
* the parrot (ConvAI2 report): the partner's last message as one more candidate; hits@1
  is reported with and without it, with the share of contexts where the parrot beats gold.

Any model that gives token log-probabilities of a given reply can rank: the Hugging Face
wrapper (``score_replies``; for a GGUF file through llama.cpp's batched evaluation, the
context evaluated once for all its candidates) or any agent with ``score_reply``.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.metrics import bootstrap
from parlai_acute.metrics.inputs import Item
from parlai_acute.stats.intervals import clopper_pearson

RANK_BY = ("sum", "mean")


@dataclass
class RankConfig:
    candidates: int = 20
    parrot: bool = True
    with_end: bool = True
    rank_by: str = "sum"
    seed: int = 0
    bootstrap: int = 1000
    confidence: float = 0.95  # level of every interval

    def __post_init__(self):
        if self.candidates < 2:
            raise UserError(f"candidates {self.candidates} is too small; use 2 or more (ConvAI2: 20)",
                            param="candidates")
        if self.rank_by not in RANK_BY:
            raise UserError(f"rank_by {self.rank_by!r} is not one of {', '.join(RANK_BY)}", param="rank_by")


def scorer_of(agent, with_end: bool = True):
    """``f(context turns, replies) -> [(token log-probs, sum)]`` for an agent, and a description
    of its tokenisation; a one-line error for agents that cannot score a given reply."""
    scorer = getattr(agent, "scorer", None)
    if scorer is not None and hasattr(scorer, "score_replies"):  # llama.cpp's batched evaluation of a GGUF
        system = getattr(agent, "system", "")
        described = {**scorer.describe(), "end_token": with_end}
        return (lambda context, replies: scorer.score_replies(context, replies, system, with_end=with_end)), described
    hf = getattr(agent, "hf", None)
    if hf is not None and hasattr(hf, "score_replies"):
        system = getattr(agent, "system", "")
        tokenizer = hf.tokenizer
        described = {"model": str(hf.path), "tokenizer": type(tokenizer).__name__,
                     "vocab": int(len(tokenizer)), "end_token": with_end}
        return (lambda context, replies: hf.score_replies(context, replies, system, with_end=with_end)), described
    if hasattr(agent, "score_reply"):
        described = {"model": type(agent).__name__, "tokenizer": "the agent's own", "end_token": with_end}
        return (lambda context, replies: [agent.score_reply(context, r, with_end=with_end) for r in replies]), described
    raise UserError(f"{type(agent).__name__} cannot score a given reply (no token log-probabilities); use "
                    "model='parlai_acute.agents.hf_transformers:HfTransformersAgent' with its hf_model option "
                    "(a checkpoint directory or the same .gguf file)", param=("model", "hf_model"))


def candidate_sets(items: list[Item], config: RankConfig) -> list[dict]:
    """Per item: gold, the N-1 distractors and the parrot, a pure function of the seed."""
    golds = [it.reference for it in items]
    pool = list(dict.fromkeys(golds))
    out = []
    for item in items:
        others = [g for g in pool if g != item.reference]
        if len(others) < config.candidates - 1:
            raise UserError(f"the test set has {len(others)} other distinct gold replies, fewer than the "
                            f"{config.candidates - 1} distractors of candidates {config.candidates}; lower it",
                            param="candidates")
        rng = random.Random(f"{config.seed}:distractors:{item.id}")
        parrot = item.context[-1] if (config.parrot and item.context) else None
        out.append({"gold": item.reference, "distractors": rng.sample(others, config.candidates - 1), "parrot": parrot})
    return out


def rank(items: list[Item], score_fn, config: RankConfig | None = None, progress=None) -> tuple[pd.DataFrame, dict]:
    config = config or RankConfig()
    sets = candidate_sets(items, config)
    rows = []
    for item, cands in zip(items, sets):
        texts = [cands["gold"]] + cands["distractors"] + ([cands["parrot"]] if cands["parrot"] is not None else [])
        scored = score_fn(item.context, texts)
        value = [(s if config.rank_by == "sum" else s / max(1, len(lp))) for lp, s in scored]
        gold_lp = scored[0][0]
        best_distractor = max(value[1:config.candidates])
        row = {"id": item.id, "gold_logprob": float(sum(gold_lp)), "gold_tokens": len(gold_lp),
               "hit": float(value[0] > best_distractor), "gold_rank": int(1 + sum(v >= value[0] for v in value[1:config.candidates]))}
        if cands["parrot"] is not None:
            row["hit_with_parrot"] = float(value[0] > max(best_distractor, value[-1]))
            row["parrot_beats_gold"] = float(value[-1] >= value[0])
        rows.append(row)
        if progress:
            progress(1)
    table = pd.DataFrame(rows)
    return table, summarise(table, config)


def summarise(table: pd.DataFrame, config: RankConfig) -> dict:
    stats = table[["gold_logprob", "gold_tokens"]].to_numpy(dtype=float)

    def perplexity(summed):
        return {"perplexity": math.exp(-summed[0] / summed[1]) if summed[1] else float("nan")}

    out = {"contexts": len(table), "gold_tokens": int(stats[:, 1].sum()), **perplexity(stats.sum(axis=0))}
    low, high, why = bootstrap.pooled_interval(stats, perplexity, config.bootstrap, config.seed,
                                               config.confidence)["perplexity"]
    out.update({"perplexity_low": low, "perplexity_high": high, "perplexity_note": why})
    n = config.candidates
    columns = [("hit", f"hits@1/{n}")]
    if "hit_with_parrot" in table:
        columns += [("hit_with_parrot", f"hits@1/{n}+parrot"), ("parrot_beats_gold", "parrot_beats_gold")]
    for column, name in columns:
        values = table[column].to_numpy(dtype=float)
        low, high = clopper_pearson(int(values.sum()), len(values), config.confidence)
        out.update({name: float(np.mean(values)), f"{name}_low": low, f"{name}_high": high})
    return out
