"""The ACUTE-Eval report, built on the shared report layer (:mod:`parlai_acute.report`).

:func:`build_report` turns an :class:`~parlai_acute.acute.analysis.AnalysisResult` into a
:class:`~parlai_acute.report.Report`: a banner when workers were simulated, what the numbers
estimate (its estimands), exclusions, per question the warnings (matchups resting on few
workers), the win-rate grid (models in rank order, Clopper-Pearson intervals), the matchups, the
Bradley-Terry ranking plot and table (its interval method named), with ties the win, tie and
loss rates and Davidson's tie-aware ranking, with style control the raw and style-controlled
strengths and the style coefficients, agreement, then judgments per worker, reasons and
the configuration (analysis settings and, when given, each model's configuration).
Every text -- model names, worker ids and reasons, questions -- is escaped by the layer.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.stats.winrates import design_note
from parlai_acute.report import Report, estimands_section, interval_plot, win_rate_heatmap
from parlai_acute.report.tables import interval_text, p_text
from parlai_acute.stats.inference import legend

#: Reasons shown per matchup; all of them are in reasons.csv (a big run would make a huge page).
MAX_REASONS_SHOWN = 100


def _order(q) -> list[str]:
    """Models best first when there is a ranking, else as analysed."""
    return list(q.ranking["model"]) if q.ranking is not None else list(q.models)


def _percent(confidence: float) -> str:
    return f"{100 * confidence:g}%"


def _grid_section(section, result, q) -> None:
    level = _percent(result.config.confidence)
    grid = section.section("Win rates")
    grid.note(f"Cell (row A, column B): percentage of A-vs-B judgments won by B, with wins/judgments and the "
              f"{level} interval over workers (inverted sign-flip test) in percent. Marks: "
              f"{legend(result.config.alpha)} Models in rank order.")
    cells = q.grid.assign(note=[f"{w} worker{'s' if w != 1 else ''}" + (" (few)" if few else "")
                                + (f"; {why}" if why else "")
                                for w, few, why in zip(q.grid["workers"], q.grid["few_workers"], q.grid["reason"])])
    grid.figure(win_rate_heatmap(cells, _order(q), interval_label=f"{level} over workers (inverted sign-flip test)"),
                f"winrate_grid_{q.question_key}",
                caption=f"Win-rate grid, question {q.question_key}: each cell is the matchup of its row model and its "
                        f"column model; the number is the share of their judgments the column model won.")
    grid.note(f"Columns: p, p (Holm), mark and CI come from the test over workers named in 'test' "
              f"(empty where none can be given: 'reason' says why, 'workers needed' how many workers a mark "
              f"needs); p exact, p exact (Holm) and CI exact are the exact binomial test and "
              f"{level} Clopper-Pearson interval, judgments independent (secondary: one worker's judgments "
              f"share that worker's taste). few workers: fewer than {q.min_workers} distinct workers. "
              f"pairs.csv has every column at full precision.")
    grid.table(q.matchups, f"matchups_{q.question_key}", caption=f"Matchups, question {q.question_key}")


def _ranking_figure(section, ranking, rank: str, columns: tuple[str, str, str], xlabel: str, label: str,
                    name: str, caption: str) -> None:
    """One ranking as a figure: a row per model ("1. model"), its strength and interval, 0 marked.
    The plain, tie-aware and style-controlled rankings are drawn alike so they read alike."""
    rows = ranking.assign(label=[f"{r}. {m}" for r, m in zip(ranking[rank], ranking["model"])])
    section.figure(interval_plot(rows, "label", *columns, xlabel=xlabel, interval_label=label, reference=0.0,
                                 note="note"), name, caption=caption)


def _ranking_section(section, result, q) -> None:
    ranking = section.section("Ranking (Bradley-Terry)")
    if q.ranking is None:
        ranking.text(f"No ranking: {q.ranking_error}")
        return
    methods = sorted(set(q.ranking["interval"]) - {""})
    level = _percent(result.config.confidence)
    label = f"{level} {' / '.join(methods) or 'no'} interval"
    _ranking_figure(ranking, q.ranking, "rank", ("strength", "ci_low", "ci_high"),
                    "Bradley-Terry log-strength (mean 0)", label, f"ranking_{q.question_key}",
                    f"Bradley-Terry ranking, question {q.question_key}.")
    ranking.note(f"Intervals: {label} (bt_alpha={result.config.bt_alpha:g}), given when the data are neither "
                 f"separated nor small and from {q.min_workers} workers on ('note' says why otherwise). Secondary, "
                 f"judgments independent ('CI judgments', its method in 'interval judgments'): the percentile "
                 f"bootstrap of judgments, or for separated or small data the penalised profile-likelihood interval, "
                 f"which never collapses to a point but is asymptotic; there trust the win-rate tests over workers.")
    ranking.table(q.ranking, f"ranking_{q.question_key}", caption=f"Bradley-Terry ranking, question {q.question_key}")


def _ties_section(section, result, q) -> None:
    """Win, tie and loss rates and Davidson's tie-aware ranking, when the task offered a tie."""
    if q.outcomes is None:
        return
    level = _percent(result.config.confidence)
    ties = section.section("Ties")
    ties.note("The task offered a tie (and 'both are bad'): the win rates above count a tie as half a win for each "
              "model, and so do their tests over workers and the Bradley-Terry ranking. Here: the share of each "
              "pair's judgments B won outright, tied, and A won outright, and the share judged both bad (a kind "
              f"of tie), each with its {level} interval (its method named per share).")
    ties.table(q.outcomes, f"outcomes_{q.question_key}", caption=f"Win, tie and loss rates, question {q.question_key}")
    if q.tie_ranking is None:
        ties.text(f"No tie-aware ranking: {q.tie_ranking_error}")
        return
    t = q.tie_parameter
    label = f"{level} {t['interval'] or 'no'} interval"
    _ranking_figure(ties, q.tie_ranking, "rank", ("strength", "ci_low", "ci_high"),
                    "Davidson log-strength (mean 0)", label, f"ranking_ties_{q.question_key}",
                    f"Tie-aware (Davidson) ranking, question {q.question_key}.")
    nu = interval_text(t["nu"], t["nu_low"], t["nu_high"])
    equal = interval_text(t["tie_if_equal"], t["tie_if_equal_low"], t["tie_if_equal_high"], 1, scale=100, unit="%")
    ties.note(f"{t['model']}. Tie parameter nu {nu}; two equally strong models tie with probability {equal} "
              f"({label}{': ' + t['note'] if t['note'] else ''}).")
    ties.table(q.tie_ranking, f"ranking_ties_{q.question_key}", caption=f"Davidson ranking, question {q.question_key}")


def _style_section(section, result, q) -> None:
    """Raw and style-controlled strengths side by side, and the style coefficients (style control only)."""
    if not result.config.style_control:
        return
    style = section.section("Style control (reply length and markdown)")
    if q.style is None:
        style.text(f"No style-controlled ranking: {q.style_error}")
        return
    s, level = q.style, _percent(result.config.confidence)
    label = f"{level} {s.interval or 'no'} interval"
    _ranking_figure(style, s.ranking, "rank_controlled", ("controlled", "controlled_low", "controlled_high"),
                    "log-strength with style held fixed (mean 0)", label, f"ranking_style_{q.question_key}",
                    f"Style-controlled ranking, question {q.question_key}.")
    dropped = "; ".join(f"{name} not used: {why}" for name, why in s.dropped.items())
    style.note(f"Model: {s.model}. Ties: {s.ties}. Raw: the same model without the style covariates, fitted to the "
               f"same judgments (bt_alpha={result.config.bt_alpha:g}); shift = controlled - raw. Intervals: {label}"
               + (f" ({s.note})" if s.note else "") + "." + (f" {dropped}." if dropped else ""))
    style.table(s.ranking, f"ranking_style_{q.question_key}",
                caption=f"Raw and style-controlled strengths, question {q.question_key}")
    style.note("Coefficient: the log-odds of winning per standard deviation ('sd') of the normalised difference "
               "(left - right) / (left + right + 1) of that feature; above 0, judges preferred the reply with more.")
    style.table(s.coefficients, f"style_coefficients_{q.question_key}",
                caption=f"Style coefficients, question {q.question_key}")


def _agreement_section(section, result, q) -> None:
    agreement = section.section("Agreement")
    a = q.agreement
    if a["items"] == 0:
        agreement.text(a["note"][:1].upper() + a["note"][1:] + ".")
    else:
        if a["note"]:
            agreement.note(a["note"][:1].upper() + a["note"][1:] + ".")
        agreement.table(pd.DataFrame([{k: v for k, v in a.items() if k != "note"}]))
        agreement.note(f"Krippendorff's alpha (nominal) with a {_percent(result.config.confidence)} percentile "
                       f"bootstrap interval over items (pairs of conversations judged more than once).")
    b = q.side_bias
    agreement.note(f"Left conversation won {b['left_wins']} of {b['n']} judgments (two-sided binomial "
                   f"{p_text(b['pvalue'])}); sides are randomised, so this checks the interface, not the "
                   f"models.")


def build_report(result, model_configs: dict | None = None) -> Report:
    """The report of an :class:`~parlai_acute.acute.analysis.AnalysisResult`."""
    from parlai_acute.acute.summary import methods_paragraph

    meta = result.meta()
    report = Report("ACUTE-Eval report", intro=(
        f"{len(result.kept)} judgments analysed, {len(result.excluded)} excluded, from {result.config.source}. "
        f"parlai_acute {meta['parlai_acute_version']}, seed {meta['seed']}."))
    estimands_section(report, result.estimands())
    simulated, workers = result.simulated_workers()
    if simulated:
        report.banner(f"Judged by SIMULATED workers: {simulated} of {workers} workers are scripted programs, not "
                      f"people. These results say nothing about human judgment.")
    for flag in result.flags:
        report.banner(f"Verdicts of an untrustworthy judge are in these results: {flag}.")
    warnings = [w for q in result.questions for w in q.warnings()]
    if warnings:
        few = report.section("Results resting on very few workers")
        for warning in warnings:
            few.text(warning)
    exclusions = report.section("Exclusions")
    exclusions.table(pd.DataFrame(result.exclusion_summary()), "exclusions")
    exclusions.note("Per-worker cap: none (max_per_worker='none')." if result.cap == "none" else
                    f"Per-worker cap: {result.cap} judgments "
                    f"({result.config.cap_source or 'default: model pairs x questions'}).")
    aa = result.aa_checks()
    if len(aa):
        check = exclusions.section("A/A comparisons (same model on both sides)")
        check.note("The left side should win about half of them; a small p-value means annotators favour a side.")
        check.table(aa, "aa_checks")
    for q in result.questions:
        section = report.section(f"Question {q.question_key}")
        if q.question:
            section.text(q.question)
        note = design_note(q.matchups)
        if note:
            section.note(f"Design read from the table: {note}.")
        _grid_section(section, result, q)
        _ranking_section(section, result, q)
        _ties_section(section, result, q)
        _style_section(section, result, q)
        _agreement_section(section, result, q)
    per_worker = result.workers()
    report.section("Judgments per worker").section(f"{len(per_worker)} workers", collapsed=True).table(per_worker)
    reasons = report.section("Reasons by matchup")
    for (key, matchup), group in result.reasons().groupby(["question_key", "matchup"], sort=True):
        reasons.section(f"{key}: {matchup} ({len(group)})", collapsed=True).table(
            group, columns=["winner", "loser", "worker", "reason"], max_rows=MAX_REASONS_SHOWN, more="in reasons.csv")
    report.section("Marks").note(legend(result.config.alpha))
    report.methods(methods_paragraph(result))
    if model_configs:
        report.configuration("Models", model_configs)
    report.configuration("Analysis", meta)
    return report
