"""``parlai-acute acute analyze``: judgments -> win rates, significance, ranking, report.

Reads a finished Mephisto run (``--task-name``) or a judgments file (``--judgments``) and
writes into ``--outdir``: judgments.csv (kept, tidy), excluded.csv and exclusions.json
(how many and why, A/A checks), matchups.csv, winrate_grid.csv and winrates.json (paper
grid: row = loser, column = winner; Clopper-Pearson intervals, exact binomial p, Holm p,
marks, workers per matchup and worker-resampling intervals), ranking.csv and ranking.json
(Bradley-Terry; bootstrap or, for separated or small data, profile-likelihood intervals),
agreement.json (Krippendorff's alpha with a bootstrap interval), workers.csv, reasons.csv,
report.html (self-contained; figures/ and tables/ beside it as SVG/PDF and LaTeX/Markdown)
and run.json (configuration, seed, version). Every JSON file is strict JSON (null, never NaN).
"""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--task-name", help="read the finished run of this Mephisto task from the Mephisto database")
    source.add_argument("--judgments", metavar="FILE", help="read judgments from a .jsonl or .csv file")
    parser.add_argument("--mephisto-db", metavar="PATH", default=None,
                        help="Mephisto database.db; its directory is used as Mephisto's data directory "
                             "(default: the database in Mephisto's configured data directory)")
    parser.add_argument("--outdir", required=True, help="directory for the tables, JSON results and report.html")
    parser.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for ranking intervals")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the bootstrap")
    parser.add_argument("--max-per-worker", type=int, default=None,
                        help="cap on judgments per worker (default: with --task-name the cap the run was launched "
                             "with, read from the Mephisto database; otherwise number of model pairs x questions)")
    parser.add_argument("--min-reason-chars", type=int, default=3,
                        help="a reason with fewer letters/digits counts as no reason")
    parser.add_argument("--confidence", type=float, default=0.95, help="level of every interval")
    parser.add_argument("--bt-alpha", type=float, default=0.01, metavar="ALPHA",
                        help="Bradley-Terry regularisation: penalty ALPHA * sum(strength^2) keeps strengths finite "
                             "when a model wins every comparison (default: %(default)s; recorded in run.json)")
    parser.add_argument("--min-workers", type=int, default=5,
                        help="warn when a matchup's judgments come from fewer distinct workers than this")


def load(args, config) -> "pd.DataFrame":
    """The judgments table; records where it came from in ``config``, and for a Mephisto run
    the per-worker cap the run was launched with unless ``--max-per-worker`` says otherwise."""
    from parlai_acute.acute import judgments

    if config.max_per_worker is not None:
        config.cap_source = "--max-per-worker"
    if args.judgments:
        config.source = str(args.judgments)
        return judgments.read_judgments(args.judgments)
    from parlai_acute.mephisto_tasks.acute_eval.store import judgments_from_mephisto_db, stored_cap
    from parlai_acute.mephisto_tasks.database import open_mephisto_db

    db = open_mephisto_db(args.mephisto_db)
    df = judgments_from_mephisto_db(args.task_name, db=db)
    config.source = f"Mephisto task {args.task_name}"
    if config.max_per_worker is None:
        cap, where = stored_cap(db, args.task_name)
        config.max_per_worker = cap
        config.cap_source = f"as launched, {where}" if cap else f"default: model pairs x questions ({where})"
    return df


def _interval(low, high, percent: bool = False) -> str:
    if low != low or high != high:  # NaN: none can be given
        return "[none]"
    return f"[{100 * low:.1f}%, {100 * high:.1f}%]" if percent else f"[{low:+.3f}, {high:+.3f}]"


def print_result(result) -> None:
    """The summary printed by the command: exclusions, matchups, ranking, warnings."""
    why = ", ".join(f"{r['reason']}: {r['judgments']}" for r in result.exclusion_summary() if r["judgments"])
    print(f"{len(result.kept)} judgments kept, {len(result.excluded)} excluded" + (f" ({why})" if why else ""))
    print(f"per-worker cap: {result.cap} ({result.config.cap_source or 'default: model pairs x questions'})")
    simulated, workers = result.simulated_workers()
    if simulated:
        print(f"NOTE: {simulated} of {workers} workers are SIMULATED (scripted), not people")
    level = f"{100 * result.config.confidence:g}%"
    for q in result.questions:
        print(f"question {q.question_key}: win rate [{level} Clopper-Pearson], p, Holm p, workers")
        for m in q.matchups.itertuples(index=False):
            print(f"  {m.model_b} vs {m.model_a}: {100 * m.winrate_b:.1f}% ({m.wins_b}/{m.n}) "
                  f"{_interval(m.ci_low, m.ci_high, True)} p={m.pvalue:.3g} holm={m.p_holm:.3g}{m.mark} "
                  f"{m.workers} worker{'s' if m.workers != 1 else ''}" + (" (FEW)" if m.few_workers else ""))
        if q.ranking is not None:
            print(f"  Bradley-Terry strength [{level} {q.ranking['interval'].iloc[0] or 'no'} interval] "
                  f"[{level} resampling workers]")
            for r in q.ranking.itertuples(index=False):
                print(f"  {r.rank}. {r.model} {r.strength:+.3f} {_interval(r.ci_low, r.ci_high)} "
                      f"{_interval(r.ci_low_workers, r.ci_high_workers)}" + (f" ({r.note})" if r.note else ""))
        else:
            print(f"  no ranking: {q.ranking_error}")
        if q.agreement["note"]:
            print(f"  agreement: {q.agreement['note']}")
        else:
            a = q.agreement
            print(f"  agreement: {a['items']} items judged twice or more, {100 * a['percent_agreement']:.1f}% agree, "
                  f"Krippendorff's alpha {a['krippendorff_alpha']:.3f} "
                  f"{_interval(a['alpha_ci_low'], a['alpha_ci_high'])}")
        for warning in q.warnings():
            print(f"  WARNING: {warning}")


def run(args) -> int:
    from parlai_acute.acute.analysis import AnalysisConfig, analyze, check_outdir, write_outputs

    config = AnalysisConfig(bootstrap=args.bootstrap, seed=args.seed, max_per_worker=args.max_per_worker,
                            min_reason_chars=args.min_reason_chars, confidence=args.confidence,
                            bt_alpha=args.bt_alpha,
                            min_workers=args.min_workers)
    check_outdir(args.outdir)
    df = load(args, config)
    result = analyze(df, config)
    paths = write_outputs(result, args.outdir)
    print_result(result)
    print(f"report: {paths['report.html']}")
    return 0
