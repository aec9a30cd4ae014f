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
               "effective_n", "people_items", "items_with_both", "judge_only_items", "lambda", "units", "note"]
RANKING_COLUMNS = ["question", "model", "people_strength", "people_lower", "people_upper", "people_rank_lower",
                   "people_rank_upper", "strength", "lower", "upper", "rank_lower", "rank_upper", "lambda", "units",
                   "note"]


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
                           f"{100 * confidence:g}%. The unit is the item; where items share workers (or "
                           f"conversations) those are sampled too, and each row's units column names what its "
                           f"interval ran over."))
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
    report.methods(methods_paragraph(table, ranking, run))
    return report


def methods_paragraph(table: pd.DataFrame, ranking: list[dict], run: dict) -> str:
    """The paragraph a researcher pastes into a paper: the estimator, when the judge is weighed,
    the interval, and the units each interval ran over, as the rows name them (``units``)."""
    from parlai_acute import __version__
    from parlai_acute.stats.inference import min_clusters

    confidence = run["config"]["confidence"]
    alpha = 1 - confidence
    used = sorted({u for u in list(table.get("units", [])) + [r.get("units", "") for r in ranking]
                   if isinstance(u, str) and u})
    parts = [
        f"We estimated each result of the {run['config']['protocol']} people's table ({run['config']['people']}) "
        f"from people's answers together with a model judge's ({run['config']['judge_table']}) by prediction-"
        f"powered inference (PPI++ with power tuning; Angelopoulos et al. 2023, 2024) with parlai_acute "
        f"{run.get('version', __version__)}: the judge's mean over all its items, corrected by the people-minus-"
        f"judge difference on the items people answered; for ACUTE-Eval also Bradley-Terry strengths by PPI++ for "
        f"M-estimators and their rank-sets (Chatzi et al. 2024).",
        f"The judge was weighed only where its answers correlated positively with the people's (one-sided Pearson "
        f"test at level {alpha:g} on at least 10 items both answered); otherwise the result is the people's own.",
        f"{100 * confidence:g}% intervals are Wald intervals with the plug-in variance, clipped to the estimand's "
        f"range. The unit is the item (several people's answers to one item averaged), and every sampled facet "
        f"the table shows is treated as random: where each item has one worker and workers repeat, the people's "
        f"term of the variance is cluster-robust over workers with a t on G - 1 df; where items carry several "
        f"workers' answers, it is the two-way (multiway) cluster-robust variance over items (or contexts) and "
        f"workers (Cameron, Gelbach and Miller 2011) with the CR3 small-sample correction and a t on min(levels) "
        f"- 1 df; where ACUTE conversations serve several items, the conversations of each side are facets too "
        f"(and the judge-only items, which share them, enter the same variance), and the ranking's people's "
        f"gradient term is treated the same way. With fewer than {min_clusters(alpha)} levels of "
        f"a facet no interval is given.",
    ]
    if used:
        parts.append("Units in this run: " + "; ".join(used) + ".")
    return " ".join(parts)
