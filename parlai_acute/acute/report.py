"""The ACUTE-Eval report, built on the shared report layer (:mod:`parlai_acute.report`).

:func:`build_report` turns an :class:`~parlai_acute.acute.analysis.AnalysisResult` into a
:class:`~parlai_acute.report.Report`: exclusions, per question the win-rate grid (models
in rank order), the matchups, the Bradley-Terry ranking plot and table, agreement, then
judgments per worker, reasons and the configuration. Every text -- model names, worker
ids and reasons, questions -- is escaped by the report layer.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.report import Report, interval_plot, win_rate_heatmap
from parlai_acute.report.tables import format_value

#: Reasons shown per matchup; all of them are in reasons.csv (a big run would make a huge page).
MAX_REASONS_SHOWN = 100


def _order(q) -> list[str]:
    """Models best first when there is a ranking, else as analysed."""
    return list(q.ranking["model"]) if q.ranking is not None else list(q.models)


def _question_section(report: Report, result, q) -> None:
    section = report.section(f"Question {q.question_key}")
    if q.question:
        section.text(q.question)
    grid = section.section("Win rates")
    grid.note("Cell (row A, column B): percentage of A-vs-B judgments won by B, with wins/judgments. Marks use "
              "Holm-corrected two-sided exact binomial p-values: * p < .05, ** p < .01.")
    grid.figure(win_rate_heatmap(q.grid, _order(q)), f"winrate_grid_{q.question_key}",
                caption=f"Win-rate grid, question {q.question_key}; models in rank order.")
    grid.table(q.matchups, f"matchups_{q.question_key}", caption=f"Matchups, question {q.question_key}")
    ranking = section.section("Ranking (Bradley-Terry)")
    if q.ranking is None:
        ranking.text(f"No ranking: {q.ranking_error}")
    else:
        level = f"{100 * result.config.confidence:g}% bootstrap interval"
        ranking.figure(interval_plot(q.ranking.assign(label=[f"{r}. {m}" for r, m in zip(q.ranking["rank"],
                                                                                         q.ranking["model"])]),
                                     "label", "strength", "ci_low", "ci_high",
                                     xlabel="Bradley-Terry log-strength (mean 0)", interval_label=level,
                                     reference=0.0),
                       f"ranking_{q.question_key}", caption=f"Bradley-Terry ranking, question {q.question_key}.")
        ranking.table(q.ranking, f"ranking_{q.question_key}", caption=f"Bradley-Terry ranking, question "
                                                                       f"{q.question_key}")
    agreement = section.section("Agreement")
    agreement.table(pd.DataFrame([q.agreement]))
    b = q.side_bias
    agreement.note(f"Left conversation won {b['left_wins']} of {b['n']} judgments (two-sided binomial p = "
                   f"{format_value(b['pvalue'])}); sides are randomised, so this checks the interface, not the "
                   f"models.")


def build_report(result) -> Report:
    """The report of an :class:`~parlai_acute.acute.analysis.AnalysisResult`."""
    meta = result.meta()
    report = Report("ACUTE-Eval report", intro=(
        f"{len(result.kept)} judgments analysed, {len(result.excluded)} excluded, from {result.config.source}. "
        f"parlai_acute {meta['parlai_acute_version']}, seed {meta['seed']}."))
    exclusions = report.section("Exclusions")
    exclusions.table(pd.DataFrame(result.exclusion_summary()), "exclusions")
    exclusions.note(f"Per-worker cap: {result.cap} judgments.")
    aa = result.aa_checks()
    if len(aa):
        check = exclusions.section("A/A comparisons (same model on both sides)")
        check.note("The left side should win about half of them; a small p-value means annotators favour a side.")
        check.table(aa, "aa_checks")
    for q in result.questions:
        _question_section(report, result, q)
    workers = result.workers()
    report.section("Judgments per worker").section(f"{len(workers)} workers", collapsed=True).table(workers)
    reasons = report.section("Reasons by matchup")
    for (key, matchup), group in result.reasons().groupby(["question_key", "matchup"], sort=True):
        reasons.section(f"{key}: {matchup} ({len(group)})", collapsed=True).table(
            group, columns=["winner", "loser", "worker", "reason"], max_rows=MAX_REASONS_SHOWN, more="in reasons.csv")
    report.configuration("Analysis", meta)
    return report
