"""``parlai-acute acute analyze``: judgments -> win rates, significance, ranking, report.

Reads a finished Mephisto run (``--task-name``) or a judgments file (``--judgments``) and
writes into ``--outdir``: summary.csv (every reported win rate with its interval over
workers, the same table for every protocol), judgments.csv (kept, tidy), excluded.csv and
exclusions.json (how many and why, A/A checks), pairs.csv (one row per matchup),
winrate_grid.csv and results.json (paper grid: each cell a matchup, the share of judgments the
column model won against the row model; Clopper-Pearson intervals, exact binomial p, Holm p,
marks, workers per matchup and worker-resampling intervals), ranking.csv and ranking.json
(Bradley-Terry; bootstrap or, for separated or small data, profile-likelihood intervals),
agreement.csv (Krippendorff's alpha with a bootstrap interval), workers.csv, reasons.csv,
report.html (self-contained; figures/ and tables/ beside it as SVG/PDF and LaTeX/Markdown)
and run.json (configuration, seed, version, estimands). Every JSON file is strict JSON (null,
never NaN).

  parlai-acute acute analyze --judgments judgments.csv -o acute_out --bootstrap 1000 --seed 0
  parlai-acute acute analyze --task-name my-acute-task --mephisto-db data/database.db -o acute_out
  parlai-acute acute analyze --judgments arena.csv -o arena_out --max-per-worker none --min-reason-chars 0
  parlai-acute acute analyze --judgments arena.csv --style-control --replies replies.csv -o arena_style

With --style-control the ranking is also fitted with the replies' length and markdown held fixed
(Chatbot Arena's style control): ranking_style.csv has the raw and controlled strengths side by
side, style_coefficients.csv the style coefficients; the replies come from --replies (e.g. written
by `acute import --replies`) or from the pairings file's conversations.
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import (add_alpha, add_confidence, add_exclusion_rules, add_output_dir,
                                          add_report_switch, add_resampling, add_table_source, cap_value, outputs_line)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_table_source(parser, "--judgments", "judgments", "ACUTE-Eval")
    add_output_dir(parser)
    parser.add_argument("--pairings", metavar="FILE", default=None,
                        help="the pairings file the judgments came from: the report then lists each model's "
                             "configuration (agent, options, decoding) from its logs (default for --task-name: "
                             "the run's own pairings file)")
    add_resampling(parser, "bootstrap resamples for ranking intervals")
    add_exclusion_rules(parser, "with --task-name the cap the run was launched with, read from the Mephisto "
                                "database; otherwise number of model pairs x questions")
    add_confidence(parser)
    parser.add_argument("--bt-alpha", type=float, default=0.01, metavar="ALPHA",
                        help="Bradley-Terry regularisation: penalty ALPHA * sum(strength^2) keeps strengths finite "
                             "when a model wins every comparison (default: %(default)s; recorded in run.json)")
    parser.add_argument("--min-workers", type=int, default=5,
                        help="warn when a matchup's judgments come from fewer distinct workers than this")
    add_alpha(parser)
    parser.add_argument("--judge-summary", metavar="FILE", default=None,
                        help="summary.json of the `judge acute` run that made --judgments (default: the one beside "
                             "--judgments, if any): a judge that failed onboarding is flagged in the report")
    add_report_switch(parser)
    parser.add_argument("--style-control", action="store_true",
                        help="also rank with reply length and markdown held fixed (logistic Bradley-Terry with style "
                             "covariates, Chatbot Arena's style control); raw and controlled strengths side by side")
    parser.add_argument("--replies", metavar="FILE", default=None,
                        help="with --style-control: the replies' text or style counts per conversation (.csv/.jsonl; "
                             "`acute import --replies` writes Arena's); default: the conversations of the pairings file")
    parser.add_argument("--judge-table", metavar="FILE", default=None,
                        help="a model judge's table of the same protocol: also report the prediction-powered "
                             "result beside the people's (ppi.json; see `parlai-acute ppi`)")


def load(args, config) -> "pd.DataFrame":
    """The judgments table; records where it came from in ``config``, and for a Mephisto run
    the per-worker cap the run was launched with unless ``--max-per-worker`` says otherwise."""
    from parlai_acute import api

    if config.max_per_worker is not None:
        config.cap_source = "--max-per-worker"
    return api.load_table("acute", args.judgments, task_name=args.task_name, mephisto_db=args.mephisto_db)


def replies(args):
    """With --style-control, the replies' style: --replies, else the pairings file's conversations."""
    if not args.style_control:
        if args.replies:
            from parlai_acute.errors import UserError

            raise UserError("--replies is read for --style-control only; add --style-control or drop --replies")
        return None
    from parlai_acute.acute import replies as R

    if args.replies:
        return R.read_replies(args.replies)
    if not args.pairings:
        from parlai_acute.errors import UserError

        raise UserError("--style-control needs the replies' text: pass --replies FILE (e.g. from `acute import "
                        "--replies`) or --pairings FILE (the conversations that were judged)")
    from parlai_acute.acute.pairings import read_pairings

    return R.replies_from_pairings(read_pairings(args.pairings))


def judge_summaries(args) -> list:
    """The model-judge run's summary (given, or summary.json beside --judgments), if any."""
    if not args.judge_summary and not args.judgments:  # a Mephisto run: people, no judge summary
        return []
    from parlai_acute.judges.record import read_summary

    summary = read_summary(args.judge_summary, args.judgments)
    return [summary] if summary and summary.get("protocol") == "acute" else []


def run(args) -> int:
    import contextlib
    import io

    from parlai_acute import api
    from parlai_acute.acute.analysis import AnalysisConfig, write_outputs
    from parlai_acute.acute.summary import summary_lines
    from parlai_acute.files import check_outdir, output_dir

    config = AnalysisConfig(bootstrap=args.bootstrap, seed=args.seed, max_per_worker=cap_value(args.max_per_worker),
                            min_reason_chars=args.min_reason_chars, confidence=args.confidence,
                            bt_alpha=args.bt_alpha, alpha=args.alpha,
                            min_workers=args.min_workers, style_control=args.style_control)
    check_outdir(args.outdir)
    if args.pairings:  # the user's must be there (the run's own, found below, may have moved since)
        from parlai_acute.jsonl import input_file

        input_file(args.pairings, "pairings file", "pass the pairings .jsonl the task was launched with")
    table = load(args, config)
    if args.task_name and not args.pairings:  # the run's own pairings: the models' configurations
        from parlai_acute.mephisto_tasks.acute.store import run_pairings_file

        args.pairings = run_pairings_file(args.task_name, args.mephisto_db)
    # a model judge's run: not capped as a worker is, its onboarding and position bias flagged
    result = api.analyze("acute", table, config, warn=False, judges=judge_summaries(args) or None,
                         replies=replies(args))
    from parlai_acute.acute.pairings import model_configs

    configs = model_configs(args.pairings) if args.pairings else None
    with output_dir(args.outdir), contextlib.redirect_stdout(io.StringIO()) as judged:  # all or nothing
        paths = write_outputs(result, args.outdir, model_configs=configs, report=not args.no_report)
        if args.judge_table:
            from parlai_acute.scripts.ppi import beside_analysis

            beside_analysis(result.kept, args.judge_table, "acute", args.confidence, args.outdir)
    print("\n".join(summary_lines(result)))  # printed once every file is in place
    print(judged.getvalue(), end="")
    print(outputs_line(paths))  # the last line: where the report is
    return 0
