"""Result files of the metrics commands: full-precision CSV (the report layer,
:mod:`parlai_acute.report`, shows each ``X``/``X_low``/``X_high`` as "X [low, high]"),
and the ``run.json`` every result directory carries (configuration, seed, signatures,
version). Every file is written atomically.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from parlai_acute.files import atomic_write, write_json


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
