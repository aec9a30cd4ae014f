"""Writing a ConvAI2 analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.convai2.analysis` so the analysis never imports the report.
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.convai2.analysis import ConvAI2Result
from parlai_acute.convai2.report import build_report
from parlai_acute.files import table_records
from parlai_acute.result import write_result


def write_outputs(result: ConvAI2Result, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """summary.csv (the estimands), models.csv (Likert means per question and model), persona.csv,
    pairs.csv (differences between models), workers.csv (annotator biases), results.json, run.json,
    report.html; all or none of them (:func:`parlai_acute.files.output_dir`)."""
    calibration = {q: {k: v for k, v in d.items() if k != "annotator_bias"} for q, d in result.calibration.items()}
    results = {"likert": table_records(result.likert), "persona": table_records(result.persona),
               "differences": table_records(result.differences), "calibration": calibration,
               "intervals": result.config.interval_names()}
    return write_result(result, outdir, results=results,
                        report=(lambda out: build_report(result).write(out)) if report else None)
