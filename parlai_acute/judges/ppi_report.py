"""The page of ``parlai-acute ppi``: people's results beside the prediction-powered ones (people's
judgments corrected by a model judge's), built with the one report layer.

It shows what :func:`parlai_acute.stats.ppi.ppi_table` (and ``ppi_ranking`` for ACUTE-Eval) returned,
the same numbers as the terminal and ``results.json``; nothing is recomputed here.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.report import Report

#: The columns of a PPI row the page shows, in this order (every column is in ppi.csv).
ROW_COLUMNS = ["group", "measure", "people_estimate", "people_lower", "people_upper", "estimate", "lower", "upper",
               "effective_n", "people_items", "items_with_both", "judge_only_items", "lambda", "note"]
RANKING_COLUMNS = ["question", "model", "people_strength", "people_lower", "people_upper", "people_rank_lower",
                   "people_rank_upper", "strength", "lower", "upper", "rank_lower", "rank_upper", "lambda", "note"]


def rows_table(table: pd.DataFrame) -> pd.DataFrame:
    """The PPI rows (the same as ppi.csv); a row without a result with the judge says why."""
    table = table.copy()
    if "note" not in table:
        table["note"] = ""
    table["note"] = table["note"].where(table["note"].map(lambda v: isinstance(v, str)), "")
    if "estimate" in table:
        missing = table["estimate"].isna() & (table["note"] == "")
        table.loc[missing, "note"] = "no result with the judge: too few items both answered"
    return table


def build_report(table: pd.DataFrame, ranking: list[dict], run: dict) -> Report:
    """The PPI page: per group and measure, people alone beside people with the judge, the judge's
    worth in items answered by people, the ACUTE ranking both ways, the run's configuration."""
    confidence = run["config"]["confidence"]
    report = Report(f"People with a model judge ({run['config']['protocol']}): prediction-powered inference",
                    intro=(f"People's table {run['config']['people']}, judge's table {run['config']['judge_table']}. "
                           f"Each result is given from people alone and with the judge (PPI++ with power tuning: "
                           f"valid whatever the judge's bias, narrower when the judge tracks people); intervals "
                           f"{100 * confidence:g}%. The unit is the item."))
    rows = rows_table(table)
    section = report.section("People alone and with the judge")
    section.note("people_*: from people's answers alone. estimate, lower, upper: with the judge. effective n: the "
                 "items answered by people the judge's answers were worth; lambda: how much the judge was weighed "
                 "(0: not at all, the result is the people's).")
    section.table(rows, "ppi", caption="Results per group and measure",
                  columns=[c for c in ROW_COLUMNS if c in rows.columns])
    if ranking:
        frame = pd.DataFrame(ranking)
        part = report.section("Bradley-Terry strengths and rank-sets")
        part.note(f"Strengths are log-odds (sum zero per question); rank-sets are the ranks each model may take, "
                  f"all at once at {100 * confidence:g}%: people alone, then with the judge.")
        part.table(frame, "ranking", caption="Strengths and rank-sets, people alone and with the judge",
                   columns=[c for c in RANKING_COLUMNS if c in frame.columns])
    report.configuration("Run", run)
    return report
