"""The page of ``parlai-acute status``: where a running evaluation stands, built with the one report layer.

It takes what :func:`parlai_acute.monitoring.status.status` returns (a dict with its ``rows``), and what the
command added (``top_k``, ``stop_decisions``, ``source``), without recomputing anything: the page
shows the same numbers as the terminal and ``results.json``. Protocol-free: every protocol's rows
have the same columns.
"""
from __future__ import annotations

import pandas as pd

from parlai_acute.report import Report

#: The columns of a status row the table shows, in this order (others stay in status.csv).
ROW_COLUMNS = ["group", "comparison", "measure", "estimate", "lower", "upper", "decided", "more", "clusters", "unit",
               "judgments", "decided_at_judgments", "note"]


def rows_table(result: dict) -> pd.DataFrame:
    """The status rows as one table (the same as status.csv); a row without an estimate says why."""
    rows = [{k: v for k, v in r.items() if k != "one_facet"}
            | {f"one_facet_{k}": v for k, v in (r.get("one_facet") or {}).items() if k != "procedure"}
            for r in result.get("rows", [])]  # two facets: the sequence over workers alone, flat beside the row
    table = pd.DataFrame(rows)
    if table.empty:
        return pd.DataFrame(columns=ROW_COLUMNS)
    if "note" not in table:
        table["note"] = ""
    table["note"] = table["note"].fillna("")
    if "estimate" in table:
        missing = table["estimate"].isna() & (table["note"] == "")
        table.loc[missing, "note"] = "no judgments of this comparison yet: no estimate or interval"
    return table


def build_report(result: dict, source: str) -> Report:
    """The status page: the comparisons, the top-k verdict and the stop rule's decisions when the
    command found them, and the run's configuration."""
    rows = rows_table(result)
    per = result.get("per_comparison_alpha")
    report = Report(f"Where the evaluation stands ({result.get('protocol', '')})",
                    intro=(f"{source}: {result.get('judgments', 0)} rows, {result.get('comparisons', 0)} "
                           f"comparison(s). "
                           f"Each interval is a confidence sequence, valid however often one looks; a comparison is "
                           f"decided when its interval excludes no difference. Error rate alpha "
                           f"{result.get('alpha', 0):g} over all comparisons together"
                           + (f" ({per:.3g} each)." if per is not None else ".")))
    for decision in result.get("stop_lines", []):
        report.banner(decision, kind="info")
    section = report.section("Comparisons")
    if result.get("units"):
        section.note(f"Unit: {result['units']}.")
    section.note("estimate, lower, upper: the comparison's measure and its confidence sequence now. decided: above "
                 "(the first is ahead), below (the second is ahead), undecided, or a rate with no null. more: "
                 "judgments still to collect before the interval would exclude no difference if the estimate "
                 "held (a projection, not a promise); empty when decided or when no decision is in sight.")
    section.table(rows, "status", caption="Every comparison at this look",
                  columns=[c for c in ROW_COLUMNS if c in rows.columns])
    top = result.get("top_k")
    if top:
        part = report.section(f"Top {top['k']}")
        part.note(f"Decided when each of the top {top['k']} is decided ahead of every model outside by its own "
                  f"confidence sequence, at alpha {top['alpha']:g} ({top['method']})."
                  + (f" {top['facets'][0].upper()}{top['facets'][1:]}." if top.get("facets") else ""))
        part.table(pd.DataFrame([{"question": q["question"], "top": ", ".join(q["top"]), "decided": q["decided"],
                                  "pairs_open": sum(u["decided"] == "undecided" for u in q["undecided"]),
                                  "judgments": q["judgments"]} for q in top["questions"]]),
                   "top_k", caption=f"The top {top['k']} per question (current estimate when undecided)")
        pairs = pd.DataFrame([{"question": q["question"], **{k: v for k, v in u.items() if k not in ("models", "one_facet")},
                               **{f"one_facet_{k}": v for k, v in (u.get("one_facet") or {}).items()
                                  if k in ("lower", "upper", "decided")}}
                              for q in top["questions"] for u in q["undecided"]])
        if "estimate" in pairs:
            notes = pairs["note"] if "note" in pairs else pd.Series("", index=pairs.index)
            pairs["note"] = ["no judgments of this pair yet" if e is None or e != e else n or ""
                             for e, n in zip(pairs["estimate"], notes.fillna(""))]
        if not pairs.empty:
            part.table(pairs, "top_k_pairs", caption="Pairs across the boundary")
    report.configuration("Run", result.get("run", {}))
    return report
