"""``parlai-acute per-turn analyze``: per-turn choices -> win rates, tests, dialogue-level intervals.

Reads a per-turn run from the Mephisto database (``--task-name``) or a turns file
(``--turns``, .csv or .jsonl with the columns of parlai_acute/per_turn/turns.py) and writes
into ``--outdir``: summary.csv (every reported pick rate and difference with its interval, the
same table for every protocol), turns.csv (kept), excluded.csv and exclusions.json (how many and why),
flags.csv and workers.csv (quality flags, per-worker statistics), models.csv (pick rates
with exact and cluster-bootstrap intervals), pairs.csv (tie-win / wins / tie-loss; the mark from a
sign-flip test over dialogues with its interval, exact binomial or McNemar beside it, Holm;
--alpha sets the marks, the legend is printed), winrate_grid.csv (ACUTE-style win-rate grid),
positions.csv (position bias), settings.csv / sensitivity.csv / consistency.csv (several
settings side by side), results.json (everything, strict JSON) and run.json (configuration,
seed, version, estimands).

  parlai-acute per-turn analyze --turns turns.csv --outdir results
  parlai-acute per-turn analyze --task-name my-per-turn-task --outdir results --exclude fast_decision
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import (add_alpha, add_confidence, add_output_dir, add_report_switch, add_resampling,
                                          add_table_source, outputs_line)

from parlai_acute.per_turn.analysis import FLAG_RULES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_table_source(parser, "--turns", "turns", "per-turn")
    add_output_dir(parser)
    add_resampling(parser, "cluster-bootstrap resamples (0: none)")
    parser.add_argument("--cluster", choices=["auto", "dialogue", "worker"], default="auto",
                        help="the sampled unit of the tests and the bootstrap (auto: the worker when workers did "
                             "several dialogues, else the dialogue; worker: also allows for a worker's habits)")
    parser.add_argument("--min-clusters", type=int, default=5,
                        help="fewer dialogues (or workers) than this in a model set: no bootstrap interval of a pick rate "
                             "(marks need at least 5 at alpha 0.05, whatever this says)")
    add_confidence(parser)
    add_alpha(parser)
    parser.add_argument("--permutations", type=int, default=10_000,
                        help="sign patterns / arrangements of the cluster-aware tests (all of them when fewer exist)")
    parser.add_argument("--min-decision-seconds", type=float, default=2.0,
                        help="flag decisions made faster than this")
    parser.add_argument("--min-message-words", type=int, default=3, help="flag worker messages with fewer words")
    parser.add_argument("--same-position-min-turns", type=int, default=10,
                        help="flag a worker whose single picks were all at one position over at least this many turns")
    parser.add_argument("--exclude", nargs="+", default=[], choices=list(FLAG_RULES), metavar="FLAG",
                        help=f"exclude flagged turns (flags are always reported): {', '.join(FLAG_RULES)}")
    add_report_switch(parser)
    parser.add_argument("--judge-table", metavar="FILE", default=None,
                        help="a model judge's table of the same protocol: also report the prediction-powered "
                             "result beside the people's (ppi.json; see `parlai-acute ppi`)")


def load(args):
    """The turns table and a description of where it came from."""
    from parlai_acute import api

    table = api.load_table("per-turn", args.turns, task_name=args.task_name, mephisto_db=args.mephisto_db)
    return table, table.attrs["source"]


def _p(x) -> str:
    return "p=n/a" if x is None or x != x else f"p={x:.3g}"


def _pct(x) -> str:
    from parlai_acute.report.tables import number_text

    return number_text(x, 1, scale=100)


def run(args) -> int:
    import contextlib
    import io

    from parlai_acute.files import output_dir
    from parlai_acute.report.tables import bounds_text, interval_text, number_text
    from parlai_acute.per_turn.analysis import AnalysisConfig, analyze
    from parlai_acute.per_turn.outputs import write_outputs
    from parlai_acute.stats.inference import legend

    config = AnalysisConfig(bootstrap=args.bootstrap, seed=args.seed, min_clusters=args.min_clusters,
                            confidence=args.confidence, alpha=args.alpha, permutations=args.permutations,
                            cluster=args.cluster, min_decision_seconds=args.min_decision_seconds,
                            min_message_words=args.min_message_words,
                            same_position_min_turns=args.same_position_min_turns, exclude=list(args.exclude))
    df, config.source = load(args)
    result = analyze(df, config)
    config = result.config  # the unit read from the table (cluster "auto")
    with output_dir(args.outdir), contextlib.redirect_stdout(io.StringIO()) as judged:  # all or nothing
        paths = write_outputs(result, args.outdir, report=not args.no_report)
        if args.judge_table:
            from parlai_acute.scripts.ppi import beside_analysis

            beside_analysis(result.kept, args.judge_table, "per-turn", args.confidence, args.outdir)
    kept = int((result.turns["excluded_because"] == "").sum())
    why = ", ".join(f"{r['reason']}: {r['turns']}" for r in result.exclusion_summary() if r["turns"])
    flagged = ", ".join(f"{f['flag']}: {f['turns']}" for f in result.flag_summary() if f["turns"])
    print(f"{kept} of {len(result.turns)} turns kept" + (f" (excluded: {why})" if why else "")
          + (f"; flagged: {flagged}" if flagged else ""))
    print(f"design: {result.design}")
    level = f"{100 * config.confidence:g}%"
    boot = f"{config.cluster}-bootstrap {config.bootstrap}" if config.bootstrap else "no bootstrap"
    for d in result.designs:
        print(f"{d.label}: {sum(g.turns for g in d.groups)} turns, {sum(g.dialogues for g in d.groups)} dialogues")
        for g in d.groups:
            om = g.omnibus
            test = ""
            if d.setting == "mm" and om.get("cluster_method"):
                test = (f" all equal: {_p(om['cluster_pvalue'])}{om['mark']} ({om['cluster_method']})"
                        + (f"; {om['cluster_note']}" if om["cluster_note"] else "")
                        + f" | {om['test']} (exact, judgments independent) {_p(om['pvalue'])}")
            print(f"  set {g.model_set}:{test}  (rate %, {level} exact | {boot})")
            for m in g.models_table.itertuples(index=False):
                interval = (bounds_text(m.boot_low, m.boot_high, 1, scale=100)
                            or f"no interval ({g.dialogues} dialogue(s); needs {config.min_clusters} and some variation)"
                            if config.bootstrap else "")
                print(f"    {m.model:<16} {interval_text(m.rate, m.ci_low, m.ci_high, 1, scale=100)} | "
                      f"{interval}  ({m.picked}/{m.turns})")
        for c in d.comparisons.itertuples(index=False):
            ties = (f" tie-win {_pct(c.tie_win).strip()} tie-loss {_pct(c.tie_loss).strip()}"
                    if d.setting == "pm" and d.protocol != "soba" else "")
            interval = bounds_text(c.cluster_low, c.cluster_high, 1, scale=100, signed=True)
            interval = f" {interval}" if interval else ""
            verdict = (f"{_p(c.cluster_pvalue)} holm={c.cluster_p_holm:.3g}{c.mark}" if c.cluster_pvalue == c.cluster_pvalue
                       else "no mark")
            note = c.cluster_note or f"{c.clusters} {config.cluster}s"
            print(f"  {c.model_b} - {c.model_a}: {number_text(c.diff, 1, scale=100, signed=True)} points{interval}{ties}  "
                  f"{verdict} "
                  f"({note})  | exact, judgments independent: {_p(c.pvalue)} "
                  f"holm={c.p_holm:.3g}")
    if len(result.designs) > 1:
        print("settings side by side: settings.csv, sensitivity.csv, consistency.csv")
    for warning in result.warnings():
        print(f"warning: {warning}")
    print(f"marks: {legend(config.alpha)}")
    print(f"intervals of differences: {level}, inverted cluster-aware test")
    print(judged.getvalue(), end="")  # the judge's lines, printed once every file is in place
    print(outputs_line(paths))  # the last line: where the report is
    return 0
