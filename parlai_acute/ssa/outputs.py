"""Writing an SSA analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.ssa.analysis` so the analysis never imports the report.
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.files import table_records
from parlai_acute.result import write_result
from parlai_acute.ssa.analysis import SSAResult
from parlai_acute.ssa.report import build_report


def results_json(result: SSAResult) -> dict:
    """Every statistic of the run as strict JSON (results.json adds the provenance and the summary)."""
    return {"models": table_records(result.models), "pairs": table_records(result.pairs),
            "agreement": table_records(result.agreement), "notes": result.notes}


def write_outputs(result: SSAResult, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """summary.csv (the estimands), models.csv, pairs.csv, items.csv (majority labels), agreement.csv,
    workers.csv, results.json (strict JSON), run.json and, with ``report``, report.html and its
    exports; all or none of them (:func:`parlai_acute.files.output_dir`)."""
    return write_result(result, outdir, results=results_json(result),
                        report=(lambda out: build_report(result).write(out)) if report else None)
