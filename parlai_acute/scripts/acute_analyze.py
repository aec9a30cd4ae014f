"""``parlai-acute acute analyze``: judgments -> win rates, significance, ranking, report.

Reads a finished Mephisto run (``--task-name``) or a judgments file (``--judgments``) and
writes into ``--outdir``: judgments.csv (kept, tidy), excluded.csv and exclusions.json
(how many and why, A/A checks), matchups.csv, winrate_grid.csv and winrates.json (paper
grid: row = loser, column = winner; exact binomial p, Holm p, marks), ranking.csv and
ranking.json (Bradley-Terry with bootstrap intervals), agreement.json, workers.csv,
reasons.csv, report.html (self-contained) and run.json (configuration, seed, version).
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
                        help="cap on judgments per worker (default: number of model pairs x questions)")
    parser.add_argument("--min-reason-chars", type=int, default=3,
                        help="a reason with fewer letters/digits counts as no reason")
    parser.add_argument("--confidence", type=float, default=0.95, help="level of the bootstrap intervals")


def load(args) -> tuple:
    """The judgments table and a description of where it came from."""
    from parlai_acute.acute import judgments

    if args.judgments:
        return judgments.read_judgments(args.judgments), str(args.judgments)
    db = judgments.open_mephisto_db(args.mephisto_db)
    return judgments.judgments_from_mephisto_db(args.task_name, db=db), f"Mephisto task {args.task_name}"


def run(args) -> int:
    from parlai_acute.acute.analysis import AnalysisConfig, analyze, write_outputs

    config = AnalysisConfig(bootstrap=args.bootstrap, seed=args.seed, max_per_worker=args.max_per_worker,
                            min_reason_chars=args.min_reason_chars, confidence=args.confidence)
    df, config.source = load(args)
    result = analyze(df, config)
    paths = write_outputs(result, args.outdir)
    why = ", ".join(f"{r['reason']}: {r['judgments']}" for r in result.exclusion_summary() if r["judgments"])
    print(f"{len(result.kept)} judgments kept, {len(result.excluded)} excluded" + (f" ({why})" if why else ""))
    for q in result.questions:
        print(f"question {q.question_key}:")
        for m in q.matchups.itertuples(index=False):
            print(f"  {m.model_b} vs {m.model_a}: {100 * m.winrate_b:.1f}% ({m.wins_b}/{m.n}) "
                  f"p={m.pvalue:.3g} holm={m.p_holm:.3g}{m.mark}")
        if q.ranking is not None:
            for r in q.ranking.itertuples(index=False):
                print(f"  {r.rank}. {r.model} {r.strength:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]")
        else:
            print(f"  no ranking: {q.ranking_error}")
    print(f"report: {paths['report.html']}")
    return 0
