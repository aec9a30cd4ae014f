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
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level")
    parser.add_argument("--min-workers", type=int, default=5, help="flag models labelled by fewer workers")
    parser.add_argument("--no-report", action="store_true", help="write tables and JSON only")
    parser.add_argument("--judge-table", metavar="FILE", default=None,
                        help="a model judge's table of the same protocol: also report the prediction-powered "
                             "result beside the people's (ppi.json; see `parlai-acute ppi`)")


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

    config = SSAConfig(bootstrap=args.bootstrap, seed=args.seed, confidence=args.confidence, alpha=args.alpha,
                       min_workers=args.min_workers)
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
    for p in result.pairs[result.pairs["measure"] == "ssa"].itertuples(index=False):
        print(f"  SSA {p.model_b} - {p.model_a}: {100 * p.diff:+.1f} points [{100 * p.boot_low:+.1f}, "
              f"{100 * p.boot_high:+.1f}] p={p.boot_pvalue:.3g} holm={p.boot_p_holm:.3g}{p.mark}")
    for a in result.agreement.itertuples(index=False):
        alpha = ("undefined" if a.krippendorff_alpha != a.krippendorff_alpha else f"{a.krippendorff_alpha:.3f} "
                 + ("[no interval]" if a.alpha_low != a.alpha_low else f"[{a.alpha_low:.3f}, {a.alpha_high:.3f}]"))
        print(f"  agreement {a.question}: {a.items} items, {_pct(a.percent_agreement).strip()}% agree, "
              f"Krippendorff's alpha {alpha}" + (f" ({a.note})" if a.note else ""))
    for note in result.notes:
        print(f"note: {note}")
    print(f"results: {paths['results.json']}" + (f", report: {paths['report.html']}" if "report.html" in paths else ""))
    if args.judge_table:
        from parlai_acute.scripts.ppi import beside_analysis

        beside_analysis(df, args.judge_table, "ssa", 1 - args.confidence, args.outdir)
    return 0
