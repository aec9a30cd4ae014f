"""Diversity of a model's replies: distinct-n, Self-BLEU, and multi-hypothesis recall/precision.

* distinct-n (Li et al. 2016) on lowercase word tokens: *within* replies, the mean over
  replies of (distinct n-grams / n-grams) of each reply; *across* replies, distinct
  n-grams of all replies over all their n-grams.
* Self-BLEU (Zhu et al. 2018): sentence BLEU-4 (sacrebleu, the same settings as the
  reference BLEU) of each reply against all the other replies; on a seeded sample of at
  most ``sample`` replies, because it costs the square of their number. Lower is more diverse.
* With several hypotheses per context (Gupta et al. 2019): for a pair metric, *recall*
  is the mean over references of the best hypothesis, *precision* the mean over
  hypotheses of the best reference, both averaged over contexts.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Sequence

import numpy as np

from parlai_acute.metrics import normalise


def distinct(replies: Sequence[str], n: int) -> dict[str, float]:
    within, pooled = [], Counter()
    for text in replies:
        grams = normalise.ngrams(normalise.words(text), n)
        if grams:
            within.append(len(set(grams)) / len(grams))
        pooled.update(grams)
    total = sum(pooled.values())
    return {f"distinct{n}_within": float(np.mean(within)) if within else 0.0,
            f"distinct{n}_across": len(pooled) / total if total else 0.0}


def self_bleu(replies: Sequence[str], bleu, sample: int = 200, seed: int = 0) -> dict:
    """Mean sentence BLEU-4 of each sampled reply against the other sampled replies.

    ``bleu`` is a :class:`~parlai_acute.metrics.reference.SentenceBleu` (its settings are used).
    """
    texts = [t for t in replies if t.strip()]
    if len(texts) > sample:
        texts = random.Random(f"{seed}:self-bleu").sample(texts, sample)
    if len(texts) < 2:
        return {"self_bleu4": float("nan"), "self_bleu_replies": len(texts)}
    scorer = bleu.bleu
    # reference n-grams of every text once; each hypothesis meets the union of the others
    stats = []
    for i, hyp in enumerate(texts):
        others = texts[:i] + texts[i + 1:]
        stats.append(scorer._extract_corpus_statistics([hyp], [[o] for o in others])[0])
    scores = [bleu._scores(s)["bleu4"] for s in stats]
    return {"self_bleu4": float(np.mean(scores)), "self_bleu_replies": len(texts)}


def multi_hypothesis(groups: Sequence[tuple[Sequence[str], Sequence[str]]], metric, column: str) -> dict:
    """Recall and precision of references by hypotheses (several replies per context).

    ``groups`` holds (hypotheses, references) per context; ``metric`` is a PairMetric.
    """
    hyps, refs, owner = [], [], []
    for k, (hs, rs) in enumerate(groups):
        for h in hs:
            for r in rs:
                hyps.append(h)
                refs.append(r)
                owner.append(k)
    if not hyps:
        return {}
    scores = metric.pair_scores(hyps, refs)[column]
    recall, precision, at = [], [], 0
    for hs, rs in groups:
        block = scores[at:at + len(hs) * len(rs)].reshape(len(hs), len(rs))
        at += block.size
        recall.append(block.max(axis=0).mean())
        precision.append(block.max(axis=1).mean())
    return {f"{column}_recall": float(np.mean(recall)), f"{column}_precision": float(np.mean(precision)),
            "contexts": len(groups)}
