"""The bundle's datasheet (after Gebru et al., "Datasheets for Datasets"): what was asked, who was
paid what, how many units, what was excluded and why, the quality checks, the configuration and
the package version -- as JSON (for programs) and Markdown (for people), from one dict."""
from __future__ import annotations

import json


def _money(value) -> str:
    return "none recorded" if value is None else f"{value:.2f}"


def markdown(sheet: dict) -> str:
    """The datasheet as a Markdown page."""
    pay, work, qc = sheet["pay"], sheet["work"], sheet["quality_checks"]
    lines = [f"# Datasheet: {sheet['task_name']} ({sheet['protocol']})", "",
             f"Made by parlai_acute {sheet['package_version']} on {sheet['created']}.", "",
             "## What was asked", ""]
    lines += [f"- {q}" for q in sheet["asked"]] or ["- (no question text was stored)"]
    lines += ["", "## Work and workers", "",
              f"- {work['workers']} workers (ids replaced by salted pseudonyms, `worker_...`), "
              f"{work['units']} units of work ({work['agents']} Mephisto agents).",
              f"- Units by Mephisto status: " + ", ".join(f"{k} {v}" for k, v in sorted(work["statuses"].items())),
              f"- {work['judgments']} judgments or answers, {work['hours']:.2f} hours of stored work time.",
              "", "## Pay", "",
              f"- Base pay per unit: {', '.join(_money(p) for p in pay['unit_pay']) or 'none recorded'}; base pay of "
              f"submitted units {_money(pay['base_pay'])}; bonuses paid (review log) {_money(pay['bonuses_paid'])}.",
              f"- Effective hourly pay per worker: median {_money(pay['hourly_median'])}, lowest "
              f"{_money(pay['hourly_min'])} ({pay['hourly_note']})."
              if pay["hourly_median"] is not None else f"- Effective hourly pay: {pay['hourly_note']}.",
              f"- Review actions taken: " + (", ".join(f"{k} {v}" for k, v in sorted(pay["actions"].items()))
                                             or "none logged"),
              "", "## Exclusions", ""]
    lines += [f"- {rule}: {n} rows" for rule, n in sheet["exclusions"].items()] or ["- none"]
    lines += ["", "## Quality checks", "",
              f"- Gold / onboarding / practice items: {qc['gold_items']} answered, {qc['gold_correct']} right.",
              f"- Written messages checked (too short, all capitals, greetings only, exact repeats): "
              f"{qc['messages']}, {qc['messages_flagged']} flagged.",
              f"- Workers whose position test fired (p < {qc['alpha']:g}): {qc['position_bias_workers']}.",
              f"- Free text flagged for e-mail addresses or phone numbers: {qc['pii_flags']} (see pii_flags.json; "
              f"not changed).", "", "## Files", ""]
    lines += [f"- `{f['file']}`: {f['rows']} rows. {f['about']}" for f in sheet["files"]]
    lines += ["", "## Configuration", "", "```json", json.dumps(sheet["configuration"], indent=2, sort_keys=True,
                                                                default=str), "```", ""]
    return "\n".join(lines)
