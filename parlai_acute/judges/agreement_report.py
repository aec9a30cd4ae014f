"""The HTML report of ``parlai-acute judge agreement``, built with the shared report layer."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from parlai_acute.report import Report, interval_plot
from parlai_acute.stats import rater_agreement


def _block_rows(summary: dict) -> pd.DataFrame:
    tops = [("both answers: " if summary["protocol"] == "ssa" else "", summary)] + [(f"{q['question']}: ", q) for q in summary.get("questions", []) if "question" in q]
    rows = []
    for prefix, top in tops:  # SSA: both answers together, then sensible and specific apart
        rows += _rows(prefix, top)
    return pd.DataFrame(rows)


def _rows(prefix: str, summary: dict) -> list:
    ceiling = summary["on_items_with_two_or_more_humans"]
    rows = []
    for label, block in ((prefix + "judge vs human, all items", summary["judge_vs_human"]),
                         (prefix + "judge vs human, items with 2+ people", ceiling["judge_vs_human"]),
                         (prefix + "human vs human, items with 2+ people (ceiling)", ceiling["human_vs_human"])):
        rows.append({"comparison": label, "items": block["items"], "pairs": block["pairs"],
                     "percent_agreement": block["percent_agreement"], "percent_low": block["percent_ci"][0],
                     "percent_high": block["percent_ci"][1], "kappa": block["kappa"],
                     "kappa_low": block["kappa_ci"][0], "kappa_high": block["kappa_ci"][1],
                     "note": rater_agreement.notes(block)})
    return rows


def _tau(r: dict) -> str:
    tau = r["kendall_tau"]
    return (f"{'undefined' if math.isnan(tau) else f'{tau:+.2f}'} over {r['systems']} systems"
            + (f" ({r['note']})" if r.get("note") else ""))


def render(summary: dict, scores: pd.DataFrame, outdir: str | Path, judge_summary: dict | None = None) -> dict:
    """Write ``report.html`` (and its table/figure exports) into ``outdir``; returns the paths."""
    judges = ", ".join(summary["judge"])
    report = Report(f"Model judge vs people ({summary['protocol']})",
                    intro=f"Judge: {judges}. People: {summary['human_workers']} workers. Agreement is measured on the "
                          f"same items; the human-human agreement on those items is the ceiling to compare with.")
    if judge_summary:
        onboarding = judge_summary.get("onboarding")
        if isinstance(onboarding, dict) and onboarding.get("gold_items") and not onboarding.get("passed"):
            if "orders" in onboarding:
                record = (f"{onboarding['orders_correct']}/{onboarding['orders']} gold orders correct "
                          f"({onboarding['items_correct_every_order']}/{onboarding['gold_items']} gold pairs right "
                          f"in every order)")
            else:  # SSA: one reply per gold item, no orders
                record = f"{onboarding['correct']}/{onboarding['gold_items']} gold items right"
            report.banner(f"This judge FAILED onboarding: {record}. Do not trust its judgments.")
    blocks = _block_rows(summary)
    section = report.section("Agreement on the same items")
    if summary.get("judge_ties_left_out"):
        section.text(f"{summary['judge_ties_left_out']} item(s) the judge answered both ways (it followed the "
                     f"position in its orders, and its run kept such items as ties) are left out of the agreement: "
                     f"a tie is no label.")
    interval = summary["judge_vs_human"]["interval"]
    section.note(f"Percent agreement and Cohen's kappa over pairs of labels of one item; intervals: {interval}. "
                 "Human-vs-human pairs count both orientations (kappa on them is Scott's pi).")
    section.table(blocks, "agreement", caption="Agreement")
    plotted = blocks[blocks["pairs"] > 0]
    if len(plotted) and plotted["kappa"].notna().any():
        section.figure(interval_plot(plotted.fillna({"kappa": float("nan")}), "comparison", "kappa", "kappa_low",
                                     "kappa_high", "Cohen's kappa", interval, reference=0.0), "kappa")
    systems = report.section("Systems")
    if summary["protocol"] == "acute":
        systems.note("Each matchup's win rate of model_b, by people and by the judge; intervals: exact "
                     "Clopper-Pearson per win rate (one judge's judgments are not independent: read them as a screen).")
        for q in summary["questions"]:
            r = q["ranking"]
            systems.text(f"Question {q['question_key']}: " + (r["error"] if "error" in r else
                         f"Kendall's tau of the Bradley-Terry rankings {_tau(r)}"))
        if len(scores):
            long = pd.concat([
                pd.DataFrame({"row": scores["question_key"] + " " + scores["model_b"] + " vs " + scores["model_a"] + " (" + who + ")",
                              "rate": scores[f"{who}_winrate_b"], "low": scores[f"{who}_ci_low"],
                              "high": scores[f"{who}_ci_high"]}) for who in ("human", "judge")]).sort_values("row", kind="stable")
            systems.figure(interval_plot(long, "row", "rate", "low", "high", "win rate of model_b",
                                         "95% Clopper-Pearson", reference=0.5), "winrates")
    else:
        systems.text(f"Kendall's tau of the {summary['ranking'].get('scores', 'system')} rankings: "
                     f"{_tau(summary['ranking'])}.")
    systems.table(scores, "scores", caption="People and judge side by side")
    if judge_summary:
        report.configuration("Judge run", {k: judge_summary.get(k) for k in (
            "judge", "judge_config", "templates", "settings", "seed", "items", "position_bias", "onboarding", "costs")})
    report.configuration("Agreement", {k: summary.get(k) for k in ("human_file", "judge_file", "config", "seed",
                                                                   "parlai_acute_version")})
    report.methods(methods(summary, interval))
    return report.write(outdir)


def methods(summary: dict, interval: str) -> str:
    """The report's closing Methods paragraph: what was compared, the agreement measures and intervals."""
    parts = [f"We compared the labels of a model judge ({', '.join(summary['judge'])}) with those of "
             f"{summary['human_workers']} people on the same {summary['protocol']} items using parlai_acute "
             f"{summary.get('parlai_acute_version', '')}.".replace(" .", "."),
             f"Agreement is percent agreement and Cohen's kappa over pairs of labels of one item (judge vs person, "
             f"and person vs person as the ceiling, where pairs count both orientations, so kappa there is Scott's "
             f"pi), with {interval} intervals.",
             "Systems are compared by Kendall's tau between the people's and the judge's rankings."]
    if summary["protocol"] == "acute":
        parts.append("Win rates of each matchup carry exact Clopper-Pearson intervals, which treat the judgments as "
                     "independent: one judge's verdicts are not a sample of people, so read them as a screen.")
    parts.append("No significance marks are claimed.")
    return " ".join(parts)
