"""Writing a multi-reference analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.multiref.analysis` so the analysis never imports the report.
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.files import table_records
from parlai_acute.multiref.analysis import MultirefResult
from parlai_acute.multiref.report import build_report
from parlai_acute.result import write_result

__all__ = ["write_outputs"]


def write_outputs(result: MultirefResult, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """summary.csv (the estimands), contexts.csv, modes.csv, results.json, run.json and (with
    ``report``) report.html; all or none of them (:func:`parlai_acute.files.output_dir`)."""
    return write_result(result, outdir, results={"modes": table_records(result.modes),
                                                 "bleu_signature": result.signature},
                        report=(lambda out: build_report(result).write(out)) if report else None)
