"""``parlai-acute multiref analyze``: diversity and relevance of collected references, per collection mode.

Each ``--collection MODE=FILE`` is a multi-reference file (DailyDialog layout: JSON lines,
each dialogue a list of turns with 'text' and a 'responses' list) collected in one mode
(4R1W, 2R2W, 1R4W or any name). Writes into ``--outdir``: contexts.csv (per context
Self-BLEU-4, Gt-BLEU-2/4, unique n-grams of the collected replies and of the original),
modes.csv (means with bootstrap intervals over contexts), results.json, run.json, report.html.

  parlai-acute multiref analyze --collection 4R1W=refs_4r1w.jsonl --collection 1R4W=refs_1r4w.jsonl --outdir multiref_out
"""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError
from parlai_acute.scripts.options import add_confidence, add_output_dir, add_report_switch, add_resampling


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--collection", action="append", required=True, metavar="MODE=FILE",
                        help="a multi-reference file and the mode it was collected in (repeatable)")
    add_output_dir(parser)
    add_resampling(parser, "bootstrap resamples over contexts (0: none)")
    add_confidence(parser)
    add_report_switch(parser)


def run(args) -> int:
    from parlai_acute.multiref.analysis import analyze, read_collection, write_outputs

    collections = {}
    for value in args.collection:
        mode, sep, path = value.partition("=")
        if not sep or not mode.strip() or not path.strip():
            raise UserError(f"--collection {value!r} must be MODE=FILE, e.g. 4R1W=refs.jsonl")
        if mode in collections:
            raise UserError(f"--collection: mode {mode!r} given twice; one file per mode")
        collections[mode.strip()] = read_collection(path.strip())
    if args.bootstrap < 0 or not 0 < args.confidence < 1:
        raise UserError("--bootstrap must be 0 or more and --confidence between 0 and 1")
    result = analyze(collections, args.bootstrap, args.seed, args.confidence)
    paths = write_outputs(result, args.outdir, report=not args.no_report)
    level = f"{100 * args.confidence:g}%"
    print(f"BLEU: {result.signature}; intervals: {level} bootstrap over contexts")
    for r in result.modes.itertuples(index=False):
        print(f"  {r.mode}: {r.contexts} contexts, {r.replies:.1f} replies each; Self-BLEU-4 {r.self_bleu4:.3f} "
              f"[{r.self_bleu4_low:.3f}, {r.self_bleu4_high:.3f}]; Gt-BLEU-4 {r.gt_bleu4:.3f} "
              f"[{r.gt_bleu4_low:.3f}, {r.gt_bleu4_high:.3f}]; unique unigrams {r.unique1_collected:.1f} "
              f"collected vs {r.unique1_original:.1f} original ({r.unique1_new:.1f} new)")
    print(f"results: {paths['results.json']}" + (f", report: {paths['report.html']}" if "report.html" in paths else ""))
    return 0
