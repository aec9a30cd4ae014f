"""``parlai-acute judge agreement``: how far a judge agrees with people on the same items, beside the human-human ceiling.

Given people's table and the judge's table of one protocol (ACUTE judgments, per-turn
choices, or SSA labels: agreement on sensible, on specific and on both together), writes into ``--outdir``: agreement.json (judge-vs-human and human-vs-human
percent agreement and Cohen's kappa with item-bootstrap intervals, on all items and on
the items judged by two or more people; agreement of each matchup's win rate or each
model's pick rate; Kendall's tau of the system rankings; configuration, seed, version)
scores.csv (per matchup or model, human and judge side by side) and report.html (with the
judge run's onboarding and configuration when its summary.json is beside ``--judge-table``).

Examples::

    parlai-acute judge agreement --protocol acute --people judgments.csv --judge-table judge_out/judgments.csv --outdir agree
    parlai-acute judge agreement --protocol per-turn --people turns.csv --judge-table judge_turns/turns.csv --outdir agree_turns
    parlai-acute judge agreement --protocol ssa --people labels.csv --judge-table judge_ssa/labels.csv --outdir agree_ssa
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from parlai_acute.scripts.options import DeprecatedAlias, add_confidence, add_output_dir, add_people, add_resampling



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protocol", required=True, choices=["acute", "per-turn", "ssa"], help="the protocol of both tables")
    add_people(parser)
    table = parser.add_mutually_exclusive_group(required=True)
    table.add_argument("--judge-table", metavar="FILE",
                       help="the judge's table (from `parlai-acute judge acute|per-turn|ssa`)")
    # --judge names a judge model everywhere else; here it was this file: still accepted, with a note
    table.add_argument("--judge", dest="judge_table", action=DeprecatedAlias, preferred="--judge-table",
                       help=argparse.SUPPRESS)
    add_output_dir(parser, "agreement.json, scores.csv and the report")
    add_resampling(parser, "bootstrap resamples over items")
    add_confidence(parser)
    parser.add_argument("--judge-summary", default=None, metavar="FILE",
                        help="the judge run's summary.json (default: the one beside --judge-table, if any): its onboarding, "
                             "consistency and configuration go into the report")


def _fmt(block: dict, ties: int = 0) -> str:
    """One line of agreement; what cannot be given is said in words, with the reason."""
    if not block["pairs"]:
        left_out = (f": the {ties} item{'s' if ties != 1 else ''} the judge answered both ways (it followed the "
                    f"position; --inconsistent tie) {'were' if ties != 1 else 'was'} left out" if ties else "")
        return "no items" + left_out
    from parlai_acute.report.tables import interval_text

    p, (pl, ph), k, (kl, kh) = block["percent_agreement"], block["percent_ci"], block["kappa"], block["kappa_ci"]
    percent = interval_text(p, pl, ph, 1, scale=100, unit="%")
    kappa = f"kappa {interval_text(k, kl, kh, 2, signed=True)}"
    from parlai_acute.stats import rater_agreement

    notes = rater_agreement.notes(block)
    return f"{percent}, {kappa} ({block['items']} items, {block['pairs']} pairs)" + (f" ({notes})" if notes else "")


def _tau(ranking: dict) -> str:
    tau = ranking["kendall_tau"]
    text = "undefined" if math.isnan(tau) else f"{tau:+.2f}"
    return f"Kendall's tau {text} over {ranking['systems']} systems" + (f" ({ranking['note']})" if ranking.get("note") else "")


def run(args) -> int:
    import parlai_acute
    from parlai_acute.errors import UserError
    from parlai_acute.files import output_dir, write_csv
    from parlai_acute.judges import agreement
    from parlai_acute.judges.agreement_report import render
    from parlai_acute.judges.record import read_summary, write_summary

    if args.bootstrap < 0:
        raise UserError(f"--bootstrap must be 0 or more, got {args.bootstrap}")
    if not 0 < args.confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1, got {args.confidence}")
    judge_file = Path(args.judge_table)
    if judge_file.is_file() and len(judge_file.read_text(encoding="utf-8").strip().splitlines()) == 1:
        raise UserError(f"{judge_file} has no judge answers (every item inconsistent or missing?); see the summary.json "
                        f"beside it, or judge again with --inconsistent tie")
    from parlai_acute import api

    human, judge = api.load_table(args.protocol, args.people), api.load_table(args.protocol, args.judge_table)
    measure = agreement.measure(args.protocol)
    result = measure(human, judge, args.bootstrap, args.seed, args.confidence)
    summary = {**result["summary"], "human_file": str(args.people), "judge_file": str(args.judge_table),
               "config": {"bootstrap": args.bootstrap, "confidence": args.confidence}, "seed": args.seed,
               "parlai_acute_version": parlai_acute.__version__}
    judge_summary = read_summary(args.judge_summary, args.judge_table)
    with output_dir(args.outdir) as outdir:  # all or nothing
        write_summary(outdir / "agreement.json", summary)
        write_csv(outdir / "scores.csv", result["matchups"])
        paths = render(summary, result["matchups"], outdir, judge_summary)
    s = summary
    print(f"{args.protocol}: judge {', '.join(s['judge'])} vs {s['human_workers']} people")
    blocks = [("", s)] + [(f"{q['question']}: ", q) for q in s.get("questions", []) if args.protocol == "ssa"]
    for prefix, block in blocks:
        label = prefix or ("both answers: " if args.protocol == "ssa" else "")
        print(f"  {label}judge vs human: {_fmt(block['judge_vs_human'], s.get('judge_ties_left_out', 0))}")
        if s.get("judge_ties_left_out") and block["judge_vs_human"]["pairs"]:
            print(f"  {label}({s['judge_ties_left_out']} item(s) the judge answered both ways were left out)")
        ceiling = block["on_items_with_two_or_more_humans"]
        pad = "  " * bool(label)
        if ceiling["human_vs_human"]["pairs"]:
            print(f"  {pad}on items judged by 2+ people: judge vs human {_fmt(ceiling['judge_vs_human'])}")
            print(f"  {pad}                              human vs human {_fmt(ceiling['human_vs_human'])}  (ceiling)")
        else:
            print(f"  {pad}human-human ceiling: not available (no item was judged by two or more people)")
    table = result["matchups"]
    if args.protocol == "acute":
        for row in table.itertuples(index=False):
            print(f"  {row.question_key} {row.model_b} vs {row.model_a}: people {100 * row.human_winrate_b:.0f}% "
                  f"(n={row.human_n}), judge {100 * row.judge_winrate_b:.0f}% (n={row.judge_n})")
        for q in s["questions"]:
            r = q["ranking"]
            if "error" in r:
                print(f"  {q['question_key']} ranking: {r['error']}")
            else:
                print(f"  {q['question_key']} ranking: {_tau(r)}")
    elif args.protocol == "ssa":
        for row in table.itertuples(index=False):
            print(f"  {row.model}: SSA by people {100 * row.ssa_human:.0f}% (n={row.n_human}), "
                  f"by the judge {100 * row.ssa_judge:.0f}% (n={row.n_judge})")
        print(f"  ranking: {_tau(s['ranking'])}")
    else:
        for row in table.itertuples(index=False):
            print(f"  {row.model}: picked by people {100 * row.pick_rate_human:.0f}% (n={row.n_human}), "
                  f"by the judge {100 * row.pick_rate_judge:.0f}% (n={row.n_judge})")
        print(f"  ranking: {_tau(s['ranking'])}")
    print(f"wrote {outdir / 'agreement.json'}; report: {paths['report.html']}")
    return 0
