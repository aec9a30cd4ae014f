"""``parlai-acute metrics correlate``: do the metrics agree with people?

Given human ratings per response (a CSV; columns named by options), each metric is
computed single- and multi-reference and correlated with the ratings (Pearson and
Spearman, seeded bootstrap intervals and p-values; 3 decimals, "+" marks p > .05 as papers
do), per response and per system (model means), in a table shaped like Gupta et al.
(2019) Table 4. Per-annotator ratings (a long table: one row per annotator and reply, the
--annotator-column present) are aggregated per reply by --aggregate (mean or median, stated
in the output and run.json), and the annotators' agreement (Krippendorff's alpha, interval
level, bootstrap over replies) is reported beside the correlations. USR's released JSON
becomes such a table with parlai_acute.metrics.ratings.usr_ratings. With --system-scores (one row per model:
perplexity and human scores such as SSA or win rate), the linear fit of each human score
on perplexity and its R^2 (Meena). Writes report.html
(tables as LaTeX/Markdown in tables/), correlations_*.csv and run.json.

Examples:
  parlai-acute metrics correlate --ratings ratings.csv -o corr/
  parlai-acute metrics correlate --ratings per_annotator.csv --annotator-column worker --aggregate median -o corr/
  parlai-acute metrics correlate --system-scores models.csv --score-columns ssa,win_rate -o corr/
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.scripts.metrics_options import add_metric_arguments, score_config
from parlai_acute.scripts.options import add_alpha, add_output_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ratings", default=None, metavar="CSV", help="one rated response per row")
    parser.add_argument("--response-column", default="response", help="the rated response (default: response)")
    parser.add_argument("--rating-column", default="rating", help="the human rating (default: rating)")
    parser.add_argument("--model-column", default="model", help="the system that wrote it (default: model)")
    parser.add_argument("--reference-column", default="reference", help="the single reference (default: reference)")
    parser.add_argument("--references-column", default="references",
                        help="further references, a JSON list or tab-separated (default: references)")
    parser.add_argument("--context-column", default="context", help="the context, if present (default: context)")
    parser.add_argument("--annotator-column", default="annotator",
                        help="who gave the rating: present in the file, its rows are per annotator and are aggregated "
                             "per reply (default: annotator)")
    parser.add_argument("--item-column", default="item",
                        help="per-annotator rows: what the reply answers (default: item; absent: the context text)")
    parser.add_argument("--aggregate", default="mean", choices=["mean", "median"],
                        help="per-annotator rows: how one reply's ratings become its rating (default: mean)")
    add_metric_arguments(parser)
    add_alpha(parser, "the '+' mark beside a correlation's p-value (p above it: not significant)")
    parser.add_argument("--system-scores", default=None, metavar="CSV",
                        help="one row per model: a perplexity column and human score columns")
    parser.add_argument("--perplexity-column", default="perplexity", help="(default: perplexity)")
    parser.add_argument("--score-columns", default=None,
                        help="human score columns of --system-scores, comma-separated (default: all others)")
    add_output_dir(parser, "the result files")


def rated_items(args):
    """Items (one per rated reply), the table of their ratings, and the per-annotator ratings
    (empty when the file has one row per reply)."""
    import pandas as pd

    from parlai_acute.metrics.inputs import Item, read_csv_rows
    from parlai_acute.metrics.ratings import rated_replies

    needed = [args.response_column, args.rating_column, args.model_column, args.reference_column]
    rows, where = read_csv_rows(args.ratings, needed)
    columns = {"response": args.response_column, "rating": args.rating_column, "model": args.model_column,
               "reference": args.reference_column, "references": args.references_column,
               "context": args.context_column, "annotator": args.annotator_column, "item": args.item_column}
    replies, per_annotator = rated_replies(rows, where, columns, args.aggregate)
    if len(replies) < 3:
        raise UserError(f"{args.ratings}: {len(replies)} rated responses are too few for a correlation; give 3 or more")
    items = [Item(r.id, r.context, r.references) for r in replies.itertuples(index=False)]
    texts = {r.id: [r.response] for r in replies.itertuples(index=False)}
    return items, texts, pd.DataFrame({"id": replies["id"], "model": replies["model"], "rating": replies["rating"],
                                       "annotators": replies["annotators"]}), per_annotator


def run(args) -> int:
    from parlai_acute.files import output_dir

    if not args.ratings and not args.system_scores:
        raise UserError("give --ratings CSV (metric correlations) and/or --system-scores CSV (perplexity vs people)")
    config = score_config(args)
    with output_dir(args.outdir) as outdir:  # all or nothing
        _correlate(args, config, outdir)
    print(f"report: {outdir}/report.html (tables/*.tex|md, *.csv, run.json)")
    return 0


def _correlate(args, config, outdir: Path) -> None:
    """Every table, run.json and the report into ``outdir``, each result printed as it comes."""
    import numpy as np
    import pandas as pd

    from parlai_acute.metrics import correlation
    from parlai_acute.metrics.score import build_metrics, item_scores
    from parlai_acute.metrics.reports import correlation_report
    from parlai_acute.metrics.tables import write_csv, write_run
    from parlai_acute.report.tables import interval_text, number_text, p_text

    out: dict = {}
    fits = None
    signatures: dict = {}
    run_extra: dict = {}
    if args.ratings:
        items, replies, ratings, per_annotator = rated_items(args)
        ratings_info = _agreement(args, config, ratings, per_annotator)
        run_extra["ratings_aggregation"] = ratings_info
        pair_metrics, _ = build_metrics(config)
        scores = item_scores(items, replies, pair_metrics)
        for metric in pair_metrics:
            sig = metric.signature().with_refs([len(it.references) for it in items])
            signatures[sig.metric] = sig.as_dict()
        table = pd.concat([ratings.drop(columns=["annotators"]), scores.drop(columns=["id"])], axis=1)
        base = [c for m in pair_metrics for c in m.columns]
        columns = [f"{c}_{kind}" for c in base for kind in ("single", "multi")]
        for level, frame in (("response", correlation.response_level(table, columns, "rating", config.bootstrap,
                                                                     config.seed, config.confidence)),
                             ("system", correlation.system_level(table, columns, "rating", "model", config.bootstrap,
                                                                 config.seed, config.confidence))):
            shaped = correlation.gupta_table(frame, base)
            n = int(frame["n"].iloc[0]) if len(frame) else 0
            unit = "responses" if level == "response" else "systems"
            write_csv(shaped, outdir / f"correlations_{level}.csv")
            out[level] = shaped
            how = "bootstrap over responses" if level == "response" else "Fisher z over systems"
            tests = ("exact permutation test over systems" if level == "system" and n <= correlation.EXACT_SYSTEMS
                     else "scipy's t tests")
            print(f"per {level} ({n} {unit}): Spearman and Pearson [{config.confidence:.0%} {how}] p ({tests}; "
                  f"+ p > {args.alpha:g}: not significant)")
            print(f"  {'metric':<12} {'single-ref':^72} {'multi-ref':^72}".rstrip())
            for row in shaped.to_dict("records"):
                cells = [_stat(row, f"{stat}_{kind}", args.alpha) for kind in ("single", "multi")
                         for stat in ("spearman", "pearson")]
                print(f"  {row['metric']:<12} {cells[0]} {cells[1]}   {cells[2]} {cells[3]}".rstrip())
            notes = sorted({row[c] for row in shaped.to_dict("records") for c in shaped.columns
                            if c.endswith("_note") and isinstance(row[c], str) and row[c]})
            for note in notes:
                print(f"  no interval: {note}")
    if args.system_scores:
        from parlai_acute.metrics.inputs import read_csv_rows

        rows, where = read_csv_rows(args.system_scores, [args.model_column, args.perplexity_column])
        frame = pd.DataFrame(rows)
        score_columns = [c.strip() for c in args.score_columns.split(",")] if args.score_columns else None
        try:
            for column in [args.perplexity_column] + (score_columns or [c for c in frame.columns if c not in
                                                                        (args.model_column, args.perplexity_column)]):
                frame[column] = pd.to_numeric(frame[column])
        except (ValueError, KeyError) as exc:
            raise UserError(f"{args.system_scores}: a score column is missing or not numeric ({exc}); check the columns") from None
        for column in frame.columns.drop(args.model_column):
            bad = frame[column].notna() & ~np.isfinite(frame[column].astype(float)) if frame[column].dtype != object \
                else pd.Series(False, index=frame.index)
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise UserError(f"{where[i]}: column {column!r}: {rows[i][column]!r} is not a finite number; fix it")
        fits = correlation.perplexity_vs_human(frame, args.perplexity_column, score_columns, args.model_column)
        write_csv(fits, outdir / "perplexity_vs_human.csv")
        for row in fits.itertuples(index=False):
            r = interval_text(row.r, row.r_low, row.r_high, signed=True, why=row.r_note)
            print(f"perplexity vs {row.score}: R^2 {number_text(row.r_squared)}, r {r}"
                  + (" (95% Fisher z)" if "[" in r else "") + f", slope {number_text(row.slope, 4, signed=True)}, "
                  f"{p_text(row.p_value)} ({row.models} models)")
    write_run(outdir, "metrics correlate", {**vars(config), "metrics": list(config.metrics)}, signatures,
              ratings=args.ratings, system_scores=args.system_scores, alpha=args.alpha, **run_extra)
    correlation_report(out, config, fits, run_extra.get("ratings_aggregation")).write(outdir)


def _agreement(args, config, ratings, per_annotator) -> dict:
    """How the ratings were aggregated and how far the annotators agree (printed; for run.json)."""
    from parlai_acute.report.tables import interval_text
    from parlai_acute.stats.agreement import interval_agreement

    if per_annotator.empty:
        print(f"ratings: one per reply ({len(ratings)} replies; no {args.annotator_column!r} column, so no "
              f"aggregation and no agreement)")
        return {"layout": "one rating per reply", "replies": int(len(ratings)), "aggregate": None}
    agreement = interval_agreement(per_annotator["id"], per_annotator["rating"], config.bootstrap, config.seed,
                                   config.confidence)
    counts = ratings["annotators"]
    print(f"ratings: {len(per_annotator)} per-annotator ratings of {len(ratings)} replies by "
          f"{per_annotator['annotator'].nunique()} annotators ({counts.min()}-{counts.max()} per reply), "
          f"aggregated per reply by the {args.aggregate}")
    alpha = interval_text(agreement["krippendorff_alpha"], agreement["alpha_ci_low"], agreement["alpha_ci_high"],
                          signed=True, why=agreement["note"])
    print(f"annotator agreement: Krippendorff's alpha (interval) {alpha} [{config.confidence:.0%} bootstrap over "
          f"replies], {agreement['items']} replies rated twice or more")
    return {"layout": "per annotator", "aggregate": args.aggregate, "replies": int(len(ratings)),
            "ratings": int(len(per_annotator)), "annotators": int(per_annotator["annotator"].nunique()),
            "annotator_agreement": agreement}


def _stat(row: dict, key: str, alpha: float = 0.05) -> str:
    """A correlation, its interval (report.tables.interval_text, 3 decimals as papers print them)
    and its p-value, "+" after a p above ``alpha``; the reasons for a missing interval are
    printed under the table."""
    import math

    from parlai_acute.report.tables import format_p, interval_text

    value, low, high = row[key], row.get(f"{key}_low", math.nan), row.get(f"{key}_high", math.nan)
    p = row.get(f"{key}_p", math.nan)
    shown = format_p(p)
    p_cell = "" if not shown else f"p {shown}" if shown.startswith("<") else f"p={shown}"
    flag = "+" if isinstance(p, float) and math.isfinite(p) and p > alpha else ""
    return f"{interval_text(value, low, high, 3, signed=True):<25} {p_cell + flag:<10}"
