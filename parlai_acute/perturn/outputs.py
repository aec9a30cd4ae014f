"""Writing a per-turn analysis: tidy CSVs, results.json, run.json and the report.

Kept apart from :mod:`parlai_acute.perturn.analysis` so the analysis never imports the report
(the report reads the analysis's results; outputs use both).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from parlai_acute.files import check_outdir, json_ready, write_csv, write_json
from parlai_acute.perturn.analysis import AnalysisResult, grid
from parlai_acute.perturn.report import build_report
from parlai_acute.perturn.turns import write_turns


def _group_frame(result: AnalysisResult, attribute: str) -> pd.DataFrame:
    parts = [getattr(g, attribute).assign(design=d.label, model_set=g.model_set)
             for d in result.designs for g in d.groups]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    front = ["design", "model_set"]
    return table[front + [c for c in table.columns if c not in front]]


def results_json(result: AnalysisResult) -> dict:
    """Every statistic of the run, with provenance, as strict JSON."""
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
    return json_ready({**result.meta(), "designs": designs, "settings": result.settings_table(),
                       "sensitivity": result.sensitivity() if len(result.designs) > 1 else [],
                       "consistency": result.consistency()})


def write_outputs(result: AnalysisResult, outdir: str | Path, report: bool = True) -> dict[str, Path]:
    """Write tidy tables (CSV), results (strict JSON with provenance), the HTML report (with
    LaTeX/Markdown tables and SVG/PDF figures) and run.json into ``outdir``."""
    outdir = check_outdir(outdir)
    meta = result.meta()
    names = ["turns.csv", "excluded.csv", "flags.csv", "workers.csv", "exclusions.json", "models.csv", "pairs.csv",
             "grid.csv", "positions.csv", "results.json", "run.json"]
    several = len(result.designs) > 1
    if several:
        names += ["settings.csv", "sensitivity.csv", "consistency.csv"]
    paths = {name: outdir / name for name in names}
    write_turns(paths["turns.csv"], result.kept)
    write_csv(paths["excluded.csv"], result.excluded)
    write_csv(paths["flags.csv"], result.flags())
    write_csv(paths["workers.csv"], result.workers())
    write_json(paths["exclusions.json"], {
        **meta, "turns": int(len(result.turns)), "kept_turns": int((result.turns["excluded_because"] == "").sum()),
        "excluded": result.exclusion_summary(), "flags": result.flag_summary()})
    write_csv(paths["models.csv"], _group_frame(result, "models_table"))
    comparisons = [d.comparisons.assign(design=d.label) for d in result.designs]
    write_csv(paths["pairs.csv"], pd.concat(comparisons, ignore_index=True) if comparisons else pd.DataFrame())
    grids = [grid(d.comparisons, result.config.confidence).assign(design=d.label) for d in result.designs
             if d.setting != "sm" and len(d.comparisons)]
    write_csv(paths["grid.csv"], pd.concat(grids, ignore_index=True) if grids else pd.DataFrame())
    write_csv(paths["positions.csv"], _group_frame(result, "positions"))
    if several:
        write_csv(paths["settings.csv"], result.settings_table())
        write_csv(paths["sensitivity.csv"], result.sensitivity())
        write_csv(paths["consistency.csv"], result.consistency())
    write_json(paths["results.json"], results_json(result))
    if report:
        for name, path in build_report(result).write(outdir).items():
            paths[name] = path
    write_json(paths["run.json"], {**meta, "outputs": sorted(paths), "designs": [d.label for d in result.designs],
                                   "turns": int(len(result.turns)), "rows": int(len(result.kept) + len(result.excluded))})
    return paths
