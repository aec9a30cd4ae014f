"""The text summary of an ACUTE-Eval analysis, as ``acute analyze`` and ``acute fast`` print it."""
from __future__ import annotations


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
        out.append(f"question {q.question_key}: win rate [{level} Clopper-Pearson], p, Holm p, workers")
        for m in q.matchups.itertuples(index=False):
            out.append(f"  {m.model_b} vs {m.model_a}: {100 * m.winrate_b:.1f}% ({m.wins_b}/{m.n}) "
                       f"{_interval(m.ci_low, m.ci_high, True)} p={m.pvalue:.3g} holm={m.p_holm:.3g}{m.mark} "
                       f"{m.workers} worker{'s' if m.workers != 1 else ''}" + (" (FEW)" if m.few_workers else ""))
        if q.ranking is not None:
            out.append(f"  Bradley-Terry strength [{level} {q.ranking['interval'].iloc[0] or 'no'} interval] "
                       f"[{level} resampling workers]")
            for r in q.ranking.itertuples(index=False):
                out.append(f"  {r.rank}. {r.model} {r.strength:+.3f} {_interval(r.ci_low, r.ci_high)} "
                           f"{_interval(r.ci_low_workers, r.ci_high_workers)}" + (f" ({r.note})" if r.note else ""))
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
    return out
