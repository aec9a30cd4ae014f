"""The text summary of an ACUTE-Eval analysis, as ``acute analyze`` and ``acute fast`` print it."""
from __future__ import annotations

from parlai_acute.stats.inference import legend


def _interval(low, high, percent: bool = False) -> str:
    if low != low or high != high:  # NaN: none can be given
        return "[none]"
    return f"[{100 * low:.1f}%, {100 * high:.1f}%]" if percent else f"[{low:+.3f}, {high:+.3f}]"


def summary_lines(result) -> list[str]:
    """The summary ``acute analyze`` prints: exclusions, matchups, ranking, agreement, warnings."""
    out = []
    why = ", ".join(f"{r['reason']}: {r['judgments']}" for r in result.exclusion_summary() if r["judgments"])
    out.append(f"{len(result.kept)} judgments kept, {len(result.excluded)} excluded" + (f" ({why})" if why else ""))
    out.append(f"per-worker cap: {result.cap} ({result.config.cap_source or 'default: model pairs x questions'})")
    simulated, workers = result.simulated_workers()
    if simulated:
        out.append(f"NOTE: {simulated} of {workers} workers are SIMULATED (scripted), not people")
    for flag in result.flags:
        out.append(f"WARNING: {flag}")
    level = f"{100 * result.config.confidence:g}%"
    for q in result.questions:
        out.append(f"question {q.question_key}: win rate [{level} over workers: inverted sign-flip test], p and Holm p "
                   f"over workers; (exact, judgments independent: [{level} Clopper-Pearson] p)")
        for m in q.matchups.itertuples(index=False):
            p = "p=n/a" if m.pvalue != m.pvalue else f"p={m.pvalue:.3g} holm={m.p_holm:.3g}{m.mark}"
            why = f" -- {m.reason}" if m.reason else ""
            out.append(f"  {m.model_b} vs {m.model_a}: {100 * m.winrate_b:.1f}% ({m.wins_b}/{m.n}) "
                       f"{_interval(m.ci_low, m.ci_high, True)} {p} {m.workers} worker{'s' if m.workers != 1 else ''}"
                       + (" (FEW)" if m.few_workers else "") + f"; (exact {_interval(m.ci_low_exact, m.ci_high_exact, True)} "
                       f"p={m.pvalue_exact:.3g}){why}")
        if q.ranking is not None:
            out.append(f"  Bradley-Terry strength [{level} resampling workers] "
                       f"[{level} {q.ranking['interval_judgments'].iloc[0] or 'no'} interval, judgments independent]")
            for r in q.ranking.itertuples(index=False):
                out.append(f"  {r.rank}. {r.model} {r.strength:+.3f} {_interval(r.ci_low, r.ci_high)} "
                           f"{_interval(r.ci_low_judgments, r.ci_high_judgments)}" + (f" ({r.note})" if r.note else ""))
        else:
            out.append(f"  no ranking: {q.ranking_error}")
        if q.agreement["note"]:
            out.append(f"  agreement: {q.agreement['note']}")
        else:
            a = q.agreement
            out.append(f"  agreement: {a['items']} items judged twice or more, {100 * a['percent_agreement']:.1f}% agree, "
                       f"Krippendorff's alpha {a['krippendorff_alpha']:.3f} "
                       f"{_interval(a['alpha_ci_low'], a['alpha_ci_high'])}")
        for warning in q.warnings():
            out.append(f"  WARNING: {warning}")
    out.append(f"marks: {legend(result.config.alpha)}")
    out.append(f"methods: {methods_paragraph(result)}")
    return out


def methods_paragraph(result) -> str:
    """What a researcher pastes into a paper: tests, intervals, corrections, unit, version."""
    import parlai_acute
    from parlai_acute.stats.winrates import NORMAL_FROM

    c = result.config
    level = f"{100 * c.confidence:g}%"
    return (f"Judgments were analysed with parlai_acute {parlai_acute.__version__} (seed {c.seed}). Quality control "
            f"excluded workers who failed onboarding or never gave a reason, A/A pairs, and judgments beyond "
            f"{result.cap} per worker. The worker was the unit of analysis. For each pair of models, the win rate was "
            f"tested against 50% with a sign-flip randomisation test of each worker's total of the judgments (+1/-1) "
            f"(exact enumeration up to 10,000 sign patterns, else 10,000 seeded random patterns; its normal limit "
            f"with a t reference on G-1 degrees of freedom from {NORMAL_FROM} workers on); {level} intervals invert "
            f"the same test; p-values were Holm-adjusted across the pairs of a question and marked at alpha = "
            f"{c.alpha:g}. Pairs judged by fewer workers than the test needs to reach alpha received no mark. "
            f"Models were ranked by a Bradley-Terry model (penalty {c.bt_alpha:g} x sum of squared strengths) with "
            f"{level} percentile intervals from {c.bootstrap} bootstrap resamples of whole workers. Exact binomial "
            f"tests and Clopper-Pearson intervals that treat judgments as independent are reported as secondary. "
            f"Agreement: Krippendorff's alpha (nominal) with a bootstrap over items.")
