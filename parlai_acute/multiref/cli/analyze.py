"""``parlai-acute multiref analyze``: diversity and relevance of collected references, per collection mode.

Each ``--collection MODE=FILE`` is a multi-reference file (DailyDialog layout: JSON lines,
each dialogue a list of turns with 'text' and a 'responses' list) collected in one mode
(4R1W, 2R2W, 1R4W or any name). Or the references table (``--references``, .csv or .jsonl
with the columns of parlai_acute/multiref/references.py), or a run of the multi-reference task
in the Mephisto database (``--task-name``: its complete reply sets). Writes into ``--outdir``:
summary.csv (every mode's measures with their intervals, the same table for every protocol),
contexts.csv (per context Self-BLEU-4, Gt-BLEU-2/4, unique n-grams of the collected replies and
of the original), modes.csv (means with bootstrap intervals over contexts), results.json,
run.json, report.html.

  parlai-acute multiref analyze --collection 4R1W=refs_4r1w.jsonl --collection 1R4W=refs_1r4w.jsonl --outdir multiref_out
  parlai-acute multiref analyze --task-name multiref --outdir multiref_out
"""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError
from parlai_acute.scripts.options import (add_confidence, add_output_dir, add_report_switch, add_resampling,
                                          add_table_source, outputs_line)

NEEDS = ("metrics",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--collection", action="append", metavar="MODE=FILE",
                        help="a multi-reference file and the mode it was collected in (repeatable)")
    add_table_source(parser, "--references", "references", "multi-reference collection", required=False)
    add_output_dir(parser)
    add_resampling(parser, "bootstrap resamples over contexts (0: none)")
    add_confidence(parser)
    add_report_switch(parser)


def load(args):
    """The references table and where it came from: ``--collection`` files, a table file or a Mephisto run."""
    from parlai_acute import api
    from parlai_acute.multiref.references import collection_records

    if bool(args.collection) == bool(args.references or args.task_name):
        raise UserError("give either --collection MODE=FILE (repeatable), or --references FILE, or --task-name")
    if not args.collection:
        table = api.load_table("multiref", args.references, task_name=args.task_name, mephisto_db=args.mephisto_db)
        return table, table.attrs["source"]
    records, modes = [], set()
    for value in args.collection:
        mode, sep, path = value.partition("=")
        if not sep or not mode.strip() or not path.strip():
            raise UserError(f"--collection {value!r} must be MODE=FILE, e.g. 4R1W=refs.jsonl")
        if mode.strip() in modes:
            raise UserError(f"--collection: mode {mode!r} given twice; one file per mode")
        modes.add(mode.strip())
        records += collection_records(path.strip(), mode.strip())
    return api.load_table("multiref", records), ", ".join(args.collection)


def run(args) -> int:
    from parlai_acute.multiref.analysis import MultirefConfig, analyze
    from parlai_acute.multiref.outputs import write_outputs
    from parlai_acute.report.tables import interval_text

    config = MultirefConfig(bootstrap=args.bootstrap, seed=args.seed, confidence=args.confidence)
    table, config.source = load(args)
    result = analyze(table, config)
    paths = write_outputs(result, args.outdir, report=not args.no_report)
    level = f"{100 * args.confidence:g}%"
    print(f"BLEU: {result.signature}; intervals: {level} bootstrap over contexts")
    for r in result.modes.itertuples(index=False):
        self_bleu, gt_bleu = (interval_text(getattr(r, m), getattr(r, f"{m}_low"), getattr(r, f"{m}_high"))
                              for m in ("self_bleu4", "gt_bleu4"))
        print(f"  {r.mode}: {r.contexts} context{'' if r.contexts == 1 else 's'}, {r.replies:.1f} replies each; "
              f"Self-BLEU-4 {self_bleu}; Gt-BLEU-4 {gt_bleu}; unique unigrams {r.unique1_collected:.1f} "
              f"collected vs {r.unique1_original:.1f} original ({r.unique1_new:.1f} new)"
              + (f"\n    {r.note}" if r.note else ""))
    print(outputs_line(paths))
    return 0
