"""Writing a multi-reference analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.multiref.analysis` so the analysis never imports the report.
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.files import output_dir, table_records, write_csv, write_json
from parlai_acute.multiref.analysis import MultirefResult, run_record
from parlai_acute.multiref.report import build_report

__all__ = ["write_outputs"]


def write_outputs(result: MultirefResult, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """contexts.csv, modes.csv, results.json, run.json and (with ``report``) report.html; all or
    none of them (:func:`parlai_acute.files.output_dir`)."""
    with output_dir(outdir) as outdir:
        paths = {name: write_csv(outdir / name, table)
                 for name, table in (("contexts.csv", result.contexts), ("modes.csv", result.modes))}
        run = run_record(result)
        write_json(outdir / "results.json", {"modes": table_records(result.modes),
                                             "bleu_signature": result.signature, "run": run})
        write_json(outdir / "run.json", run)
        paths["results.json"], paths["run.json"] = outdir / "results.json", outdir / "run.json"
        if report:
            paths.update(build_report(result).write(outdir))
    return paths

