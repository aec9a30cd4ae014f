"""The ConvAI2 analysis as a report (shared report layer): what the numbers estimate (the
estimands), Likert means raw and calibrated per question, differences, persona detection."""
from __future__ import annotations

from parlai_acute.convai2.analysis import ConvAI2Result
from parlai_acute.report import Report, estimands_section, interval_plot, methods_paragraph


def add_section(report: Report, result: ConvAI2Result) -> None:
    """Likert means (raw and calibrated) per question, and persona detection."""
    names = result.config.interval_names()
    section = report.section("ConvAI2 end-of-chat evaluation")
    section.note("Calibration (Kulikov et al. 2018): score = model quality + annotator bias + noise, annotator "
                 "biases from a normal prior; calibrated = posterior mean of the model's quality.")
    for question, table in result.likert.groupby("question", sort=True):
        details = result.calibration[question]
        sub = section.section(f"Question {question}")
        sub.note(f"t interval: {names['t']}; bootstrap interval: {names['workers']}; calibrated [interval]: "
                 f"{names['calibrated']}; sigma_b={details['sigma_b']:.3g}, sigma_e={details['sigma_e']:.3g} "
                 f"({details['variances']}).")
        sub.table(table.drop(columns=["question"]), f"likert_{question}", caption=f"{question} per model")
        sub.figure(interval_plot(table, "model", "mean", "boot_low", "boot_high", xlabel=f"raw mean {question}",
                                 interval_label=names["workers"]), f"raw_{question}",
                   caption=f"Raw mean {question}; bars: {names['workers']}")
        sub.figure(interval_plot(table, "model", "calibrated", "calibrated_low", "calibrated_high",
                                 xlabel=f"calibrated {question}", interval_label=names["calibrated"]),
                   f"calibrated_{question}", caption=f"Calibrated {question}; bars: {names['calibrated']}")
    if result.differences is not None and len(result.differences):
        from parlai_acute.stats.inference import legend

        sub = section.section("Differences between models")
        sub.note(f"Mean score of model B minus model A per question; CI: {names['differences']}. Marks: "
                 f"{legend(result.config.alpha)} 'reason' says why a test or interval is not given.")
        sub.table(result.differences, "differences", caption="Differences between models, tested over workers")
    if len(result.persona):
        sub = section.section("Persona detection")
        sub.note(f"Share of dialogues in which the worker picked the model's persona out of two; CI: "
                 f"{names['persona']}. Chance is 50%.")
        sub.table(result.persona, "persona", caption="Persona detection per model")
        sub.figure(interval_plot(result.persona, "model", "rate", "ci_low", "ci_high", xlabel="persona detection rate",
                                 interval_label=names["persona"], reference=0.5), "persona",
                   caption=f"Persona detection; bars: {names['persona']}")


def build_report(result: ConvAI2Result) -> Report:
    report = Report("ConvAI2 human evaluation")
    estimands_section(report, result.estimands())
    add_section(report, result)
    report.configuration("Run", result.meta())
    report.methods(methods(result))
    return report


def methods(result: ConvAI2Result) -> str:
    """The report's closing Methods paragraph: every test, interval, correction and unit it used."""
    config, ratings = result.config, result.ratings
    variances = ("sigma_b = sigma_e = 1 as in Kulikov et al. (2018)" if config.variances == "fixed" else
                 "annotator and noise variances estimated by REML (empirical Bayes)")
    return methods_paragraph(
        data=(f"{len(ratings)} end-of-chat Likert ratings of {ratings['model'].nunique()} models by "
              f"{ratings['worker'].nunique()} workers (ConvAI2's human evaluation, Dinan et al. 2019)"),
        unit="worker", comparison="each pairwise difference of mean scores per question (each worker's own "
        "mean difference where they rated both models, so their harshness cancels)", alpha=config.alpha,
        confidence=config.confidence, permutations=10_000, seed=config.seed,
        family="the pairs of models of each question",
        secondary=(f"Mean scores carry t intervals (ratings independent) and {config.bootstrap}-resample percentile "
                   f"bootstrap intervals over whole workers; calibrated scores remove each annotator's bias with "
                   f"the Bayesian model of Kulikov et al. (2018), {variances}, and carry normal credible intervals"),
        extra="Persona detection rates carry Clopper-Pearson intervals (dialogues independent)")
