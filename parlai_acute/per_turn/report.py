"""The per-turn analysis as a report page (built with :mod:`parlai_acute.report`).

First what the numbers estimate (the estimands), then one section per design: the models' pick
rates with their dialogue-level (cluster bootstrap) intervals as an interval plot, the win-rate
grid of the pairwise comparisons (exact per-turn intervals in each cell), and the tables; then
exclusions and flags, the settings side by side, and per-worker statistics. Every figure names
its interval.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.files import json_ready
from parlai_acute.per_turn.analysis import PAIR_HEADERS, AnalysisResult, grid
from parlai_acute.report import Report, estimands_section, format_value, interval_plot, methods_paragraph, p_text, \
    win_rate_heatmap
from parlai_acute.stats.inference import legend, min_clusters

MODEL_COLUMNS = ["model", "turns", "picked", "rate", "ci_low", "ci_high", "boot_low", "boot_high", "design_effect"]
PAIR_COLUMNS = ["model_a", "model_b", "tie_win", "win_a", "win_b", "tie_loss", "diff", "cluster_low", "cluster_high",
                "cluster_pvalue", "cluster_p_holm", "mark", "cluster_note", "pvalue", "p_holm"]


def _in_words(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The pairs table with the test columns named in words, and the columns to show (rounded by
    the report layer's one rule)."""
    shown = [c for c in PAIR_COLUMNS if c in table]
    return table.rename(columns=PAIR_HEADERS), [PAIR_HEADERS.get(c, c) for c in shown]


def methods(result: AnalysisResult) -> str:
    """The report's closing Methods paragraph."""
    config = result.config
    turns = sum(g.turns for d in result.designs for g in d.groups)
    dialogues = sum(g.dialogues for d in result.designs for g in d.groups)
    designs = ", ".join(d.label for d in result.designs)
    omnibus = ("For the multi-model designs, the hypothesis that all models are equal was tested by permuting the "
               f"models' pick counts independently within each {config.cluster}."
               if any(d.setting == "mm" for d in result.designs) else "")
    return methods_paragraph(
        data=(f"{turns} per-turn choice{'s' if turns != 1 else ''} from {dialogues} "
              f"dialogue{'s' if dialogues != 1 else ''} (design{'s' if len(result.designs) != 1 else ''} {designs})"),
        unit=config.cluster,
        comparison="each pairwise difference in pick rates", alpha=config.alpha, confidence=config.confidence,
        permutations=config.permutations, seed=config.seed, family="each design (PM) or model set (MM)",
        omnibus=omnibus,
        secondary=("Per-turn exact tests that assume independent turns (binomial on the turns where exactly one "
                   "of two was picked, exact McNemar, Fisher, chi-squared, Cochran's Q) are reported as secondary "
                   f"columns; pick rates carry Clopper-Pearson intervals and {config.bootstrap}-resample percentile "
                   f"{config.cluster} bootstrap intervals"))


def _synthetic(result: AnalysisResult) -> bool:
    every = pd.concat([result.kept, result.excluded], ignore_index=True)
    labels = pd.concat([every["run_id"], every["worker"]]).astype(str).str.lower()
    return bool(labels.str.contains("simulated").any())


def build_report(result: AnalysisResult) -> Report:
    config = result.config
    level = f"{100 * config.confidence:g}%"
    boot_label = f"{level} {config.cluster}-bootstrap interval ({config.bootstrap} resamples)"
    report = Report("Per-turn evaluation", intro=f"Source: {config.source or 'turns table'}. Pick rate = share of "
                    f"turns on which the model's reply was picked. Turns of one {config.cluster} are resampled "
                    f"together for the bootstrap intervals and tests; the exact intervals and tests treat turns "
                    f"as independent.")
    estimands_section(report, result.estimands())
    if _synthetic(result):
        report.banner("SYNTHETIC or SIMULATED data: these choices were not made by people")
    for warning in result.warnings():
        report.banner(warning)
    report.section("How to read the marks").note(legend(config.alpha) + f" Intervals of differences: "
                                                   f"{level}, inverted cluster-aware test; at least "
                                                   f"{min_clusters(config.alpha)} {config.cluster}s are needed.")
    if result.design:
        report.section("Design read from the table").note(f"The unit of every test and interval: {result.design}.")
    for design in result.designs:
        section = report.section(f"Design {design.label}")
        for g in design.groups:
            sub = section.section(f"Model set {g.model_set}: {g.turns} turns, {g.dialogues} dialogues, "
                                  f"{g.workers} workers")
            table = g.models_table.sort_values("rate", ascending=False)
            name = f"{design.label}_{g.model_set}".replace("|", "-")
            if config.bootstrap > 0:
                count = g.dialogues if config.cluster == "dialogue" else g.workers
                few = count < config.min_clusters
                why = (f"{count} {config.cluster}{'s' if count != 1 else ''}; a {config.cluster} bootstrap needs "
                       f"{config.min_clusters} or more" if few
                       else "every resample gave the same rate")
                sub.figure(interval_plot(table, "model", "rate", "boot_low", "boot_high", xlabel="pick rate",
                                         interval_label=boot_label, missing=why), f"rates_{name}")
            sub.table(table, f"models_{name}", caption=f"Pick rates; CI: {level} Clopper-Pearson, bootstrap interval: "
                      f"{boot_label}", columns=MODEL_COLUMNS)
            if g.omnibus.get("cluster_method") and design.setting == "mm":
                om = g.omnibus
                verdict = (f"{p_text(om['cluster_pvalue'])}{om['mark']}" if om["cluster_pvalue"] is not None
                           else f"no test ({om['cluster_note']})")
                sub.text(f"All models equal? {verdict}: {om['cluster_method']}. Secondary (exact, judgments "
                         f"independent): {om['test']} statistic {format_value(om['statistic'])}, df {om['df']}, "
                         f"{p_text(om['pvalue'])}")
            if len(g.positions):
                sub.table(g.positions, f"positions_{name}", caption=f"Picks by page position; "
                          f"{g.position_test['test']} {p_text(g.position_test['pvalue'])}")
        if design.setting != "sm" and len(design.comparisons):
            cells = grid(design.comparisons, config.confidence)
            if len(cells):
                models = sorted(set(cells["row"]) | set(cells["col"]))
                section.figure(win_rate_heatmap(cells, models, interval_label=f"{level} Clopper-Pearson, turns "
                                                f"independent", unit="turns",
                                                title="Turns where exactly one of the two was picked"),
                               f"grid_{design.label}")
            table, columns = _in_words(design.comparisons)
            section.table(table, f"pairs_{design.label}", caption=f"Pairwise comparisons (Holm within the design); "
                          f"difference = pick rate of model B - model A; interval: {level} interval of the "
                          f"difference, inverted cluster-aware test over {config.cluster}s; mark from the "
                          f"cluster-aware Holm p; exact test: "
                          f"{design.comparisons['test'].iloc[0]} (pairs.csv has every column)", columns=columns)
        elif len(design.comparisons):
            table, _ = _in_words(design.comparisons)
            section.table(table, "pairs_sm", caption=f"Single-model runs compared: permutation of the model of whole "
                          f"{config.cluster}s (the mark), Fisher exact and two-proportion z (turns independent); Holm")
    if len(result.designs) > 1:
        side = report.section("Settings side by side")
        side.table(result.settings_table(), "settings", caption="Pick rate of each model in each design, and rank")
        side.table(result.sensitivity(), "sensitivity", caption=f"Sensitivity: comparisons significant after Holm "
                   f"at alpha {config.alpha:g}, mean |difference|")
        side.table(result.consistency(), "consistency", caption="Consistency: Kendall's tau of the rankings, share "
                   "of pairwise differences with the same sign")
    quality = report.section("Exclusions, flags and workers")
    quality.table(pd.DataFrame(result.exclusion_summary()), "exclusions", caption="Turns excluded, by first rule")
    quality.table(pd.DataFrame(result.flag_summary()), "flags", caption="Quality flags (excluded only if asked)")
    quality.table(result.workers(), "workers", caption="Per worker", max_rows=50, more="workers not shown")
    report.configuration("Analysis", json_ready(result.meta()))
    report.methods(methods(result))
    return report
