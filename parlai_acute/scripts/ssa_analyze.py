"""``parlai-acute ssa analyze``: SSA labels -> sensibleness, specificity, SSA with intervals and a report.

Reads labels from a file (``--labels``, .csv or .jsonl with the columns of
parlai_acute/ssa/labels.py) or from a run of the SSA labelling task in the Mephisto
database (``--task-name``), and writes into ``--outdir``: models.csv (sensibleness,
specificity and SSA per model, exact and cluster-bootstrap intervals), pairs.csv
(pairwise differences, bootstrap and Fisher tests, Holm), items.csv (majority labels),
agreement.csv (percent agreement, Krippendorff's alpha with a bootstrap interval),
workers.csv, results.json (strict JSON), run.json (configuration, seed, version) and
report.html.

  parlai-acute ssa analyze --labels labels.csv --outdir ssa_results
  parlai-acute ssa analyze --task-name my-ssa-task --outdir ssa_results
"""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--labels", metavar="FILE", help="read the labels table from a .csv or .jsonl file")
    source.add_argument("--task-name", help="read every label stored for this Mephisto SSA labelling task")
    parser.add_argument("--mephisto-db", metavar="PATH", default=None,
                        help="Mephisto database.db (default: the one in Mephisto's configured data directory)")
    parser.add_argument("--outdir", required=True, help="directory for the tables, JSON results and report")
    parser.add_argument("--bootstrap", type=int, default=1000, help="cluster-bootstrap resamples (0: none)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap")
    parser.add_argument("--confidence", type=float, default=0.95, help="level of every interval")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="significance level of the marks (* p < alpha, ** p < alpha/5; Holm, cluster-aware)")
    parser.add_argument("--unit", choices=["auto", "conversation", "context", "worker"], default="auto",
                        help="cluster of the marks: auto = the conversation for interactive/log items, else the "
                             "context; worker = each worker's labels move together (static labelling)")
    parser.add_argument("--permutations", type=int, default=10_000,
                        help="sign patterns / arrangements of the cluster-aware tests (all of them when fewer exist)")
    parser.add_argument("--min-workers", type=int, default=5, help="flag models labelled by fewer workers")
    parser.add_argument("--no-report", action="store_true", help="write tables and JSON only")


def load(args):
    """The labels table and where it came from."""
    from parlai_acute.ssa.labels import labels_table, read_labels

    if args.labels:
        return read_labels(args.labels), str(args.labels)
    from parlai_acute.mephisto_tasks.database import open_mephisto_db

    db = open_mephisto_db(args.mephisto_db)
    # static labelling runs, and interactive SSA runs of the per-turn chat task (label_mode=ssa)
    from parlai_acute.mephisto_tasks.per_turn import store as per_turn_store

    records = per_turn_store.labels_for_task(db, args.task_name)
    try:
        from parlai_acute.mephisto_tasks.ssa_label.store import labels_for_task
    except ModuleNotFoundError:
        labels_for_task = None
    if labels_for_task is not None:
        records = records + labels_for_task(db, args.task_name)
    if not records:
        raise UserError(f"Mephisto task {args.task_name!r} has no stored SSA labels; check the task name and that "
                        f"workers have labelled replies")
    return labels_table(records), f"Mephisto task {args.task_name}"


def _pct(x) -> str:
    return "  n/a" if x != x else f"{100 * x:5.1f}"


def run(args) -> int:
    from parlai_acute.ssa.analysis import SSAConfig, analyze, write_outputs
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
    for m in result.models.itertuples(index=False):
        parts = [f"{_pct(getattr(m, q))} [{_pct(getattr(m, q + '_boot_low'))}, {_pct(getattr(m, q + '_boot_high'))}]"
                 for q in ("sensibleness", "specificity", "ssa")]
        print(f"  {m.model:<14} " + " / ".join(parts) + f"  ({m.items} items, {m.workers} workers)")
    for p in result.pairs.itertuples(index=False):
        interval = (f" [{100 * p.cluster_low:+.1f}, {100 * p.cluster_high:+.1f}]" if p.cluster_low == p.cluster_low
                    else "")
        verdict = (f"p={p.cluster_pvalue:.3g} holm={p.cluster_p_holm:.3g}{p.mark}" if p.cluster_pvalue == p.cluster_pvalue
                   else "no mark")
        exact = (f"  | Fisher exact, items independent: p={p.fisher_pvalue:.3g}" if p.fisher_pvalue == p.fisher_pvalue
                 else "")
        if abs(p.cluster_estimate - p.diff) > 1e-9:  # e.g. per worker: the mean of each worker's own difference
            interval = f" ({p.unit}-level {100 * p.cluster_estimate:+.1f}{interval})"
        print(f"  {p.measure} {p.model_b} - {p.model_a}: {100 * p.diff:+.1f} points{interval} {verdict} "
              f"({p.cluster_note or f'{p.clusters} {p.unit}s'}){exact}")
    for a in result.agreement.itertuples(index=False):
        print(f"  agreement {a.question}: {a.items} items, {_pct(a.percent_agreement).strip()}% agree, "
              f"Krippendorff's alpha {a.krippendorff_alpha:.3f} [{a.alpha_low:.3f}, {a.alpha_high:.3f}]"
              + (f" ({a.note})" if a.note else ""))
    for note in result.notes:
        print(f"note: {note}")
    print(f"marks: {legend(config.alpha)}")
    print(f"intervals of differences: {level}, inverted cluster-aware test")
    print(f"results: {paths['results.json']}" + (f", report: {paths['report.html']}" if "report.html" in paths else ""))
    return 0
