"""``parlai-acute ppi``: people's judgments corrected by a model judge's (prediction-powered inference).

Reads people's table and a judge's table of the same protocol (ACUTE judgments, per-turn
turns or SSA labels; the judge's as ``judge acute|per-turn|ssa`` writes them) and prints,
for each ACUTE matchup win rate (and Bradley-Terry strengths), per-turn pick rate and SSA
rate, the people-only result
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


def _ranks(lower: int, upper: int) -> str:
    return f"{lower:>2}" + (f"-{upper:<2}" if upper != lower else "   ")


def ppi_lines(people, judge, protocol: str, alpha: float, plan_delta: float | None = None,
              judge_per_human: float = 10.0) -> tuple[list[str], "pd.DataFrame"]:
    """The printed lines and the table of :func:`parlai_acute.stats.ppi.ppi_table` (and plans)."""
    from parlai_acute.stats.ppi import ITEMS, plan, ppi_table

    table = ppi_table(people, judge, protocol, alpha)
    lines = [f"{protocol}: people {len(people)} rows, judge {len(judge)} rows; intervals {100 * (1 - alpha):g}% "
             f"(PPI++ with power tuning; people-only beside it)"]
    for row in table.to_dict("records"):
        line = (f"  {row['group']:<24} {row['measure']:<16} people {_fmt(row['people_estimate'])} "
                f"[{_fmt(row['people_lower'])}, {_fmt(row['people_upper'])}]")
        if row.get("estimate") == row.get("estimate") and row.get("estimate") is not None:
            line += (f"  with judge {_fmt(row['estimate'])} [{_fmt(row['lower'])}, {_fmt(row['upper'])}]  "
                     f"worth {row['effective_n']:.0f} items answered by people ({row['items_with_both']} were)")
        if isinstance(row.get("note"), str) and row["note"]:
            line += f"  -- {row['note']}"
        lines.append(line)
        if plan_delta is None:
            continue
        h = ITEMS[protocol](people).groupby(["group", "measure", "item"])["value"].mean().loc[(row["group"], row["measure"])]
        j = ITEMS[protocol](judge).groupby(["group", "measure", "item"])["value"].mean()
        j = j.loc[(row["group"], row["measure"])] if (row["group"], row["measure"]) in j.index.droplevel(2) else j[:0]
        both = h.index[h.index.isin(j.index)]
        try:
            p = plan(h.loc[both].to_numpy(), j.loc[both].to_numpy(), plan_delta, alpha, 0.8, judge_per_human)
            lines.append(f"    plan for a {plan_delta:g} difference: {p['people_only']} items answered by people "
                         f"alone, {p['with_judge']} with the judge on {p['judge_items']} items")
        except UserError as exc:
            lines.append(f"    plan: {exc}")
    if protocol == "acute":
        from parlai_acute.stats.ppi import ppi_ranking

        ranking = ppi_ranking(people, judge, alpha)
        table.attrs["ranking"] = ranking.to_dict("records")
        if ranking.empty:
            lines.append("  Bradley-Terry with the judge: none; it needs, under one question, at least 2 items "
                         "answered by both people and the judge and 2 answered by the judge alone")
        for question, part in ranking.groupby("question", sort=True):
            lines.append(f"  Bradley-Terry strengths ({question}; log-odds, sum zero) and rank-sets (ranks each "
                         f"model may take, all at once at {100 * (1 - alpha):g}%), people | with judge:")
            for r in part.sort_values("strength", ascending=False).to_dict("records"):
                line = (f"    {r['model']:<22} {r['people_strength']:+.2f} [{r['people_lower']:+.2f}, "
                        f"{r['people_upper']:+.2f}] ranks {_ranks(r['people_rank_lower'], r['people_rank_upper'])}"
                        f" | {r['strength']:+.2f} [{r['lower']:+.2f}, {r['upper']:+.2f}] ranks "
                        f"{_ranks(r['rank_lower'], r['rank_upper'])}" + (f"  -- {r['note']}" if r["note"] else ""))
                lines.append(line.rstrip())
    return lines, table


def write_ppi_json(path, table, protocol: str, alpha: float, people: str, judge: str) -> None:
    from parlai_acute import __version__
    from parlai_acute.files import write_json

    write_json(path, {"protocol": protocol, "alpha": alpha, "version": __version__, "people": people,
                      "judge": judge, "method": "PPI++ with power tuning (Angelopoulos et al. 2024); the judge "
                      "weighed only when it correlates with people at level alpha on >= 10 shared items; the unit "
                      "is the item", "rows": table.to_dict("records"),
                      "ranking": table.attrs.get("ranking", [])})


def beside_analysis(people, judge_path: str, protocol: str, alpha: float, outdir: str) -> None:
    """What ``analyze --judge-table`` adds: the prediction-powered results beside the
    analysis' people-only ones, printed and written to ``outdir``/ppi.json."""
    import os

    from parlai_acute.scripts.status import _read_table

    judge, _ = _read_table(judge_path, protocol)
    lines, table = ppi_lines(people, judge, protocol, alpha)
    path = os.path.join(outdir, "ppi.json")
    write_ppi_json(path, table, protocol, alpha, "the analysis' kept rows", judge_path)
    print("with the judge (prediction-powered):\n" + "\n".join(lines[1:]) + f"\nppi: {path}")


def run(args) -> int:
    from parlai_acute.scripts.status import _read_table

    people, protocol = _read_table(args.people, args.protocol)
    judge, _ = _read_table(args.judge_table, protocol)
    lines, table = ppi_lines(people, judge, protocol, args.alpha, args.plan, args.judge_per_human)
    print("\n".join(lines))
    if args.json:
        write_ppi_json(args.json, table, protocol, args.alpha, args.people, args.judge_table)
    return 0
