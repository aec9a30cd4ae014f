"""The multi-reference collection's report: what the numbers estimate (the estimands), the modes
table and interval plots of Self-BLEU, Gt-BLEU and unique unigrams per mode."""
from __future__ import annotations

from parlai_acute.multiref.analysis import MultirefResult
from parlai_acute.report import Report, estimands_section, interval_plot

__all__ = ["build_report"]


def build_report(result: MultirefResult) -> Report:
    """The report page: the modes table and Self-BLEU, Gt-BLEU and unique-unigram interval plots."""
    level = f"{100 * result.config['confidence']:g}%"
    interval = f"{level} percentile bootstrap over contexts ({result.config['bootstrap']} resamples, seed " \
               f"{result.config['seed']})"
    page = Report("Multi-reference collection", intro=f"BLEU: {result.signature}. Self-BLEU: lower is more "
                                                      f"diverse; Gt-BLEU: overlap with the original reply.")
    estimands_section(page, result.estimands())
    section = page.section("Collection modes")
    section.note(f"[low, high]: {interval}.")
    section.table(result.modes, "modes", caption="Per collection mode (means over contexts)")
    for measure, label in (("self_bleu4", "Self-BLEU-4"), ("gt_bleu4", "Gt-BLEU-4"),
                           ("unique1_collected", "unique unigrams of the collected replies")):
        section.figure(interval_plot(result.modes, "mode", measure, f"{measure}_low", f"{measure}_high",
                                     xlabel=label, interval_label=interval, note="note"), measure,
                       caption=f"{label} per mode; bars: {interval}")
    page.configuration("Run", result.meta())
    return page
