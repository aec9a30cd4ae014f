"""Writing a ConvAI2 analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.convai2.analysis` so the analysis never imports the report.
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.convai2.analysis import ConvAI2Result, run_record
from parlai_acute.convai2.report import build_report
from parlai_acute.files import output_dir, table_records, write_csv, write_json


def write_outputs(result: ConvAI2Result, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """likert.csv, persona.csv, differences.csv, annotators.csv, results.json, run.json, report.html;
    all or none of them (:func:`parlai_acute.files.output_dir`)."""
    with output_dir(outdir) as outdir:
        paths = {}
        for name, table in (("likert.csv", result.likert), ("persona.csv", result.persona),
                            ("differences.csv", result.differences), ("annotators.csv", result.annotators())):
            paths[name] = write_csv(outdir / name, table)
        calibration = {q: {k: v for k, v in d.items() if k != "annotator_bias"}
                       for q, d in result.calibration.items()}
        write_json(outdir / "results.json", {"likert": table_records(result.likert),
                                             "persona": table_records(result.persona),
                                             "differences": table_records(result.differences),
                                             "calibration": calibration, "intervals": result.config.interval_names(),
                                             "run": run_record(result.config)})
        write_json(outdir / "run.json", run_record(result.config))
        paths["results.json"], paths["run.json"] = outdir / "results.json", outdir / "run.json"
        if report:
            paths.update(build_report(result).write(outdir))
    return paths
