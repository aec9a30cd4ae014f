"""Writing a per-turn analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.per_turn.analysis` so the analysis never imports the report
(the report reads the analysis's results; outputs use both).
"""
from __future__ import annotations

from pathlib import Path

from parlai_acute.files import json_ready
from parlai_acute.per_turn.analysis import AnalysisResult, grid
from parlai_acute.per_turn.report import build_report
from parlai_acute.per_turn.turns import write_turns
from parlai_acute.result import write_result


def results_json(result: AnalysisResult) -> dict:
    """Every statistic of the run as strict JSON (results.json adds the provenance and the summary)."""
    designs = []
    for d in result.designs:
        designs.append({
            "design": d.label, "setting": d.setting, "protocol": d.protocol,
            "groups": [{"model_set": g.model_set, "models": g.models, "turns": g.turns, "dialogues": g.dialogues,
                        "workers": g.workers, "models_table": g.models_table, "pairs": g.pairs,
                        "omnibus": g.omnibus, "positions": g.positions, "position_test": g.position_test}
                       for g in d.groups],
            "comparisons": d.comparisons,
            "grid": grid(d.comparisons, result.config.confidence) if d.setting != "sm" else None})
    return json_ready({"warnings": result.warnings(), "designs": designs, "settings": result.settings_table(),
                       "sensitivity": result.sensitivity() if len(result.designs) > 1 else [],
                       "consistency": result.consistency()})


def write_outputs(result: AnalysisResult, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """Write tidy tables (CSV: summary.csv, turns.csv, pairs.csv, winrate_grid.csv, ...), results
    (strict JSON with provenance), the HTML report (with LaTeX/Markdown tables and SVG/PDF figures)
    and run.json into ``outdir``; all or none of them (:func:`parlai_acute.files.output_dir`)."""
    meta = result.meta()
    exclusions = {**meta, "turns": int(len(result.turns)),
                  "kept_turns": int((result.turns["excluded_because"] == "").sum()),
                  "excluded": result.exclusion_summary(), "flags": result.flag_summary()}
    return write_result(result, outdir, writers={"turns": write_turns}, files={"exclusions.json": exclusions},
                        results=results_json(result),
                        report=(lambda out: build_report(result).write(out)) if report else None,
                        run={"designs": [d.label for d in result.designs], "turns": int(len(result.turns)),
                             "rows": int(len(result.kept) + len(result.excluded))})
