"""The per-turn analysis as a report page (built with :mod:`parlai_acute.report`).

One section per design: the models' pick rates with their dialogue-level (cluster
bootstrap) intervals as an interval plot, the win-rate grid of the pairwise comparisons
(exact per-turn intervals in each cell), and the tables; then exclusions and flags, the
settings side by side, and per-worker statistics. Every figure names its interval.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.perturn.analysis import AnalysisResult, grid, jsonable
from parlai_acute.report import Report, interval_plot, win_rate_heatmap
from parlai_acute.stats.intervals import clopper_pearson

MODEL_COLUMNS = ["model", "turns", "picked", "rate", "ci_low", "ci_high", "boot_low", "boot_high", "design_effect"]
PAIR_COLUMNS = ["model_a", "model_b", "turns", "tie_win", "win_a", "win_b", "tie_loss", "diff", "test", "pvalue",
                "p_holm", "boot_low", "boot_high", "boot_pvalue", "boot_p_holm", "mark"]


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
    if _synthetic(result):
        report.banner("SYNTHETIC or SIMULATED data: these choices were not made by people")
    for design in result.designs:
        section = report.section(f"Design {design.label}")
        for g in design.groups:
            sub = section.section(f"Model set {g.model_set}: {g.turns} turns, {g.dialogues} dialogues, "
                                  f"{g.workers} workers")
            table = g.models_table.sort_values("rate", ascending=False)
            name = f"{design.label}_{g.model_set}".replace("|", "-")
            if config.bootstrap > 0:
                sub.figure(interval_plot(table, "model", "rate", "boot_low", "boot_high", xlabel="pick rate",
                                         interval_label=boot_label), f"rates_{name}")
            sub.table(table, f"models_{name}", caption=f"Pick rates; ci: {level} Clopper-Pearson, boot: "
                      f"{boot_label}", columns=MODEL_COLUMNS)
            if g.omnibus.get("pvalue") is not None and design.setting == "mm":
                sub.text(f"Omnibus {g.omnibus['test']}: statistic {g.omnibus['statistic']}, df {g.omnibus['df']}, "
                         f"p = {g.omnibus['pvalue']}")
            if len(g.positions):
                sub.table(g.positions, f"positions_{name}", caption=f"Picks by page position; "
                          f"{g.position_test['test']} p = {g.position_test['pvalue']}")
        if design.setting != "sm" and len(design.comparisons):
            cells = grid(design.comparisons)
            if len(cells):
                bounds = [clopper_pearson(int(w), int(n), config.confidence) for w, n in zip(cells["wins"], cells["n"])]
                cells = cells.assign(ci_low=[b[0] for b in bounds], ci_high=[b[1] for b in bounds])
                models = sorted(set(cells["row"]) | set(cells["col"]))
                section.figure(win_rate_heatmap(cells, models, interval_label=f"{level} Clopper-Pearson, turns "
                                                f"independent", title="turns where exactly one of the two was picked"),
                               f"grid_{design.label}")
            section.table(design.comparisons, f"pairs_{design.label}", caption="Pairwise comparisons (Holm within "
                          "the design); diff = rate_b - rate_a; boot: " + boot_label,
                          columns=[c for c in PAIR_COLUMNS if c in design.comparisons])
        elif len(design.comparisons):
            section.table(design.comparisons, "pairs_sm", caption="Single-model runs compared: Fisher exact, "
                          "two-proportion z, two-sample bootstrap; Holm")
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
    report.configuration("Analysis", jsonable(result.meta()))
    return report
