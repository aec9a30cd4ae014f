"""``parlai-acute ssa analyze``: SSA labels -> sensibleness, specificity, SSA with intervals and a report.

Reads labels from a file (``--labels``, .csv or .jsonl with the columns of
parlai_acute/ssa/labels.py) or from a run of the SSA labelling task in the Mephisto
database (``--task-name``), and writes into ``--outdir``: summary.csv (every reported
estimate with its interval, the same table for every protocol), models.csv (sensibleness,
specificity and SSA per model, exact and cluster-bootstrap intervals), pairs.csv
(pairwise differences; the mark from a cluster-aware test over conversations, contexts or
workers (--unit) with its interval, Fisher's exact test beside it, Holm), items.csv (majority labels),
agreement.csv (percent agreement, Krippendorff's alpha with a bootstrap interval),
workers.csv, results.json (strict JSON), run.json (configuration, seed, version, estimands)
and report.html.

  parlai-acute ssa analyze --labels labels.csv --outdir ssa_results
  parlai-acute ssa analyze --task-name my-ssa-task --outdir ssa_results
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import (add_alpha, add_confidence, add_output_dir, add_report_switch, add_resampling,
                                          add_table_source, outputs_line)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_table_source(parser, "--labels", "labels", "SSA labelling or per-turn (label_mode=ssa)")
    add_output_dir(parser)
    add_resampling(parser, "cluster-bootstrap resamples (0: none)")
    add_confidence(parser)
    add_alpha(parser)
    parser.add_argument("--unit", choices=["auto", "conversation", "context", "worker"], default="auto",
                        help="cluster of the marks: auto = the conversation for interactive/log items, else the "
                             "context; worker = each worker's labels move together (static labelling)")
    parser.add_argument("--permutations", type=int, default=10_000,
                        help="sign patterns / arrangements of the cluster-aware tests (all of them when fewer exist)")
    parser.add_argument("--min-workers", type=int, default=5, help="flag models labelled by fewer workers")
    add_report_switch(parser)
    parser.add_argument("--judge-table", metavar="FILE", default=None,
                        help="a model judge's table of the same protocol: also report the prediction-powered "
                             "result beside the people's (ppi.json; see `parlai-acute ppi`)")


def load(args):
    """The labels table and where it came from: a file, or a Mephisto run (static labelling, and
    interactive SSA inside per-turn chats)."""
    from parlai_acute import api

    table = api.load_table("ssa", args.labels, task_name=args.task_name, mephisto_db=args.mephisto_db)
    return table, table.attrs["source"]


def _rate(m, q: str) -> tuple[str, bool]:
    """'value [low, high]' (percent, by the one rule: report.tables.interval_text) from the
    cluster bootstrap; where it gives none, the exact interval (marked ``+``: labels
    independent) rather than an impossible '[nan, nan]'; "(no interval)" where neither exists."""
    from parlai_acute.report.tables import has_interval, interval_text

    value, low, high = getattr(m, q), getattr(m, q + "_boot_low"), getattr(m, q + "_boot_high")
    if has_interval(low, high):
        return interval_text(value, low, high, 1, scale=100), False
    low, high = getattr(m, q + "_exact_low", float("nan")), getattr(m, q + "_exact_high", float("nan"))
    if has_interval(low, high):
        return interval_text(value, low, high, 1, scale=100) + "+", True
    return interval_text(value, low, high, 1, scale=100), False


def _levels(p) -> str:
    if p.unit == "worker x context":
        return f"workers and contexts sampled, {p.clusters} levels of the smaller"
    return f"{p.clusters} {p.unit}s"


def run(args) -> int:
    import contextlib
    import io

    from parlai_acute.files import output_dir
    from parlai_acute.report.tables import bounds_text, interval_text, number_text
    from parlai_acute.ssa.analysis import SSAConfig, analyze
    from parlai_acute.ssa.outputs import write_outputs
    from parlai_acute.stats.inference import legend

    config = SSAConfig(bootstrap=args.bootstrap, seed=args.seed, confidence=args.confidence, alpha=args.alpha,
                       min_workers=args.min_workers, unit=args.unit, permutations=args.permutations)
    df, config.source = load(args)
    result = analyze(df, config)
    with output_dir(args.outdir), contextlib.redirect_stdout(io.StringIO()) as judged:  # all or nothing
        paths = write_outputs(result, args.outdir, report=not args.no_report)
        if args.judge_table:
            from parlai_acute.scripts.ppi import beside_analysis

            beside_analysis(df, args.judge_table, "ssa", args.confidence, args.outdir)
    s = result.meta()
    print(f"{s['labels']} labels of {s['items']} items by {s['workers']} workers ({', '.join(s['sources'])})")
    level = f"{100 * config.confidence:g}%"
    print(f"model: sensibleness / specificity / SSA, % [{level} cluster bootstrap, {config.bootstrap} resamples]")
    exact = False
    for m in result.models.itertuples(index=False):
        parts = [_rate(m, q) for q in ("sensibleness", "specificity", "ssa")]
        exact |= any(flag for _, flag in parts)
        print(f"  {m.model:<14} " + " / ".join(text for text, _ in parts) + f"  ({m.items} items, {m.workers} workers)")
    if exact:
        print(f"  +: {level} exact Clopper-Pearson (items independent), where the cluster bootstrap gives no interval "
              f"(every resample agrees, or too few workers); (no interval): neither can be given")
    for p in result.pairs.itertuples(index=False):
        interval = bounds_text(p.cluster_low, p.cluster_high, 1, scale=100, signed=True)
        interval = f" {interval}" if interval else ""
        if abs(p.cluster_estimate - p.diff) > 1e-9:  # e.g. per worker: the mean of each worker's own difference
            estimate = interval_text(p.cluster_estimate, p.cluster_low, p.cluster_high, 1, scale=100, signed=True)
            interval = f" ({p.unit}-level {estimate})"
        verdict = (f"p={p.cluster_pvalue:.3g} holm={p.cluster_p_holm:.3g}{p.mark}" if p.cluster_pvalue == p.cluster_pvalue
                   else "no mark")
        exact = (f"  | Fisher exact, items independent: p={p.fisher_pvalue:.3g}" if p.fisher_pvalue == p.fisher_pvalue
                 else "")
        print(f"  {p.measure} {p.model_b} - {p.model_a}: {number_text(p.diff, 1, scale=100, signed=True)} points"
              f"{interval} {verdict} "
              f"({p.cluster_note or _levels(p)}){exact}")
    for a in result.agreement.itertuples(index=False):
        alpha = interval_text(a.krippendorff_alpha, a.alpha_low, a.alpha_high)
        agree = number_text(a.percent_agreement, 1, scale=100, unit="% agree")
        print(f"  agreement {a.question}: {a.items} items, {'no percent agreement' if agree == 'undefined' else agree}, "
              f"Krippendorff's alpha {alpha}" + (f" ({a.note})" if a.note else ""))
    for note in result.notes:
        print(f"note: {note}")
    if result.design:
        print(f"design: {result.design}")
    print(f"marks: {legend(config.alpha)}")
    crossed = bool(len(result.pairs)) and (result.pairs["unit"] == "worker x context").any()
    print(f"intervals of differences: {level}, "
          + ("two-way cluster-robust t over workers and contexts" if crossed else "inverted cluster-aware test"))
    print(judged.getvalue(), end="")  # the judge's lines, printed once every file is in place
    print(outputs_line(paths))  # the last line: where the report is
    return 0
