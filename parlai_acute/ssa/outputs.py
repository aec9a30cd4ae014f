"""Writing an SSA analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.ssa.analysis` so the analysis never imports the report.
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.files import output_dir, table_records, write_csv, write_json
from parlai_acute.ssa.analysis import SSAResult, run_record
from parlai_acute.ssa.report import build_report


def results_json(result: SSAResult) -> dict:
    """Every statistic of the run, with provenance, as strict JSON."""
    return {"summary": result.summary(), "models": table_records(result.models),
            "pairs": table_records(result.pairs), "agreement": table_records(result.agreement),
            "notes": result.notes, "run": run_record(result.config)}


def write_outputs(result: SSAResult, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """models.csv, pairs.csv, items.csv (majority labels), agreement.csv, workers.csv,
    results.json (strict JSON), run.json and, with ``report``, report.html and its exports;
    all or none of them (:func:`parlai_acute.files.output_dir`)."""
    with output_dir(outdir) as outdir:
        paths = {}
        for name, table in (("models.csv", result.models), ("pairs.csv", result.pairs),
                            ("items.csv", result.items), ("agreement.csv", result.agreement),
                            ("workers.csv", result.workers)):
            paths[name] = write_csv(outdir / name, table)
        write_json(outdir / "results.json", results_json(result))
        write_json(outdir / "run.json", run_record(result.config))
        paths["results.json"], paths["run.json"] = outdir / "results.json", outdir / "run.json"
        if report:
            paths.update(build_report(result).write(outdir))
    return paths
