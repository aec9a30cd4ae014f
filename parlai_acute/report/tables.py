"""A pandas table as escaped HTML, LaTeX (booktabs) and Markdown.

Written here rather than with ``DataFrame.to_latex``/``to_markdown`` because those need
Jinja2 >= 3 and tabulate >= 0.9, which Mephisto's pins exclude, and because every cell
may hold text a crowdworker wrote, which must come out as text in each format.
"""
from __future__ import annotations

import html
import math
import numbers

import pandas as pd


def esc(value) -> str:
    """Any value as HTML-escaped text (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def format_value(value) -> str:
    """One cell as text: floats to 4 significant digits, missing values empty."""
    if value is None:
        return ""
    if isinstance(value, numbers.Integral):  # int, bool, numpy integers
        return str(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isnan(value):
            return ""
        return f"{value:.4g}"
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    return str(value)


def _rows(table: pd.DataFrame, columns: list[str] | None):
    columns = list(table.columns) if columns is None else list(columns)
    return columns, list(table[columns].itertuples(index=False))


def table_html(table: pd.DataFrame, columns: list[str] | None = None) -> str:
    """An escaped HTML table; text columns left-aligned."""
    columns, rows = _rows(table, columns)
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for value in row:
            cls = ' class="t"' if isinstance(value, str) else ""
            cells.append(f"<td{cls}>{esc(format_value(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
          "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
          "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}


def latex_escape(text) -> str:
    """Text as LaTeX source that prints it verbatim (no command in it can run)."""
    text = "".join(_LATEX.get(ch, ch) for ch in str(text))
    return " ".join(text.split())  # newlines would end a table row's cell badly


def table_latex(table: pd.DataFrame, columns: list[str] | None = None, caption: str = "",
                label: str = "") -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    columns, rows = _rows(table, columns)
    align = "".join("l" if table[c].dtype == object else "r" for c in columns)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    if label:
        lines.append(r"\label{" + "".join(ch for ch in label if ch.isalnum() or ch in ":-_.") + "}")
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule",
              " & ".join(latex_escape(c) for c in columns) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(format_value(v)) for v in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def markdown_escape(text) -> str:
    """Text for a Markdown table cell: pipes, markup characters and newlines neutralised."""
    text = html.escape(str(text), quote=False)  # renderers pass raw HTML through
    for ch in "\\`*_[]|$":
        text = text.replace(ch, "\\" + ch)
    return " ".join(text.split())


def table_markdown(table: pd.DataFrame, columns: list[str] | None = None, caption: str = "") -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned)."""
    columns, rows = _rows(table, columns)
    rule = ["---" if table[c].dtype == object else "---:" for c in columns]
    lines = [f"**{markdown_escape(caption)}**", ""] if caption else []
    lines.append("| " + " | ".join(markdown_escape(c) for c in columns) + " |")
    lines.append("| " + " | ".join(rule) + " |")
    lines += ["| " + " | ".join(markdown_escape(format_value(v)) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
