"""The SSA analysis as a report page (shared report layer): what the numbers estimate (the
estimands), rates with labelled intervals, pairwise comparisons, agreement, workers, configuration."""
from __future__ import annotations

from parlai_acute.report import Report, estimands_section, interval_plot, methods_paragraph
from parlai_acute.ssa.analysis import MEASURES, PAIR_HEADERS, TIE_RULE, SSAResult
from parlai_acute.stats.inference import legend

_NAMES = {"sensibleness": "Sensibleness", "specificity": "Specificity", "ssa": "SSA"}


def build_report(result: SSAResult, title: str = "Sensibleness and Specificity Average (SSA)") -> Report:
    config = result.config
    names = config.interval_names()
    meta = result.meta()
    report = Report(title, intro=(f"{meta['labels']} labels of {meta['items']} replies by "
                                  f"{meta['workers']} workers ({', '.join(meta['sources'])} items). "
                                  f"Majority label per item; {TIE_RULE}. SSA = (sensibleness + specificity) / 2."))
    estimands_section(report, result.estimands())
    for note in result.notes:
        report.banner(note, kind="warning" if note.startswith("FEW ") else "info")
    report.section("How to read the marks").note(legend(config.alpha))
    section = report.section("Models")
    columns = ["model", "items", "labels", "workers", "sensibleness", "sensibleness_exact_low",
               "sensibleness_exact_high", "sensibleness_boot_low", "sensibleness_boot_high", "specificity",
               "specificity_exact_low", "specificity_exact_high", "specificity_boot_low", "specificity_boot_high",
               "ssa", "ssa_boot_low", "ssa_boot_high", "label_sensibleness", "label_specificity"]
    section.note(f"exact interval: {names['exact']}; bootstrap interval: {names['bootstrap']}. An empty bootstrap "
                 f"interval means every resample agreed (no honest width); the exact interval stands.")
    section.table(result.models, "models", caption="Sensibleness, specificity and SSA per model", columns=columns)
    for measure in MEASURES:
        table = result.models.assign(note=[
            "" if lo == lo else "no bootstrap width: every resample agreed"
            for lo in result.models[f"{measure}_boot_low"]])
        section.figure(interval_plot(table, "model", measure, f"{measure}_boot_low", f"{measure}_boot_high",
                                     xlabel=_NAMES[measure], interval_label=names["bootstrap"], note="note"),
                       f"{measure}_intervals", caption=f"{_NAMES[measure]} per model; bars: {names['bootstrap']}")
    pairs = report.section("Pairwise comparisons")
    unit = result.pairs["unit"].iloc[0] if len(result.pairs) else "cluster"
    if result.design:
        pairs.note(f"Design read from the table: {result.design}.")
    pairs.note(f"difference = model B - model A. interval: {100 * config.confidence:g}% interval of the difference, "
               f"the inverted "
               f"cluster-aware test over {unit}s (method column); p (Fisher exact, items independent): secondary. "
               f"Holm correction within each measure over all pairs; the mark comes from the cluster-aware Holm p.")
    if len(result.pairs):
        pairs.note(f"Cluster-aware test: {result.pairs['cluster_method'].iloc[0]}, over "
                   f"{int(result.pairs['clusters'].max())} {unit}s at most (pairs.csv has every column).")
    columns = ["model_a", "model_b", "measure", "value_a", "value_b", "diff", "cluster_low", "cluster_high",
               "cluster_pvalue", "cluster_p_holm", "mark", "cluster_note", "fisher_pvalue", "fisher_p_holm"]
    if result.pairs["context_pvalue"].notna().any():  # crossed: the one-facet test as a secondary column
        columns.insert(columns.index("fisher_pvalue"), "context_pvalue")
    if (result.pairs["unit"] == "worker").any():
        columns.insert(6, "cluster_estimate")
    pairs.table(result.pairs.rename(columns=PAIR_HEADERS), "pairs", caption="Pairwise differences",
                columns=[PAIR_HEADERS.get(c, c) for c in columns])
    agreement = report.section("Agreement between workers")
    agreement.note(f"Items labelled at least twice. Percent agreement: share of agreeing pairs of labels. "
                   f"Krippendorff's alpha (nominal) with a {100 * config.confidence:g}% percentile bootstrap "
                   f"interval over items ({config.bootstrap} resamples, seed {config.seed}).")
    agreement.table(result.agreement, "agreement", caption="Agreement per question")
    workers = report.section("Workers", collapsed=True)
    workers.note("agree sensible / agree specific: share of the worker's labels equal to the item's majority, on "
                 "items with 3 or more labels.")
    workers.table(result.workers, "workers", caption="Labels per worker", max_rows=50, more="workers (see workers.csv)")
    report.configuration("Run", meta)
    report.methods(methods(result))
    return report


def methods(result: SSAResult) -> str:
    """The report's closing Methods paragraph."""
    config, meta = result.config, result.meta()
    unit = result.pairs["unit"].iloc[0] if len(result.pairs) else "conversation"
    return methods_paragraph(
        data=(f"{meta['labels']} sensibleness/specificity labels of {meta['items']} replies by "
              f"{meta['workers']} workers ({', '.join(meta['sources'])} items; majority label per item, "
              f"{TIE_RULE})"), unit=unit,
        comparison="each pairwise difference in sensibleness, specificity and SSA", alpha=config.alpha,
        confidence=config.confidence, permutations=config.permutations, seed=config.seed,
        family="each measure over all pairs of models",
        secondary=("Fisher's exact test on the item counts, which assumes independent items, is reported as a "
                   f"secondary column; rates carry Clopper-Pearson intervals and {config.bootstrap}-resample "
                   "percentile cluster-bootstrap intervals"), extra=_crossed_sentence(result))


def _crossed_sentence(result: SSAResult) -> str:
    """The methods sentence when workers and contexts were crossed ('' otherwise)."""
    if not len(result.pairs) or not (result.pairs["unit"] == "worker x context").any():
        return ""
    return ("Workers labelled replies to many contexts, so workers and contexts were both treated as sampled: the "
            "test and interval of each difference used a two-way cluster-robust variance (Cameron, Gelbach and "
            "Miller 2011) in which each item majority's residual is clustered by context with the CR2 correction "
            "and its linear part in each label (the label's residual times the share of labels that decide their "
            "item's majority) by worker, with a t whose degrees of freedom are the number of contexts that carry the "
            "context variance (the squared sum of their contributions over the sum of their squares, at most "
            "min(contexts, workers) - 1); the sign-flip "
            "test over contexts, a statement about these workers, is reported beside it")

