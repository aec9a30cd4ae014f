"""``parlai-acute convai2 analyze``: end-of-chat ratings -> Likert means, calibrated scores, persona detection.

Reads a ratings table (``--ratings``, .csv or .jsonl: dialogue, worker, model, question,
score, and optionally persona_choice_correct, reason; see parlai_acute/convai2/ratings.py),
or the ConvAI2 survey answered at the end of per-turn chats (``--task-name``, a per-turn
run launched with ``mephisto.blueprint.survey=convai2``), and writes into ``--outdir``:
summary.csv (every reported estimate with its interval, the same table for every protocol),
models.csv (per question and model: raw mean with t and worker-bootstrap intervals, calibrated
posterior mean and sd, ranks), pairs.csv (differences between models, tested over workers),
persona.csv (detection rate with a Clopper-Pearson interval), workers.csv (posterior bias per
worker), results.json (strict JSON), run.json (configuration, seed, version, estimands),
report.html.

  parlai-acute convai2 analyze --ratings ratings.csv --outdir convai2_results
  parlai-acute convai2 analyze --task-name my-per-turn-task --mephisto-db data/database.db -o convai2_results
  parlai-acute convai2 analyze --ratings ratings.csv --outdir out --variances estimate --gibbs 2000
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import (add_alpha, add_confidence, add_output_dir, add_report_switch, add_resampling,
                                          add_table_source, outputs_line)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_table_source(parser, "--ratings", "ratings", "per-turn (survey=convai2)")
    add_output_dir(parser)
    parser.add_argument("--variances", choices=["fixed", "estimate"], default="fixed",
                        help="fixed: annotator-bias and noise sd as given (default 1 and 1, as Kulikov et al.); "
                             "estimate: REML estimates (statsmodels MixedLM), then the same posterior")
    parser.add_argument("--sigma-b", type=float, default=1.0, help="prior sd of annotator bias (fixed variances)")
    parser.add_argument("--sigma-e", type=float, default=1.0, help="sd of the noise (fixed variances)")
    parser.add_argument("--gibbs", type=int, default=0, metavar="ITERATIONS",
                        help="also run the Gibbs sampler this long and record its distance to the closed form")
    parser.add_argument("--scale", type=int, nargs=2, default=[1, 4], metavar=("LOW", "HIGH"),
                        help="the Likert scale the study used; scores outside it are rejected (default: 1 4, ConvAI2)")
    add_resampling(parser, "worker-bootstrap resamples (0: none)", "random seed (bootstrap, Gibbs)")
    add_confidence(parser)
    add_alpha(parser)
    add_report_switch(parser)


def run(args) -> int:
    from parlai_acute.convai2.analysis import ConvAI2Config, analyze
    from parlai_acute.convai2.outputs import write_outputs
    from parlai_acute import api
    from parlai_acute.report.tables import interval_text, number_text

    config = ConvAI2Config(bootstrap=args.bootstrap, seed=args.seed, confidence=args.confidence,
                           variances=args.variances, sigma_b=args.sigma_b, sigma_e=args.sigma_e, gibbs=args.gibbs,
                           alpha=args.alpha)
    df = api.load_table("convai2", args.ratings, task_name=args.task_name, mephisto_db=args.mephisto_db,
                        scale=tuple(args.scale))
    config.source = df.attrs["source"]
    result = analyze(df, config)
    paths = write_outputs(result, args.outdir, report=not args.no_report)
    print(f"{len(df)} ratings of {df['dialogue'].nunique()} dialogues by {df['worker'].nunique()} workers")
    level = f"{100 * config.confidence:g}%"
    for question, table in result.likert.groupby("question", sort=True):
        d = result.calibration[question]
        print(f"question {question}: raw mean [{level} worker bootstrap] | calibrated +- posterior sd "
              f"(sigma_b={d['sigma_b']:.3g}, sigma_e={d['sigma_e']:.3g}, {d['variances']})")
        for r in table.itertuples(index=False):
            print(f"  {r.calibrated_rank}. {r.model:<14} raw {interval_text(r.mean, r.boot_low, r.boot_high)} "
                  f"(rank {r.raw_rank}) | calibrated {number_text(r.calibrated)} +- {number_text(r.calibrated_sd)}  "
                  f"({r.ratings} ratings, {r.workers} workers)")
        if "gibbs" in d:
            print(f"  Gibbs check: {d['gibbs']['chains']} chains x {d['gibbs']['iterations']} iterations, "
                  f"max |difference| {d['gibbs']['max_abs_difference']:.4f}")
    if len(result.differences):
        print(f"differences b - a [{level} over workers], p and Holm p over workers:")
    for d in result.differences.itertuples(index=False):
        p = "p=n/a" if d.pvalue != d.pvalue else f"p={d.pvalue:.3g} holm={d.p_holm:.3g}{d.mark}"
        print(f"  {d.question} {d.model_b} - {d.model_a}: {interval_text(d.difference, d.ci_low, d.ci_high, signed=True)} "
              f"{p} ({d.workers} workers)"
              + (f" -- {d.reason}" if d.reason else ""))
    if len(result.differences):
        from parlai_acute.stats.inference import legend

        print(f"marks: {legend(config.alpha)}")
    for r in result.persona.itertuples(index=False):
        print(f"persona detection {r.model}: {interval_text(r.rate, r.ci_low, r.ci_high, 1, scale=100, unit='%')} "
              f"({r.correct}/{r.dialogues}) {level} Clopper-Pearson")
    print(outputs_line(paths))
    return 0
