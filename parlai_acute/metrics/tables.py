"""Result tables as CSV (full precision), Markdown and LaTeX (rounded, intervals in brackets),
and the ``run.json`` every result directory carries (configuration, seed, signatures, version).

Every file is written atomically.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from parlai_acute.files import atomic_write, write_json


def with_intervals(table: pd.DataFrame, columns: list[str], digits: int = 3) -> pd.DataFrame:
    """A display copy: each ``c`` with ``c_low``/``c_high`` becomes ``"v [low, high]"``."""
    out = pd.DataFrame(index=table.index)
    for column in table.columns:
        if column.endswith("_low") or column.endswith("_high"):
            if column.rsplit("_", 1)[0] in columns:
                continue
        if column in columns:
            out[column] = [_cell(v, table.get(f"{column}_low", pd.Series(index=table.index)).get(i),
                                 table.get(f"{column}_high", pd.Series(index=table.index)).get(i), digits)
                           for i, v in table[column].items()]
        else:
            out[column] = [_number(v, digits) for v in table[column]]
    return out


def _number(value, digits: int) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def _cell(value, low, high, digits: int) -> str:
    text = _number(float(value), digits)
    if low is not None and high is not None and not (math.isnan(float(low)) or math.isnan(float(high))):
        text += f" [{float(low):.{digits}f}, {float(high):.{digits}f}]"
    return text


def markdown(display: pd.DataFrame) -> str:
    header = "| " + " | ".join(str(c) for c in display.columns) + " |"
    rule = "|" + "|".join("---" for _ in display.columns) + "|"
    body = ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in display.itertuples(index=False)]
    return "\n".join([header, rule] + body) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def latex(display: pd.DataFrame, caption: str = "") -> str:
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{" + "l" * len(display.columns) + "}", r"\hline",
             " & ".join(latex_escape(c) for c in display.columns) + r" \\", r"\hline"]
    lines += [" & ".join(latex_escape(v) for v in row) + r" \\" for row in display.itertuples(index=False)]
    lines += [r"\hline", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_table(table: pd.DataFrame, outdir: str | Path, stem: str, interval_columns: list[str] | None = None,
                caption: str = "", digits: int = 3, hide: list[str] | None = None) -> list[Path]:
    """``stem.csv`` (all columns, full precision), ``stem.md`` and ``stem.tex`` (without ``hide``)."""
    outdir = Path(outdir)
    paths = [outdir / f"{stem}.csv", outdir / f"{stem}.md", outdir / f"{stem}.tex"]
    with atomic_write(paths[0]) as fh:
        table.to_csv(fh, index=False)
    display = with_intervals(table.drop(columns=list(hide or [])), interval_columns or [], digits)
    with atomic_write(paths[1]) as fh:
        fh.write((f"{caption}\n\n" if caption else "") + markdown(display))
    with atomic_write(paths[2]) as fh:
        fh.write(latex(display, caption))
    return paths


def write_run(outdir: str | Path, command: str, config: dict, signatures: dict | None = None, **extra) -> Path:
    import parlai_acute

    path = Path(outdir) / "run.json"
    write_json(path, {"command": command, "version": parlai_acute.__version__, "config": config,
                      "seed": config.get("seed"), "signatures": signatures or {}, **extra})
    return path
