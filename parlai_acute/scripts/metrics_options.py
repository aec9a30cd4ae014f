"""Options shared by the ``parlai-acute metrics`` subcommands: the test set and the metric settings."""
from __future__ import annotations

import argparse

from parlai_acute.paths import default_datapath
from parlai_acute.scripts.options import DeprecatedAlias, add_confidence, add_resampling


def add_test_set_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("test set (one of --data, --task)")
    group.add_argument("--data", default=None, metavar="FILE",
                       help="a .jsonl in the DailyDialog multi-reference layout, or a .csv with context/response/"
                            "references columns")
    group.add_argument("-t", "--task", default=None,
                       help="a ParlAI teacher: static_contexts (this package's, single reference) or any task path")
    group.add_argument("--datatype", default="valid", help="the teacher's split (default: valid)")
    group.add_argument("--datapath", default=None, help=f"ParlAI data directory (default: {default_datapath()})")
    group.add_argument("--num-contexts", type=int, default=0, help="at most this many contexts from a teacher (0: all)")
    group.add_argument("--limit", dest="num_contexts", type=int, action=DeprecatedAlias, preferred="--num-contexts",
                       help=argparse.SUPPRESS)
    group.add_argument("--context-column", default="context", help="CSV: the context column (turns on separate "
                                                                    "lines or split by __eou__)")
    group.add_argument("--response-column", default="response", help="CSV: the gold response (single reference)")
    group.add_argument("--references-column", default="references",
                       help="CSV: further references, a JSON list or tab-separated")
    group.add_argument("--id-column", default="id", help="CSV: context ids (default: row numbers)")


def load_test_set(args):
    from parlai_acute.metrics.inputs import load_items

    return load_items(args.data, args.task, datatype=args.datatype, datapath=args.datapath, limit=args.num_contexts,
                      csv_columns={"context": args.context_column, "response": args.response_column,
                                   "references": args.references_column, "id_column": args.id_column,
                                   "reply": getattr(args, "reply_column", "reply")})


def add_metric_arguments(parser: argparse.ArgumentParser) -> None:
    from parlai_acute.metrics.normalise import ROUGE_TOKENIZE
    from parlai_acute.metrics.reference import SMOOTHING
    from parlai_acute.metrics.score import DEFAULT_METRICS, METRIC_NAMES, VARIANTS

    group = parser.add_argument_group("metrics")
    group.add_argument("--metrics", default=",".join(DEFAULT_METRICS),
                       help=f"comma-separated subset of {','.join(METRIC_NAMES)} (default: all but cider; cider is "
                            f"coco's CIDEr-D)")
    group.add_argument("--bleu-variant", default=VARIANTS["bleu"][0],
                       help="comma-separated: sacrebleu (columns bleu1..4) and/or coco (nlg-eval / coco-caption: no "
                            "smoothing, closest-reference brevity penalty; columns coco_bleu1..4) (default: sacrebleu)")
    group.add_argument("--bleu-smoothing", default=None, choices=list(SMOOTHING),
                       help="smoothing of sacrebleu BLEU (default: exp; coco BLEU has none)")
    group.add_argument("--bleu-smooth-value", type=float, default=None,
                       help="value for floor / add-k smoothing (default: sacrebleu's, 0.1 / 1)")
    group.add_argument("--bleu-tokenize", default=None,
                       help="sacrebleu tokenizer of BLEU: 13a, intl, char, none (default: 13a for sacrebleu, none "
                            "for coco: the text split on whitespace, as nlg-eval)")
    group.add_argument("--rouge-variant", default=VARIANTS["rouge"][0],
                       help="comma-separated: rouge-score (F1; column rougeL) and/or coco (nlg-eval / coco-caption: "
                            "beta 1.2; column coco_rougeL) (default: rouge-score)")
    group.add_argument("--rouge-tokenize", default=None, choices=list(ROUGE_TOKENIZE),
                       help="words (Unicode words, \"n't\" kept in its word), rouge-score (rouge-score's own: "
                            "[a-z0-9] runs, \"don't\" is \"don t\"), none (split on spaces as given) (default: words "
                            "for rouge-score, none for coco)")
    group.add_argument("--meteor-variant", default=VARIANTS["meteor"][0],
                       help="comma-separated: nltk (column meteor) and/or 1.5 (the METEOR 1.5 jar of pycocoevalcap "
                            "with paraphrases, as nlg-eval; needs Java; column meteor15) (default: nltk)")
    group.add_argument("--case-sensitive", action="store_true", help="BLEU and chrF keep case (default: lowercased)")
    add_resampling(group, "bootstrap resamples for intervals", "seed of bootstrap and sampling")
    add_confidence(group, level_alias=True)


def score_config(args, **overrides):
    from parlai_acute.metrics.score import ScoreConfig

    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    listed = {name: tuple(v.strip() for v in getattr(args, f"{name}_variant").split(",") if v.strip())
              for name in ("bleu", "rouge", "meteor")}
    kwargs = dict(metrics=metrics, bleu_variant=listed["bleu"], bleu_smoothing=args.bleu_smoothing,
                  bleu_smooth_value=args.bleu_smooth_value, bleu_tokenize=args.bleu_tokenize,
                  rouge_variant=listed["rouge"], rouge_tokenize=args.rouge_tokenize,
                  meteor_variant=listed["meteor"], lowercase=not args.case_sensitive, bootstrap=args.bootstrap,
                  confidence=args.confidence, seed=args.seed)
    kwargs.update(overrides)
    return ScoreConfig(**kwargs)


def test_set_description(args) -> dict:
    return {"data": args.data, "task": args.task, "datatype": args.datatype if args.task else None,
            "num_contexts": args.num_contexts or None}
