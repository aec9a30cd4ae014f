"""HTML reports of the metrics commands, built with the shared report layer
(:mod:`parlai_acute.report`: escaped tables exported as LaTeX/Markdown, matplotlib
figures inline and as SVG/PDF). Every figure says what its bars are.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute import __version__

from parlai_acute.report import Report, bar_plot, interval_plot

LOG_PLOTS = [("words_per_utt", "words per utterance"), ("freq1k", "share of words with < 1,000 corpus occurrences"),
             ("repeat_self_3", "share of trigrams repeated from own earlier turns"),
             ("unique_share", "share of unique utterances"), ("question_mark", "share of utterances with '?'")]


def _interval_label(level: float, what: str) -> str:
    return f"{level:.0%} percentile bootstrap interval over {what}"


def score_report(result, config, source: str) -> Report:
    report = Report("Reference-based metrics", f"{result.config['contexts']} contexts, {result.config['references']} "
                                               f"references; replies: {source}.")
    summary = result.summary
    section = report.section("Single- and multi-reference scores")
    section.note("single: against the first reference; multi: best reference per context (sentence metrics) or all "
                 "references together (corpus metrics). Scores in [0, 1]; embedding metrics are cosines.")
    section.table(summary.drop(columns=["signature"]), "summary",
                  caption=f"Mean [{_interval_label(config.confidence, 'contexts')}]")
    long = pd.concat([summary.assign(label=summary["metric"] + " (" + kind + ")", estimate=summary[kind],
                                     low=summary[f"{kind}_low"], high=summary[f"{kind}_high"],
                                     note=summary[f"{kind}_note"], order=range(len(summary)))
                      for kind in ("single", "multi")]).sort_values("order", kind="stable")
    section.figure(interval_plot(long, "label", "estimate", "low", "high", "score",
                                 _interval_label(config.confidence, "contexts"), note="note"), "scores")
    div = report.section("Diversity of the replies")
    div.table(pd.DataFrame([{"measure": k, "value": v, "note": result.diversity.get(f"{k}_note", "")}
                            for k, v in result.diversity.items() if not k.endswith("_note")]), "diversity")
    div.note("distinct-n within / across replies; Self-BLEU-4 against the other sampled replies (lower is more "
             "diverse); recall/precision of references when there are several hypotheses per context.")
    signatures = report.section("Signatures")
    signatures.table(pd.DataFrame([{"metric": k, "signature": v["signature"]} for k, v in result.signatures.items()]),
                     "signatures")
    report.configuration("Run", result.config)
    return report


def rank_report(summary: dict, table: pd.DataFrame, config, tokenisation: dict) -> Report:
    report = Report("Ranking and perplexity", f"{summary['contexts']} contexts; model {tokenisation['model']}.")
    names = [k for k in summary if k not in ("contexts", "gold_tokens") and not k.endswith(("_low", "_high", "_note"))]
    shown = pd.DataFrame([{"measure": k, "value": summary[k], "value_low": summary.get(f"{k}_low", float("nan")),
                           "value_high": summary.get(f"{k}_high", float("nan")), "note": summary.get(f"{k}_note", "")}
                          for k in names])
    section = report.section("Perplexity and hits@1")
    section.table(shown, "summary",
                  caption=f"perplexity: [{_interval_label(config.confidence, 'contexts')}]; shares: "
                          f"[{config.confidence:.0%} Clopper-Pearson interval]")
    hits = shown[shown["measure"] != "perplexity"]
    if len(hits):
        section.figure(interval_plot(hits, "measure", "value", "value_low", "value_high", "share of contexts",
                                     f"{config.confidence:.0%} Clopper-Pearson interval", reference=1 / config.candidates),
                       "hits")
        section.note(f"dashed line: chance ({1 / config.candidates:.3f}) for {config.candidates} candidates")
    report.configuration("Run", {**vars(config), "tokenisation": tokenisation})
    return report


def logs_report(table: pd.DataFrame, config: dict) -> Report:
    report = Report("Conversation analytics", "Per speaker of each log, after the ConvAI2 report's tables.")
    section = report.section("Per-speaker statistics")
    section.note("Descriptive statistics of the logs given: no interval. Seed turns (real openings) are left out.")
    section.table(table, "logs_table")
    labels = (table["log"] + " / " + table["speaker"] + " (" + table["role"] + ")").tolist()
    for column, title in LOG_PLOTS:
        section.figure(bar_plot(labels, table[column].fillna(0).to_numpy(), title, "descriptive, no interval"),
                       f"logs_{column}")
    report.configuration("Run", config)
    return report


def correlation_report(tables: dict, config, fits: pd.DataFrame | None, ratings: dict | None = None) -> Report:
    """``ratings``: how per-annotator ratings were aggregated and the annotators' agreement (a
    section before the correlations, and a sentence in the methods)."""
    report = Report("Do the metrics agree with people?")
    if ratings and ratings.get("aggregate"):
        a = ratings["annotator_agreement"]
        section = report.section("Ratings and the annotators' agreement")
        section.table(pd.DataFrame([{"replies": ratings["replies"], "ratings": ratings["ratings"],
                                     "annotators": ratings["annotators"], "aggregate": ratings["aggregate"],
                                     "krippendorff_alpha": a["krippendorff_alpha"], "alpha_ci_low": a["alpha_ci_low"],
                                     "alpha_ci_high": a["alpha_ci_high"]}]), "ratings_agreement",
                      caption=f"per-annotator ratings, aggregated per reply by the {ratings['aggregate']}; "
                              f"Krippendorff's alpha (interval level) [{_interval_label(config.confidence, 'replies')}]")
        if a["note"]:
            section.note(f"No interval: {a['note']}.")
    for level, shaped in tables.items():
        section = report.section(f"Correlation with ratings per {level}")
        what = "responses" if level == "response" else "systems (Fisher z)"
        notes = [c for c in shaped.columns if c.endswith("_note")]
        section.table(shaped.drop(columns=notes), f"correlations_{level}",
                      caption=f"Spearman and Pearson, single- and multi-reference [{_interval_label(config.confidence, what)}]")
        long = pd.concat([shaped.assign(label=shaped["metric"] + f" ({kind})", estimate=shaped[f"spearman_{kind}"],
                                        low=shaped[f"spearman_{kind}_low"], high=shaped[f"spearman_{kind}_high"],
                                        order=range(len(shaped)))
                          for kind in ("single", "multi")]).sort_values("order", kind="stable")
        section.figure(interval_plot(long, "label", "estimate", "low", "high", "Spearman correlation",
                                     _interval_label(config.confidence, what), reference=0.0), f"spearman_{level}")
        if level == "system":
            section.note("The systems are the sampled units: intervals are Fisher z over systems (Bonett-Wright for "
                         "Spearman), given from 4 systems on and for a correlation short of +-1. correlations_system.csv "
                         "says why where none is given.")
            for note in sorted({v for c in notes for v in shaped[c] if isinstance(v, str) and v}):
                section.note(f"No interval: {note}.")
    if fits is not None:
        section = report.section("Perplexity against human scores across models")
        section.table(fits, "perplexity_vs_human",
                      caption="linear fit of each human score on perplexity; r with its 95% Fisher-z interval")
    report.configuration("Run", {**vars(config), "metrics": list(config.metrics)})
    report.methods(correlation_methods(tables, config, fits, ratings))
    return report


def correlation_methods(tables: dict, config, fits: pd.DataFrame | None, ratings: dict | None = None) -> str:
    """The report's closing Methods paragraph: the levels, the correlations, their intervals and units."""
    sizes = {level: len(shaped) for level, shaped in tables.items()}
    parts = []
    if ratings and ratings.get("aggregate"):
        parts.append(f"Each of {ratings['replies']} replies was rated by several of {ratings['annotators']} annotators "
                     f"({ratings['ratings']} ratings); a reply's rating is the {ratings['aggregate']} of its "
                     f"annotators', and their agreement is Krippendorff's alpha at the interval level with a "
                     f"{100 * config.confidence:g}% percentile bootstrap over replies.")
    parts += [f"We correlated the scores of {len(config.metrics)} reference-based metrics "
             f"({', '.join(config.metrics)}), single- and multi-reference, with human ratings using parlai_acute "
             f"{__version__}, at {' and '.join(f'the {level} level' for level in sizes)}, by Spearman's rank "
             f"correlation and Pearson's r."]
    if "response" in tables:
        parts.append(f"Response-level intervals are {100 * config.confidence:g}% percentile bootstrap intervals over "
                     f"responses ({config.bootstrap} resamples, seed {config.seed}); responses are treated as the "
                     f"independent units.")
    if "system" in tables:
        parts.append(f"System-level intervals are {100 * config.confidence:g}% Fisher-z intervals over systems "
                     f"(Bonett-Wright's variance for Spearman), given from 4 systems on and for a correlation short "
                     f"of +-1; the systems are the sampled units.")
    if fits is not None:
        parts.append("Perplexity is related to each human score across models by a least-squares line, with r and "
                     "its 95% Fisher-z interval.")
    parts.append("P-values test no correlation over the same units: scipy's t tests per response, and per system "
                 "the exact permutation test over every pairing of the systems (up to 8 systems; scipy's above); no "
                 "correction for the many metrics is applied: read the intervals.")
    return " ".join(parts)
