"""Result files of the metrics commands: full-precision CSV, display tables with intervals
for the report layer (:mod:`parlai_acute.report` writes them as HTML, LaTeX and Markdown),
and the ``run.json`` every result directory carries (configuration, seed, signatures,
version). Every file is written atomically.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from parlai_acute.files import atomic_write, write_json


def with_intervals(table: pd.DataFrame, columns: list[str], digits: int = 3) -> pd.DataFrame:
    """A display copy: each ``c`` with ``c_low``/``c_high`` becomes the text ``"v [low, high]"``."""
    out = pd.DataFrame(index=table.index)
    for column in table.columns:
        base = column.rsplit("_", 1)[0]
        if column.endswith(("_low", "_high")) and base in columns:
            continue
        if column in columns:
            lows = table[f"{column}_low"] if f"{column}_low" in table else pd.Series(math.nan, index=table.index)
            highs = table[f"{column}_high"] if f"{column}_high" in table else pd.Series(math.nan, index=table.index)
            out[column] = [_cell(v, lo, hi, digits) for v, lo, hi in zip(table[column], lows, highs)]
        else:
            out[column] = table[column]
    return out


def _cell(value, low, high, digits: int) -> str:
    value = float(value)
    if math.isnan(value):
        return ""
    text = f"{value:.{digits}f}"
    if not (math.isnan(float(low)) or math.isnan(float(high))):
        text += f" [{float(low):.{digits}f}, {float(high):.{digits}f}]"
    return text


def write_csv(table: pd.DataFrame, path: str | Path) -> Path:
    path = Path(path)
    with atomic_write(path) as fh:
        table.to_csv(fh, index=False)
    return path


def write_run(outdir: str | Path, command: str, config: dict, signatures: dict | None = None, **extra) -> Path:
    import parlai_acute

    path = Path(outdir) / "run.json"
    write_json(path, {"command": command, "version": parlai_acute.__version__, "config": config,
                      "seed": config.get("seed"), "signatures": signatures or {}, **extra})
    return path
