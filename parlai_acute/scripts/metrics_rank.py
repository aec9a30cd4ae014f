"""``parlai-acute metrics rank``: perplexity of the gold replies and hits@1/N, with and without the parrot.

The model scores every candidate reply with its token log-probabilities: the gold reply
(first reference), N-1 gold replies of other contexts drawn at random (seeded), and the
parrot, the partner's last message (ConvAI2 report). The default model is the embedded
SmolLM2-135M GGUF; a GGUF file is scored by llama.cpp's batched evaluation (each context
evaluated once for all its candidates), a checkpoint directory by torch. A progress bar and,
after the first contexts, the expected time go to stderr. Writes report.html, per_item.csv
and run.json.

Examples:
  parlai-acute metrics rank -t static_contexts --num-contexts 100 -o rank_out/
  parlai-acute metrics rank --data test.jsonl --candidates 20 \\
      --model='-m parlai_acute.agents.hf_transformers:HfTransformersAgent --hf-model /models/gpt2' -o out/
"""
from __future__ import annotations

import argparse
import math

from parlai_acute.scripts.metrics_options import add_test_set_arguments, load_test_set, test_set_description
from parlai_acute.scripts.options import add_confidence, add_output_dir, add_progress, add_resampling, progress

NEEDS = ("models",)  # the extras this command needs beyond the analysis core (main checks them first)

HF_AGENT = "parlai_acute.agents.hf_transformers:HfTransformersAgent"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_test_set_arguments(parser)
    parser.add_argument("-m", "--model", default=None, metavar="MODEL",
                        help="a model that can score replies, as a model string (default: the embedded SmolLM2 "
                             f"GGUF via {HF_AGENT})")
    parser.add_argument("--candidates", type=int, default=20, help="N of hits@1/N, gold included (default: 20)")
    parser.add_argument("--no-parrot", action="store_true", help="leave out the parrot candidate")
    parser.add_argument("--no-end-token", action="store_true",
                        help="do not score the end-of-turn token after each reply (default: scored)")
    parser.add_argument("--rank-by", default="sum", choices=["sum", "mean"],
                        help="rank candidates by total log-probability or per token (default: sum)")
    add_resampling(parser, "bootstrap resamples", "seed of distractors and bootstrap")
    add_confidence(parser, level_alias=True)
    add_output_dir(parser, "the result files")
    add_progress(parser)


def default_model() -> str:
    from parlai_acute.paths import default_gguf

    return f"-m {HF_AGENT} --hf-model {default_gguf()}"


def expected_time(bar, total: int, after: int = 3):
    """``bar.update``, printing once, after the first contexts, how long all of them should take."""
    import sys
    import time

    start, done = time.perf_counter(), [0]

    def update(n: int) -> None:
        bar.update(n)
        done[0] += n
        if done[0] == min(after, total) < total:
            seconds = (time.perf_counter() - start) / done[0] * total
            print(f"ranking {total} contexts: about {seconds:.0f} s expected "
                  f"({seconds / total:.2f} s per context so far)", file=sys.stderr, flush=True)

    return update


def run(args) -> int:
    from parlai_acute.metrics.ranking import RankConfig, rank, scorer_of
    from parlai_acute.metrics.replies import build_agent
    from parlai_acute.metrics.reports import rank_report
    from parlai_acute.files import output_dir
    from parlai_acute.metrics.tables import write_csv, write_run
    from parlai_acute.report.tables import interval_text

    config = RankConfig(candidates=args.candidates, parrot=not args.no_parrot, with_end=not args.no_end_token,
                        rank_by=args.rank_by, seed=args.seed, bootstrap=args.bootstrap, confidence=args.confidence)
    items = load_test_set(args)
    model = args.model or default_model()
    agent = build_agent(model, args.datapath)
    score_fn, tokenisation = scorer_of(agent, config.with_end)
    with progress(args, len(items), "ranking", unit="context") as bar:
        table, summary = rank(items, score_fn, config, expected_time(bar, len(items)))
    with output_dir(args.outdir) as outdir:  # all or nothing
        write_csv(table, outdir / "per_item.csv")
        write_run(outdir, "metrics rank", {**vars(config), "model": model}, {"tokenisation": tokenisation},
                  test_set=test_set_description(args), summary=summary)
        rank_report(summary, table, config, tokenisation).write(outdir)
    names = [k for k in summary if k not in ("contexts", "gold_tokens") and not k.endswith(("_low", "_high", "_note"))]
    print(f"{summary['contexts']} contexts, {summary['gold_tokens']} gold tokens ({tokenisation['model']}, "
          f"{tokenisation['tokenizer']}, end token {'scored' if config.with_end else 'not scored'})")
    for k in names:
        low, high = summary.get(f"{k}_low", math.nan), summary.get(f"{k}_high", math.nan)
        print(f"  {k:<22} {interval_text(summary[k], low, high, why=summary.get(f'{k}_note', ''))}")
    print(f"report: {outdir}/report.html (per_item.csv, run.json)")
    return 0
