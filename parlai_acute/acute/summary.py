"""The text summary of an ACUTE-Eval analysis, as ``acute analyze`` and ``acute fast`` print it."""
from __future__ import annotations

from parlai_acute.stats.inference import legend, min_clusters
from parlai_acute.stats.winrates import design_note


def _bounds(low, high, percent: bool = False) -> str:
    """An interval written apart from its estimate by the one rule (report.tables: bounds
    rounded outward at the estimate's places), or "(no interval)"."""
    from parlai_acute.report.tables import bounds_text  # the report layer loads matplotlib: only once printing

    shown = bounds_text(low, high, 1, scale=100, unit="%") if percent else bounds_text(low, high, signed=True)
    return shown or "(no interval)"


def summary_lines(result) -> list[str]:
    """The summary ``acute analyze`` prints: exclusions, matchups, ranking, agreement, warnings."""
    from parlai_acute.report.tables import interval_text, number_text

    out = []
    why = ", ".join(f"{r['reason']}: {r['judgments']}" for r in result.exclusion_summary() if r["judgments"])
    out.append(f"{len(result.kept)} judgments kept, {len(result.excluded)} excluded" + (f" ({why})" if why else ""))
    out.append(f"per-worker cap: {result.cap} ({result.config.cap_source or 'default: model pairs x questions'})")
    rules = result.exclusion_summary()
    if any(r["setting"].startswith("off") for r in rules):  # a rule switched off: every rule and what it removed
        out.append("exclusion rules: " + ", ".join(
            f"{r['reason']} {r['judgments']}" + (f" ({r['setting']})" if r["setting"].startswith("off") else "")
            for r in rules))
    simulated, workers = result.simulated_workers()
    if simulated:
        out.append(f"NOTE: {simulated} of {workers} workers are SIMULATED (scripted), not people")
    for flag in result.flags:
        out.append(f"WARNING: {flag}")
    level = f"{100 * result.config.confidence:g}%"
    for q in result.questions:
        out.append(f"question {q.question_key}: win rate [{level} over workers: inverted sign-flip test], p and Holm p "
                   f"over workers; (exact, judgments independent: [{level} Clopper-Pearson] p)")
        note = design_note(q.matchups)
        if note:
            out.append(f"  design: {note}")
        if q.outcomes is not None:
            out.append("  a tie (or 'both bad') counts half a win for each model in the win rate and its tests")
        for m in q.matchups.itertuples(index=False):
            p = "p=n/a" if m.pvalue != m.pvalue else f"p={m.pvalue:.3g} holm={m.p_holm:.3g}{m.mark}"
            why = f" -- {m.reason}" if m.reason else ""
            won = f"{m.wins_b} wins + {m.ties} ties of {m.n}" if q.outcomes is not None else f"{m.wins_b}/{m.n}"
            out.append(f"  {m.model_b} vs {m.model_a}: {number_text(m.winrate_b, 1, scale=100, unit='%')} "
                       f"({won}) {_bounds(m.ci_low, m.ci_high, True)} {p} "
                       f"{m.workers} worker{'s' if m.workers != 1 else ''}"
                       + (" (FEW)" if m.few_workers else "") + f"; (exact {_bounds(m.ci_low_exact, m.ci_high_exact, True)} "
                       f"p={m.pvalue_exact:.3g}){why}")
        if q.ranking is not None:
            named = q.ranking["interval"].iloc[0] if "interval" in q.ranking else ""
            over = ("workers and conversations (multiway sandwich)" if "conversations" in str(named)
                    else "resampling workers")
            out.append(f"  Bradley-Terry strength [{level} {over}] "
                       f"[{level} {q.ranking['interval_judgments'].iloc[0] or 'no'} interval, judgments independent]")
            for r in q.ranking.itertuples(index=False):
                out.append(f"  {r.rank}. {r.model} {interval_text(r.strength, r.ci_low, r.ci_high, signed=True)} "
                           f"{_bounds(r.ci_low_judgments, r.ci_high_judgments)}" + (f" ({r.note})" if r.note else ""))
        else:
            out.append(f"  no ranking: {q.ranking_error}")
        out.extend(tie_lines(q, level))
        out.extend(style_lines(result, q, level))
        if q.agreement["note"]:
            out.append(f"  agreement: {q.agreement['note']}")
        else:
            a = q.agreement
            out.append(f"  agreement: {a['items']} items judged twice or more, {100 * a['percent_agreement']:.1f}% agree, "
                       f"Krippendorff's alpha "
                       f"{interval_text(a['krippendorff_alpha'], a['alpha_ci_low'], a['alpha_ci_high'])}")
        for warning in q.warnings():
            out.append(f"  WARNING: {warning}")
    out.append(f"marks: {legend(result.config.alpha)}")
    out.append(f"methods: {methods_paragraph(result)}")
    return out


def tie_lines(q, level: str) -> list[str]:
    """A question's win, tie and loss rates and Davidson's tie-aware ranking (nothing without ties)."""
    from parlai_acute.report.tables import interval_text  # the report layer loads matplotlib: only once printing

    if q.outcomes is None:
        return []

    def _rate(value, low, high) -> str:
        return interval_text(value, low, high, 1, scale=100, unit="%")

    out = [f"  outcomes: B won / tie / A won (both bad) [{level} interval, method per rate in outcomes.csv]"]
    for o in q.outcomes.to_dict("records"):
        rates = " / ".join(_rate(o[k], o[f"{k}_low"], o[f"{k}_high"]) for k in ("won_b", "tie_rate", "won_a"))
        out.append(f"  {o['model_b']} vs {o['model_a']}: {rates} (both bad "
                   f"{_rate(o['both_bad_rate'], o['both_bad_rate_low'], o['both_bad_rate_high'])}) of {o['n']}")
    if q.tie_ranking is None:
        out.append(f"  no tie-aware ranking: {q.tie_ranking_error}")
        return out
    t = q.tie_parameter
    out.append(f"  Davidson (tie-aware Bradley-Terry) strength [{level} {t['interval'] or 'no interval'}]; tie "
               f"parameter nu {interval_text(t['nu'], t['nu_low'], t['nu_high'])}, two equal models tie "
               f"{_rate(t['tie_if_equal'], t['tie_if_equal_low'], t['tie_if_equal_high'])}"
               + (f" ({t['note']})" if t["note"] else ""))
    for r in q.tie_ranking.itertuples(index=False):
        out.append(f"  {r.rank}. {r.model} {interval_text(r.strength, r.ci_low, r.ci_high, signed=True)}"
                   + (f" ({r.note})" if r.note and r.note != t["note"] else ""))
    return out


def style_lines(result, q, level: str) -> list[str]:
    """A question's raw and style-controlled strengths and the style coefficients (style control only)."""
    from parlai_acute.report.tables import interval_text

    if not result.config.style_control:
        return []
    if q.style is None:
        return [f"  no style-controlled ranking: {q.style_error}"]
    s = q.style
    out = [f"  style control: {s.model}; {s.ties} [{level} {s.interval or 'no interval'}]"
           + (f" ({s.note})" if s.note else "")]
    out.append("  raw -> controlled strength (rank raw -> controlled)")
    for r in s.ranking.itertuples(index=False):
        out.append(f"  {r.model} {interval_text(r.raw, r.raw_low, r.raw_high, signed=True)} -> "
                   f"{interval_text(r.controlled, r.controlled_low, r.controlled_high, signed=True)} "
                   f"({r.rank_raw} -> {r.rank_controlled})")
    for c in s.coefficients.itertuples(index=False):
        out.append(f"  style coefficient {c.feature} {interval_text(c.coefficient, c.coefficient_low, c.coefficient_high, signed=True)}"
                   f" log-odds per sd of the normalised difference")
    for name, why in s.dropped.items():
        out.append(f"  style feature {name} not used: {why}")
    return out


def methods_paragraph(result) -> str:
    """What a researcher pastes into a paper (the report layer's paragraph, ACUTE's words)."""
    from parlai_acute.report.methods import methods_paragraph as paragraph
    from parlai_acute.stats.bradley_terry import SANDWICH_FROM
    from parlai_acute.stats.inference import NORMAL_FROM

    c = result.config
    level = f"{100 * c.confidence:g}%"
    ties = any(q.outcomes is not None for q in result.questions)
    return paragraph(
        data=(f"{len(result.kept)} pairwise ACUTE-Eval judgments by {result.kept['worker'].nunique()} workers "
              f"(quality control excluded {len(result.excluded)}: failed onboarding, no reasons, A/A pairs, "
              + ("no per-worker cap)" if result.cap == "none" else f"more than {result.cap} per worker)")),
        unit="worker",
        comparison="each pair of models' win rate against 50% (each judgment +1 or -1" +
                   ("; a tie 0, half a win for each model)" if ties else ")"), alpha=c.alpha,
        confidence=c.confidence, permutations=10_000, seed=c.seed, family="the pairs of models of a question",
        extra=(_crossed_sentence(result) + f"From {NORMAL_FROM} workers per pair the sign-flip distribution was taken in its normal limit "
               f"(t on G-1 degrees of freedom). Models were ranked by a Bradley-Terry model (penalty {c.bt_alpha:g} "
               f"x the sum of squared strengths) with {level} intervals from {c.bootstrap} bootstrap resamples of "
               f"whole workers (from {SANDWICH_FROM} workers a cluster-robust sandwich with a t on G-1 degrees of "
               f"freedom); agreement is Krippendorff's alpha (nominal) with a bootstrap over items" +
               ("; ties were offered, so the ordinary ranking counts a tie as half a win and Davidson's (1970) "
                "tie-aware Bradley-Terry model, with its tie parameter, is fitted beside it with the same "
                "worker-level intervals; win, tie and loss rates have percentile bootstrap intervals over workers"
                if ties else "") +
               ("; to control for style, the same Bradley-Terry model was fitted with covariates for the "
                "standardised normalised differences (left - right) / (left + right + 1) of the replies' token "
                "counts and markdown headers, list items and bold spans (Chatbot Arena's style control; a tie "
                "half a win), raw and controlled strengths reported side by side with the same worker-level "
                "intervals" if c.style_control else "")),
        secondary=("Exact binomial tests and Clopper-Pearson intervals, which treat judgments as independent, are "
                   "reported as secondary columns"))


def _crossed_sentence(result) -> str:
    """The methods sentence for pairs whose conversations were reused ('' when none was)."""
    crossed = sum(int(q.matchups["design"].str.startswith("workers x conversations").sum())
                  for q in result.questions if "design" in q.matchups)
    if not crossed:
        return ""
    return (f"In {crossed} pair(s) conversations were reused across judgments, so workers and conversations were "
            f"both treated as sampled: the test and interval used the two-way cluster-robust variance over workers "
            f"and each model's conversations (Cameron, Gelbach and Miller 2011) with the CR3 small-sample correction "
            f"and a t on min(workers, conversations) - 1 degrees of freedom, and pairs with fewer than "
            f"{min_clusters(result.config.alpha)} conversations per model carry no mark; the sign-flip test over "
            f"workers alone (a statement about these conversations) is reported beside it; the Bradley-Terry "
            f"intervals of such a question used the multiway cluster-robust sandwich over workers and conversations "
            f"(t on min(workers, conversations per model) - 1 degrees of freedom). ")
