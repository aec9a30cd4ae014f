"""``parlai-acute ppi``: people's judgments corrected by a model judge's (prediction-powered inference).

Reads people's table and a judge's table of the same protocol (ACUTE judgments, per-turn
turns or SSA labels; the judge's as ``judge acute|per-turn|ssa`` writes them) and prints,
for each ACUTE matchup win rate, per-turn pick rate and SSA rate, the people-only result
beside the PPI++ one (valid whatever the judge's bias; narrower when the judge tracks
people) and the number of human judgments the judge was worth. ``--plan DELTA`` treats the
items both answered as a pilot: human judgments needed to detect DELTA with and without
the judge. ``--json FILE`` writes the table.

  parlai-acute ppi --people judgments.csv --judge-table judge/judgments.csv
  parlai-acute ppi --people labels.csv --judge-table judge/labels.csv --plan 0.1
"""
from __future__ import annotations

import argparse
import math

from parlai_acute.errors import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--people", metavar="FILE", required=True, help="people's table (.csv or .jsonl)")
    parser.add_argument("--judge-table", metavar="FILE", required=True,
                        help="the judge's table of the same protocol, on the people's items and more")
    parser.add_argument("--protocol", choices=["acute", "per-turn", "ssa"], default=None,
                        help="which protocol (default: from the people's table's columns)")
    parser.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of every interval")
    parser.add_argument("--plan", type=float, default=None, metavar="DELTA",
                        help="also plan a study: human judgments to detect DELTA (power 0.8), with and without the judge")
    parser.add_argument("--judge-per-human", type=float, default=10.0,
                        help="for --plan: items the judge answers per human-answered item (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the rows as JSON")


def _fmt(value) -> str:
    return "   n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:6.1f}"


def run(args) -> int:
    from parlai_acute.scripts.status import _read_table
    from parlai_acute.stats.ppi import ITEMS, plan, ppi_table

    people, protocol = _read_table(args.people, args.protocol)
    judge, _ = _read_table(args.judge_table, protocol)
    table = ppi_table(people, judge, protocol, args.alpha)
    print(f"{protocol}: people {len(people)} rows, judge {len(judge)} rows; intervals {100 * (1 - args.alpha):g}% "
          f"(PPI++ with power tuning; people-only beside it)")
    for row in table.to_dict("records"):
        line = (f"  {row['group']:<24} {row['measure']:<16} people {_fmt(row['people_estimate'])} "
                f"[{_fmt(row['people_lower'])}, {_fmt(row['people_upper'])}]")
        if "estimate" in row and row.get("estimate") == row.get("estimate"):
            line += (f"  with judge {_fmt(row['estimate'])} [{_fmt(row['lower'])}, {_fmt(row['upper'])}]  "
                     f"worth {row['effective_n']:.0f} items answered by people ({row['items_with_both']} were)")
        if isinstance(row.get("note"), str) and row["note"]:
            line += f"  -- {row['note']}"
        lines = [line]
        if args.plan is not None:
            items = ITEMS[protocol]
            h = items(people).groupby(["group", "measure", "item"])["value"].mean().loc[(row["group"], row["measure"])]
            j = items(judge).groupby(["group", "measure", "item"])["value"].mean()
            j = j.loc[(row["group"], row["measure"])] if (row["group"], row["measure"]) in j.index.droplevel(2) else j[:0]
            both = h.index[h.index.isin(j.index)]
            try:
                p = plan(h.loc[both].to_numpy(), j.loc[both].to_numpy(), args.plan, args.alpha, 0.8,
                         args.judge_per_human)
                lines.append(f"    plan for a {args.plan:g} difference: {p['people_only']} items answered by people alone, "
                             f"{p['with_judge']} with the judge on {p['judge_items']} items")
            except UserError as exc:
                lines.append(f"    plan: {exc}")
        print("\n".join(lines))
    if args.json:
        from parlai_acute import __version__
        from parlai_acute.files import write_json

        write_json(args.json, {"protocol": protocol, "alpha": args.alpha, "version": __version__,
                               "people": args.people, "judge": args.judge_table, "rows": table.to_dict("records")})
    return 0
