"""``parlai-acute ppi``: people's judgments corrected by a model judge's (prediction-powered inference).

Reads people's table and a judge's table of the same protocol (ACUTE judgments, per-turn
turns or SSA labels; the judge's as ``judge acute|per-turn|ssa`` writes them) and prints,
for each ACUTE matchup win rate (and Bradley-Terry strengths), per-turn pick rate and SSA
rate, the people-only result
beside the PPI++ one (valid whatever the judge's bias; narrower when the judge tracks
people) and the number of human judgments the judge was worth. ``--plan DELTA`` treats the
items both answered as a pilot: human judgments needed to detect DELTA with and without
the judge. ``-o DIR`` writes results.json, run.json, ppi.csv (the rows; ranking.csv for
ACUTE-Eval) and report.html (unless ``--no-report``); ``--json FILE`` the rows alone.

The interval level is ``--confidence`` as in every command (``--alpha A``, its old spelling here
meaning 1 - confidence, is still read, as ``--confidence 1-A``, with a note).

  parlai-acute ppi --people judgments.csv --judge-table judge/judgments.csv -o ppi_out
  parlai-acute ppi --people labels.csv --judge-table judge/labels.csv --plan 0.1 --confidence 0.9
"""
from __future__ import annotations

import argparse
import math

from parlai_acute.errors import UserError
from parlai_acute.scripts.options import (DeprecatedAlias, add_confidence, add_output_dir, add_people,
                                          add_report_switch)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_people(parser)
    parser.add_argument("--judge-table", metavar="FILE", required=True,
                        help="the judge's table of the same protocol, on the people's items and more")
    parser.add_argument("--protocol", choices=["acute", "per-turn", "ssa"], default=None,
                        help="which protocol (default: from the people's table's columns)")
    add_confidence(parser)
    # --alpha here was 1 - confidence; everywhere else it is a significance level. Converted, not refused:
    # ppi has no marks, so the old value has one reading, and a script that passed it gets the same numbers.
    parser.add_argument("--alpha", dest="confidence", type=float, action=DeprecatedAlias, preferred="--confidence",
                        convert=lambda alpha: 1 - alpha, says="the interval level; the old value was 1 - it",
                        help=argparse.SUPPRESS)
    parser.add_argument("--plan", type=float, default=None, metavar="DELTA",
                        help="also plan a study: human judgments to detect DELTA (power 0.8), with and without the judge")
    parser.add_argument("--judge-per-human", type=float, default=10.0,
                        help="for --plan: items the judge answers per human-answered item (default: %(default)s)")
    add_output_dir(parser, "results.json, run.json, ppi.csv and the report", required=False)
    add_report_switch(parser)
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the rows as JSON")


def _shown(estimate, low, high, signed: bool, why: str = "") -> str:
    """A share or difference in percent with its interval, by the one display rule."""
    from parlai_acute.report.tables import interval_text

    # shares in percent as analyze prints them; differences in percentage points
    return interval_text(estimate, low, high, 1, scale=100, signed=signed, unit=" pp" if signed else "%", why=why)


def _ranks(lower: int, upper: int) -> str:
    return f"{lower:>2}" + (f"-{upper:<2}" if upper != lower else "   ")


def ppi_lines(people, judge, protocol: str, confidence: float, plan_delta: float | None = None,
              judge_per_human: float = 10.0) -> tuple[list[str], "pd.DataFrame"]:
    """The printed lines and the table of :func:`parlai_acute.judges.ppi.ppi_table` (and plans)."""
    from parlai_acute.judges.ppi import plan_row, ppi_ranking, ppi_table

    alpha = 1 - confidence
    table = ppi_table(people, judge, protocol, alpha)
    lines = [f"{protocol}: people {len(people)} rows, judge {len(judge)} rows; intervals {100 * (1 - alpha):g}%: "
             f"people's = the protocol's result as analyze reports it; with judge = PPI++ with power tuning"]
    for row in table.to_dict("records"):
        signed = "difference" in row["measure"]
        why = row["people_interval"][len("none: "):] if row["people_interval"].startswith("none: ") else ""
        line = (f"  {row['comparison']:<24} {row['measure']:<20} people "
                f"{_shown(row['people_estimate'], row['people_lower'], row['people_upper'], signed, why)}")
        if row["estimate"] is not None:
            worth = (f"worth {row['effective_n']:.0f} items answered by people" if row["effective_n"] is not None
                     else "its worth cannot be given (no variation to compare)")
            line += (f"  with judge {_shown(row['estimate'], row['lower'], row['upper'], signed)}  "
                     f"{worth} ({row['items_with_both']} were)")
        if row.get("group"):
            line = f"  [{row['group']}]" + line[1:]
        if isinstance(row.get("note"), str) and row["note"]:
            line += f"  -- {row['note']}"
        lines.append(line)
        if plan_delta is None:
            continue
        try:
            p = plan_row(people, judge, protocol, row, plan_delta, alpha, judge_per_human)
            lines.append(f"    plan for a {plan_delta:g} difference: {p['people_only']} items answered by people "
                         f"alone, {p['with_judge']} with the judge on {p['judge_items']} items")
        except UserError as exc:
            lines.append(f"    plan: {exc}")
    ranking = ppi_ranking(people, judge, protocol, alpha)
    table.attrs["ranking"] = ranking.to_dict("records")
    from parlai_acute.registry import protocol as lookup

    ranked = set(ranking["question"])
    pairwise = any(e.pairwise for e in lookup(protocol).estimands_module().ESTIMANDS.values())
    if pairwise and ranking.empty:
        lines.append("  Bradley-Terry with the judge: none; it needs, under one question, at least 2 items "
                     "answered by both people and the judge and 2 answered by the judge alone")
    for group in sorted({g for g in table["group"] if g} - ranked) if pairwise and not ranking.empty else []:
        lines.append(f"  no prediction-powered ranking ({group}): the judge answered fewer than 2 items beyond the "
                     f"people's among the models they compared, or the comparisons do not connect the models")
    for question, part in ranking.groupby("question", sort=True):
        lines.append(f"  Bradley-Terry strengths ({question}; log-odds, sum zero) and rank-sets (ranks each "
                     f"model may take, all at once at {100 * (1 - alpha):g}%), people | with judge:")
        for r in part.sort_values("strength", ascending=False).to_dict("records"):
            line = (f"    {r['model']:<22} {r['people_strength']:+.2f} {_bounds(r['people_lower'], r['people_upper'])}"
                    f" ranks {_ranks(r['people_rank_lower'], r['people_rank_upper'])}"
                    f" | {r['strength']:+.2f} {_bounds(r['lower'], r['upper'])} ranks "
                    f"{_ranks(r['rank_lower'], r['rank_upper'])}" + (f"  -- {r['note']}" if r["note"] else ""))
            lines.append(line.rstrip())
    return lines, table


def _bounds(low, high) -> str:
    """An interval, or the words for none (the row's note says why)."""
    if low is None or high is None or low != low or high != high:
        return "[no interval]"
    return f"[{low:+.2f}, {high:+.2f}]"


METHOD = ("PPI++ with power tuning (Angelopoulos et al. 2024); the judge weighed only when it correlates with "
          "people at level 1 - confidence on >= 10 shared items; the unit is the item, and the people's term of "
          "the variance is cluster-robust over every sampled facet the table shows: over the unit of each item "
          "where units (workers) repeat (t on G - 1 df), over items (or contexts) and workers at once where items "
          "carry several workers' answers (two-way, CR3, t on min(levels) - 1 df), for ACUTE rows and the "
          "Bradley-Terry ranking also over reused conversations (the judge-only items, which share them, in the same "
          "variance); fewer levels than "
          "the sign-flip minimum give no interval; each row's note names its units")


def ppi_results(table, protocol: str, confidence: float, people: str, judge: str) -> dict:
    """Every number of the run, with what it was run on (``--json``, ppi.json, results.json)."""
    from parlai_acute import __version__

    return {"protocol": protocol, "confidence": confidence, "version": __version__, "people": people,
            "judge": judge, "method": METHOD, "rows": table.to_dict("records"),
            "ranking": table.attrs.get("ranking", [])}


def write_ppi_json(path, table, protocol: str, confidence: float, people: str, judge: str) -> None:
    from parlai_acute.files import write_json

    write_json(path, ppi_results(table, protocol, confidence, people, judge))


def beside_analysis(people, judge_path: str, protocol: str, confidence: float, outdir: str) -> None:
    """What ``analyze --judge-table`` adds: the prediction-powered results beside the
    analysis' people-only ones, printed and written to ``outdir``/ppi.json."""
    import os

    from parlai_acute.scripts.status import _read_table

    judge, _ = _read_table(judge_path, protocol)
    lines, table = ppi_lines(people, judge, protocol, confidence)
    path = os.path.join(outdir, "ppi.json")
    write_ppi_json(path, table, protocol, confidence, "the analysis' kept rows", judge_path)
    print("with the judge (prediction-powered):\n" + "\n".join(lines[1:]) + f"\nppi: {path}")


def write_outputs(table, args, protocol: str) -> dict:
    """results.json, run.json, ppi.csv (and ranking.csv for ACUTE-Eval) and, unless ``--no-report``,
    report.html (:mod:`parlai_acute.judges.ppi_report`) in ``-o DIR``."""
    from pathlib import Path

    import pandas as pd

    from parlai_acute import __version__
    from parlai_acute.files import write_csv, write_json
    from parlai_acute.judges.ppi_report import build_report, rows_table
    from parlai_acute.metrics.tables import write_run

    outdir = Path(args.outdir)
    config = {"protocol": protocol, "confidence": args.confidence, "people": args.people,
              "judge_table": args.judge_table, "plan": args.plan, "judge_per_human": args.judge_per_human,
              "seed": None}
    results = ppi_results(table, protocol, args.confidence, args.people, args.judge_table)
    paths = {"results.json": outdir / "results.json", "ppi.csv": write_csv(outdir / "ppi.csv", rows_table(table))}
    write_json(paths["results.json"], results)
    if results["ranking"]:
        paths["ranking.csv"] = write_csv(outdir / "ranking.csv", pd.DataFrame(results["ranking"]))
    randomness = "none: the same tables give the same results"
    paths["run.json"] = write_run(outdir, "ppi", config, method=METHOD, randomness=randomness)
    if not args.no_report:
        run = {"command": "ppi", "version": __version__, "config": config, "method": METHOD}
        paths.update(build_report(table, results["ranking"], run).write(outdir))
    return paths


def run(args) -> int:
    from parlai_acute.scripts.status import _read_table

    if not 0 < args.confidence < 1:
        raise UserError(f"--confidence must be between 0 and 1 (e.g. 0.95), got {args.confidence}")
    if args.plan is not None and args.plan <= 0:
        raise UserError(f"--plan must be a positive difference such as 0.1, got {args.plan}")
    if args.outdir:
        from parlai_acute.files import check_outdir

        check_outdir(args.outdir)
    people, protocol = _read_table(args.people, args.protocol)
    judge, _ = _read_table(args.judge_table, protocol)
    lines, table = ppi_lines(people, judge, protocol, args.confidence, args.plan, args.judge_per_human)
    print("\n".join(lines))
    if args.json:
        write_ppi_json(args.json, table, protocol, args.confidence, args.people, args.judge_table)
    if args.outdir:
        from parlai_acute.files import output_dir

        with output_dir(args.outdir):  # all or nothing
            paths = write_outputs(table, args, protocol)
        print(f"wrote {', '.join(name for name in paths if '/' not in name)} to {args.outdir}")
    return 0
