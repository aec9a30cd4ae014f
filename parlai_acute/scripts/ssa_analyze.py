"""``parlai-acute ssa analyze``: SSA labels -> sensibleness, specificity, SSA with intervals and a report.

Reads labels from a file (``--labels``, .csv or .jsonl with the columns of
parlai_acute/ssa/labels.py) or from a run of the SSA labelling task in the Mephisto
database (``--task-name``), and writes into ``--outdir``: models.csv (sensibleness,
specificity and SSA per model, exact and cluster-bootstrap intervals), pairs.csv
(pairwise differences; the mark from a cluster-aware test over conversations, contexts or
workers (--unit) with its interval, Fisher's exact test beside it, Holm), items.csv (majority labels),
agreement.csv (percent agreement, Krippendorff's alpha with a bootstrap interval),
workers.csv, results.json (strict JSON), run.json (configuration, seed, version) and
report.html.

  parlai-acute ssa analyze --labels labels.csv --outdir ssa_results
  parlai-acute ssa analyze --task-name my-ssa-task --outdir ssa_results
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import (add_confidence, add_output_dir, add_report_switch, add_resampling,
                                          add_table_source, outputs_line)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_table_source(parser, "--labels", "labels", "SSA labelling or per-turn (label_mode=ssa)")
    add_output_dir(parser)
    add_resampling(parser, "cluster-bootstrap resamples (0: none)")
    add_confidence(parser)
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="significance level of the marks (* p < alpha, ** p < alpha/5; Holm, cluster-aware)")
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


def _pct(x) -> str:
    return "  n/a" if x != x else f"{100 * x:5.1f}"


def _rate(m, q: str) -> tuple[str, bool]:
    """'value [low, high]' from the cluster bootstrap; where it gives none, the exact interval
    (marked ``+``: labels independent) rather than an impossible '[ n/a, n/a]'."""
    value, low, high = getattr(m, q), getattr(m, q + "_boot_low"), getattr(m, q + "_boot_high")
    if low == low:
        return f"{_pct(value)} [{_pct(low)}, {_pct(high)}]", False
    low, high = getattr(m, q + "_exact_low", float("nan")), getattr(m, q + "_exact_high", float("nan"))
    if low == low:
        return f"{_pct(value)} [{_pct(low)}, {_pct(high)}]+", True
    return f"{_pct(value)} [no interval]", False


def run(args) -> int:
    from parlai_acute.ssa.analysis import SSAConfig, analyze
    from parlai_acute.ssa.outputs import write_outputs
    from parlai_acute.stats.inference import legend

    config = SSAConfig(bootstrap=args.bootstrap, seed=args.seed, confidence=args.confidence, alpha=args.alpha,
                       min_workers=args.min_workers, unit=args.unit, permutations=args.permutations)
    df, config.source = load(args)
    result = analyze(df, config)
    paths = write_outputs(result, args.outdir, report=not args.no_report)
    s = result.summary()
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
              f"(every resample agrees, or too few workers); [no interval]: neither can be given")
    for p in result.pairs.itertuples(index=False):
        interval = (f" [{100 * p.cluster_low:+.1f}, {100 * p.cluster_high:+.1f}]" if p.cluster_low == p.cluster_low
                    else "")
        if abs(p.cluster_estimate - p.diff) > 1e-9:  # e.g. per worker: the mean of each worker's own difference
            interval = f" ({p.unit}-level {100 * p.cluster_estimate:+.1f}{interval})"
        verdict = (f"p={p.cluster_pvalue:.3g} holm={p.cluster_p_holm:.3g}{p.mark}" if p.cluster_pvalue == p.cluster_pvalue
                   else "no mark")
        exact = (f"  | Fisher exact, items independent: p={p.fisher_pvalue:.3g}" if p.fisher_pvalue == p.fisher_pvalue
                 else "")
        print(f"  {p.measure} {p.model_b} - {p.model_a}: {100 * p.diff:+.1f} points{interval} {verdict} "
              f"({p.cluster_note or f'{p.clusters} {p.unit}s'}){exact}")
    for a in result.agreement.itertuples(index=False):
        alpha = ("undefined" if a.krippendorff_alpha != a.krippendorff_alpha else f"{a.krippendorff_alpha:.3f} "
                 + ("[no interval]" if a.alpha_low != a.alpha_low else f"[{a.alpha_low:.3f}, {a.alpha_high:.3f}]"))
        print(f"  agreement {a.question}: {a.items} items, {_pct(a.percent_agreement).strip()}% agree, "
              f"Krippendorff's alpha {alpha}" + (f" ({a.note})" if a.note else ""))
    for note in result.notes:
        print(f"note: {note}")
    print(f"marks: {legend(config.alpha)}")
    print(f"intervals of differences: {level}, inverted cluster-aware test")
    print(outputs_line(paths))
    if args.judge_table:
        from parlai_acute.scripts.ppi import beside_analysis

        beside_analysis(df, args.judge_table, "ssa", 1 - args.confidence, args.outdir)
    return 0
