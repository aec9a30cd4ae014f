"""Reference-based scores of replies against one or several references per context.

For every pair metric, each item gets a *single*-reference score (against its first
reference) and a *multi*-reference score (the best over all its references); corpus
metrics pool statistics over items, once with first references only and once with all.
The summary gives means with seeded bootstrap intervals over contexts. Diversity of the
replies (distinct-n, Self-BLEU, and recall/precision of the references when there are
several hypotheses per context) comes with it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.metrics import bootstrap, diversity
from parlai_acute.metrics.base import ItemMetric
from parlai_acute.metrics.inputs import Item
from parlai_acute.stats.settings import check_settings
from parlai_acute.metrics.reference import (CorpusBleu, CorpusChrf, F1, Meteor, RougeL, SentenceBleu,
                                            SentenceChrf)

DEFAULT_METRICS = ("f1", "bleu", "rouge", "meteor", "chrf", "embedding")
METRIC_NAMES = DEFAULT_METRICS + ("cider",)
#: metric -> its variants, the default first (docs/metrics.md says what each reproduces)
VARIANTS = {"bleu": ("sacrebleu", "coco"), "rouge": ("rouge-score", "coco"), "meteor": ("nltk", "1.5")}


@dataclass
class ScoreConfig:
    """``bleu_variant``, ``rouge_variant``, ``meteor_variant``: one or more of :data:`VARIANTS`,
    each scored under its own column names (coco_bleu4, coco_rougeL, meteor15). ``bleu_smoothing``
    and ``bleu_tokenize``, ``rouge_tokenize`` of None: each variant's own (sacrebleu: exp and 13a;
    coco: none and none, the text split on whitespace as nlg-eval does; rouge-score: words)."""

    metrics: tuple = DEFAULT_METRICS
    bleu_variant: tuple = ("sacrebleu",)
    bleu_smoothing: str | None = None
    bleu_smooth_value: float | None = None
    bleu_tokenize: str | None = None
    rouge_variant: tuple = ("rouge-score",)
    rouge_tokenize: str | None = None
    meteor_variant: tuple = ("nltk",)
    lowercase: bool = True
    bootstrap: int = 1000
    confidence: float = 0.95  # level of every interval
    seed: int = 0
    self_bleu_sample: int = 200

    def __post_init__(self):
        unknown = [m for m in self.metrics if m not in METRIC_NAMES]
        if unknown:
            raise UserError(f"unknown metric {unknown[0]!r}; choose from {', '.join(METRIC_NAMES)}")
        for metric, names in VARIANTS.items():
            param = f"{metric}_variant"
            chosen = (getattr(self, param),) if isinstance(getattr(self, param), str) else tuple(getattr(self, param))
            wrong = [v for v in chosen if v not in names]
            if wrong or not chosen:
                raise UserError(f"{param} {(wrong or [''])[0]!r} is not one of {', '.join(names)}", param=param)
            setattr(self, param, tuple(dict.fromkeys(chosen)))
        from parlai_acute.metrics.normalise import ROUGE_TOKENIZE

        if self.rouge_tokenize not in (None, *ROUGE_TOKENIZE):
            raise UserError(f"rouge_tokenize {self.rouge_tokenize!r} is not one of {', '.join(ROUGE_TOKENIZE)}",
                            param="rouge_tokenize")
        if self.bleu_smoothing not in (None, "none") and self.bleu_variant == ("coco",):
            raise UserError(f"bleu_smoothing {self.bleu_smoothing!r} applies to sacrebleu BLEU only: coco BLEU has no "
                            f"smoothing (only its 1e-15/1e-9 constants); leave bleu_smoothing unset or add "
                            f"bleu_variant sacrebleu", param="bleu_smoothing")
        check_settings(self)


@dataclass
class ScoreResult:
    per_item: pd.DataFrame
    summary: pd.DataFrame
    diversity: dict
    signatures: dict
    config: dict = field(default_factory=dict)


def build_metrics(config: ScoreConfig):
    """(pair metrics, corpus metrics) chosen by ``config.metrics``."""
    from parlai_acute.metrics import coco

    bleu_kw = dict(smooth=config.bleu_smoothing or "exp", smooth_value=config.bleu_smooth_value,
                   tokenize=config.bleu_tokenize or "13a", lowercase=config.lowercase)
    coco_kw = dict(tokenize=config.bleu_tokenize or "none", lowercase=config.lowercase)
    pair, corpus = [], []
    if "f1" in config.metrics:
        pair.append(F1())
    if "bleu" in config.metrics:
        if "sacrebleu" in config.bleu_variant:
            pair.append(SentenceBleu(**bleu_kw))
            corpus.append(CorpusBleu(**bleu_kw, pairs=pair[-1]))
        if "coco" in config.bleu_variant:
            pair.append(coco.CocoBleu(**coco_kw))
            corpus.append(coco.CorpusCocoBleu(**coco_kw))
    if "rouge" in config.metrics:
        if "rouge-score" in config.rouge_variant:
            pair.append(RougeL(config.rouge_tokenize or "words"))
        if "coco" in config.rouge_variant:
            pair.append(coco.CocoRougeL(config.rouge_tokenize or "none", config.lowercase))
    if "meteor" in config.metrics:
        if "nltk" in config.meteor_variant:
            pair.append(Meteor())
        if "1.5" in config.meteor_variant:
            pair.append(coco.Meteor15())
    if "chrf" in config.metrics:
        pair.append(SentenceChrf(lowercase=config.lowercase))
        corpus.append(CorpusChrf(lowercase=config.lowercase, pairs=pair[-1]))
    if "embedding" in config.metrics:
        from parlai_acute.metrics.embeddings import EmbeddingMetrics

        pair.append(EmbeddingMetrics())
    if "cider" in config.metrics:
        pair.append(coco.Cider(lowercase=config.lowercase))
    return pair, corpus


def pair_table(items: list[Item], replies: dict[str, list[str]], metrics, progress=None) -> pd.DataFrame:
    """Every metric column for every (item, reference) pair of the first reply of each item."""
    rows_item, rows_ref, hyps, refs = [], [], [], []
    for k, item in enumerate(items):
        for j, ref in enumerate(item.references):
            rows_item.append(k)
            rows_ref.append(j)
            hyps.append(replies[item.id][0])
            refs.append(ref)
    table = pd.DataFrame({"item": rows_item, "ref": rows_ref})
    for metric in metrics:
        for column, values in metric.pair_scores(hyps, refs).items():
            table[column] = values
        if progress is not None:
            progress.update(1)
    return table


def item_scores(items: list[Item], replies: dict[str, list[str]], pair_metrics, progress=None) -> pd.DataFrame:
    """Per item: ``<column>_single`` (first reference) and ``<column>_multi`` (best reference; an
    :class:`~.base.ItemMetric`'s own multi-reference score)."""
    by_pair = [m for m in pair_metrics if not isinstance(m, ItemMetric)]
    pairs = pair_table(items, replies, by_pair, progress)
    columns = [c for m in by_pair for c in m.columns]
    single = pairs[pairs["ref"] == 0].set_index("item")[columns].sort_index()
    multi = pairs.groupby("item")[columns].max().sort_index()
    first = [replies[it.id][0] for it in items]
    for metric in pair_metrics:
        if not isinstance(metric, ItemMetric):
            continue
        one = metric.item_scores(first, [it.references[:1] for it in items])
        every = one if all(len(it.references) == 1 for it in items) else \
            metric.item_scores(first, [it.references for it in items])
        for column in metric.columns:
            single[column], multi[column] = one[column], every[column]
        if progress is not None:
            progress.update(1)
    columns = [c for m in pair_metrics for c in m.columns]
    per_item = pd.DataFrame({"id": [it.id for it in items], "context": ["\n".join(it.context) for it in items],
                             "reply": [replies[it.id][0] for it in items],
                             "n_references": [len(it.references) for it in items]})
    for column in columns:
        per_item[f"{column}_single"] = single[column].to_numpy()
        per_item[f"{column}_multi"] = multi[column].to_numpy()
    return per_item


def score(items: list[Item], replies: dict[str, list[str]], config: ScoreConfig | None = None,
          progress=None) -> ScoreResult:
    """``progress``: a tqdm bar advanced by one per metric (and once for diversity)."""
    config = config or ScoreConfig()
    pair_metrics, corpus_metrics = build_metrics(config)
    if progress is not None:
        progress.total = len(pair_metrics) + len(corpus_metrics) + 1
        progress.refresh()
    first = [replies[item.id][0] for item in items]
    nrefs = [len(item.references) for item in items]
    per_item = item_scores(items, replies, pair_metrics, progress)

    counts = np.array(nrefs)
    pair_rows = {"first": np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int), "count": counts}
    signatures, rows = {}, []
    for metric in pair_metrics:
        sig = metric.signature().with_refs(nrefs)
        signatures[sig.metric] = sig.as_dict()
        for column in metric.columns:
            row = {"metric": column, "level": "sentence", "signature": sig.format()}
            for kind in ("single", "multi"):
                values = per_item[f"{column}_{kind}"].to_numpy()
                low, high, why = bootstrap.mean_interval(values, config.bootstrap, config.seed, config.confidence)
                row.update({kind: float(values.mean()), f"{kind}_low": low, f"{kind}_high": high,
                            f"{kind}_note": why})
            rows.append(row)
    for metric in corpus_metrics:
        sig = metric.signature().with_refs(nrefs)
        signatures[sig.metric] = sig.as_dict()
        results = {}
        for kind, refs in (("single", [it.references[:1] for it in items]), ("multi", [it.references for it in items])):
            stats = metric.item_stats(first, refs, pair_rows)
            point = metric.from_stats(stats.sum(axis=0))
            intervals = bootstrap.pooled_interval(stats, metric.from_stats, config.bootstrap, config.seed, config.confidence)
            results[kind] = (point, intervals)
        for column in metric.columns:
            row = {"metric": column, "level": "corpus", "signature": sig.format()}
            for kind, (point, intervals) in results.items():
                low, high, why = intervals[column]
                row.update({kind: float(point[column]), f"{kind}_low": low, f"{kind}_high": high,
                            f"{kind}_note": why})
            rows.append(row)
        if progress is not None:
            progress.update(1)
    summary = pd.DataFrame(rows, columns=["metric", "level", "single", "single_low", "single_high", "single_note",
                                          "multi", "multi_low", "multi_high", "multi_note", "signature"])
    div = reply_diversity(items, replies, pair_metrics, config)
    if progress is not None:
        progress.update(1)
    return ScoreResult(per_item, summary, div, signatures,
                       {**asdict(config), "metrics": list(config.metrics), "contexts": len(items),
                        "references": int(sum(nrefs)), "empty_replies": int(sum(1 for r in first if not r.strip()))})


def reply_diversity(items, replies, pair_metrics, config: ScoreConfig) -> dict:
    first = [replies[item.id][0] for item in items]
    out: dict = {}
    for n in (1, 2):
        out.update(diversity.distinct(first, n))
    bleu = next((m for m in pair_metrics if isinstance(m, SentenceBleu)), None)
    if bleu is not None:
        out.update(diversity.self_bleu(first, bleu, config.self_bleu_sample, config.seed))
        out["self_bleu4_note"] = ("" if out["self_bleu_replies"] >= 2 else
                                  f"undefined: Self-BLEU compares replies, and {out['self_bleu_replies']} non-empty "
                                  f"{'reply was' if out['self_bleu_replies'] == 1 else 'replies were'} given")
    several = [(replies[it.id], it.references) for it in items if len(replies[it.id]) > 1]
    if several:
        out["hypotheses_per_context"] = float(np.mean([len(h) for h, _ in several]))
        for metric in pair_metrics:
            for column in metric.columns:
                if column in ("f1", "bleu2", "rougeL", "emb_greedy"):
                    out.update({k: v for k, v in diversity.multi_hypothesis(several, metric, column).items()
                                if k != "contexts"})
        out["multi_hypothesis_contexts"] = len(several)
    return out
