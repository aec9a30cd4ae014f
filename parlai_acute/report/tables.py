"""A pandas table as escaped HTML, LaTeX (booktabs) and Markdown, shown by one rule.

Written here rather than with ``DataFrame.to_latex``/``to_markdown`` because those need
Jinja2 >= 3 and tabulate >= 0.9, which Mephisto's pins exclude, and because every cell
may hold text a crowdworker wrote, which must come out as text in each format.

Every format shows the same :func:`display_table`, the one formatting rule of every
report (the CSV files keep the raw columns and full precision):

- headers in words (``boot_p_holm`` -> "bootstrap p (Holm)"), see :func:`header`;
- an interval's ``X_low``/``X_high`` pair as one column "[low, high]" (folded into ``X``
  itself, "estimate [low, high]", when the table has ``X``), by :func:`interval_text`, the
  one way every surface (reports, terminal lines) writes an interval: its bounds rounded
  outward, so a shown estimate is never outside its shown interval, and "no interval" in
  words where there is none (NaN, zero width), never "nan" or "[x, x]";
- p-values to three decimals, "< 0.001" below that (:func:`format_p`); other numbers
  rounded per column by size (:func:`column_format`); whole numbers as integers; missing
  values empty; booleans "yes"/"no".

On the page a table too wide for the window is split into parts by columns, each repeating
its leading text columns (the model, the worker), see :func:`column_parts`.
"""
from __future__ import annotations

import html
import math
import numbers
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, localcontext

import pandas as pd

__all__ = ["esc", "header", "format_p", "p_text", "format_value", "column_decimals", "column_format", "interval_text",
           "number_text", "bounds_text", "has_interval", "display_table", "column_parts", "table_html", "table_latex",
           "table_markdown", "latex_escape", "markdown_escape"]


def esc(value) -> str:
    """Any value as HTML-escaped text (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


_WORDS = {"pvalue": "p", "ci": "CI", "sd": "SD", "ssa": "SSA", "boot": "bootstrap", "a": "A", "b": "B",
          "bt": "Bradley-Terry", "winrate": "win rate", "diff": "difference", "num": "number of", "id": "ID",
          "n": "n", "kl": "KL", "llm": "LLM", "utt": "utterance", "pct": "%", "freq1k": "rare words",
          "ppl": "perplexity", "vs": "vs", "t": "t", "seconds": "(s)"}


_NUMBERED = {"bleu": "BLEU-{}", "unique": "unique {}-grams", "distinct": "distinct-{}", "rouge": "ROUGE-{}"}


def _numbered(token: str) -> str:
    """An n-gram measure's token in words ("bleu4" -> "BLEU-4", "unique1" -> "unique 1-grams")."""
    match = re.fullmatch(r"([A-Za-z]+)(\d)", token)
    pattern = match and _NUMBERED.get(match[1].lower())
    return pattern.format(match[2]) if pattern else token


def header(column) -> str:
    """A column name in words: a name already written with spaces is kept; a snake_case name
    has its words spelled out and any Holm adjustment said last ("p_holm_exact" -> "p exact (Holm)")."""
    name = str(column)
    if " " in name:
        return name
    tokens = [t for t in re.split(r"_+", name) if t]
    if not tokens:
        return name
    holm = "holm" in tokens
    words = [_WORDS.get(t.lower()) or _numbered(t) for t in tokens if t.lower() != "holm"]
    return " ".join(words) + (" (Holm)" if holm else "")


_P = re.compile(r"(^|[\s_(])(p|pvalue|p-value)($|[\s_)])|pvalue", re.I)
_SAMPLING_P = re.compile(r"(top|min|typical)[_ ]p$", re.I)  # decoding settings, not p-values


def is_p_column(column) -> bool:
    """Whether a column holds p-values, from its name (``pvalue``, ``p_holm``, "Holm p (exact)")."""
    return bool(_P.search(str(column))) and not _SAMPLING_P.search(str(column))


def format_p(value) -> str:
    """A p-value as a researcher writes it: three decimals, "< 0.001" below, empty when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or pd.isna(value):
        return ""
    value = float(value)
    return "< 0.001" if value < 0.0005 else f"{value:.3f}"


def p_text(value) -> str:
    """A p-value in a sentence: "p = 0.008", "p < 0.001", or "no p-value" when missing."""
    shown = format_p(value)
    return "no p-value" if not shown else f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def _number(value, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return "0" if decimals == 0 and text == "-0" else text


def column_decimals(values) -> int:
    """The decimals one numeric column is written with: none for whole numbers, else by the
    column's largest magnitude (3 below 10, 2 below 100, 1 below 1000, none above), so a
    column reads with one precision throughout."""
    numbers_ = [float(v) for v in values if isinstance(v, numbers.Real) and not isinstance(v, bool)
                and not math.isnan(float(v)) and math.isfinite(float(v))]
    if numbers_ and all(v.is_integer() for v in numbers_):
        return 0
    top = max((abs(v) for v in numbers_), default=0.0)
    return 3 if top < 10 else 2 if top < 100 else 1 if top < 1000 else 0


def column_format(values) -> "callable":
    """How one numeric column is written (:func:`column_decimals`)."""
    decimals = column_decimals(values)
    return lambda v: _number(float(v), decimals)


def _finite(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))


def has_interval(low, high) -> bool:
    """Whether ``[low, high]`` is an interval that can be shown: both bounds numbers and
    ``low < high`` (NaN bounds, a point or reversed bounds are no interval)."""
    return _finite(low) and _finite(high) and float(low) < float(high)


def _rounded(value, decimals: int, rounding, scale: float, signed: bool) -> str:
    """``value * scale`` to ``decimals`` places by ``rounding`` (12 significant digits first,
    so that 0.29 * 100 is 29, not 28.999...; the same for every bound and estimate, so the
    order of the numbers is kept); never "-0"."""
    exact = Decimal(f"{float(value) * scale:.12g}")
    with localcontext() as context:
        context.prec = 400  # room for any float's digits (a perplexity of 1e30) and the decimals
        shown = exact.quantize(Decimal(1).scaleb(-decimals), rounding=rounding)
    if shown == 0:
        shown = abs(shown)
    return format(shown, "+f" if signed else "f")


def bounds_text(low, high, decimals: int = 3, *, scale: float = 1.0, signed: bool = False, unit: str = "") -> str:
    """"[low, high]" with the low bound rounded down and the high one up at ``decimals``
    places (after multiplying by ``scale``, e.g. 100 for percent; ``unit`` after each
    number), so the shown interval holds everything the exact one does; "" when
    :func:`has_interval` says there is none."""
    if not has_interval(low, high):
        return ""
    lo = _rounded(low, decimals, ROUND_FLOOR, scale, signed)
    hi = _rounded(high, decimals, ROUND_CEILING, scale, signed)
    return f"[{lo}{unit}, {hi}{unit}]"


def number_text(value, decimals: int = 3, *, scale: float = 1.0, signed: bool = False, unit: str = "",
                why: str = "") -> str:
    """A number on its own as :func:`interval_text` writes an estimate; "undefined (``why``)"
    when it is not one (NaN, infinite, missing), never "nan"."""
    if not _finite(value):
        return "undefined" + (f" ({why})" if why else "")
    return _rounded(value, decimals, ROUND_HALF_EVEN, scale, signed) + unit


def interval_text(estimate, low, high, decimals: int = 3, *, scale: float = 1.0, signed: bool = False,
                  unit: str = "", why: str = "") -> str:
    """The one way an estimate and its interval are written, in a report's table or on a
    terminal line: "0.403 [0.361, 0.447]", the bounds rounded outward (:func:`bounds_text`) so
    the estimate, rounded to the same places, always lies inside them; "0.500 (no interval: ``why``)"
    when there is none (``why`` the reason in words, or just "(no interval)"); "undefined
    (``why``)" for an estimate that is not a number. Never "nan", never a zero-width "[x, x]"."""
    if not _finite(estimate):
        return number_text(estimate, why=why)
    shown = number_text(estimate, decimals, scale=scale, signed=signed, unit=unit)
    bounds = bounds_text(low, high, decimals, scale=scale, signed=signed, unit=unit)
    if bounds:
        return f"{shown} {bounds}"
    if why.startswith("no interval"):  # the reason already says it
        return f"{shown} ({why})"
    return f"{shown} (no interval" + (f": {why})" if why else ")")


def format_value(value, fmt=None) -> str:
    """One cell as text: missing values empty, booleans yes/no, integers as they are, other
    numbers by ``fmt`` (from :func:`column_format`) or to 3 significant digits."""
    if value is None:
        return ""
    if isinstance(value, (bool,)) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral) and fmt is None:  # int, numpy integers
        return str(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "infinite" if value > 0 else "minus infinite"
        return fmt(value) if fmt else f"{value:.3g}"
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    return str(value)


def _formatter(table: pd.DataFrame, *columns):
    """The one way the values of ``columns`` (a column, or an interval's two) are written."""
    if is_p_column(columns[0]):
        return lambda v: format_p(v) if isinstance(v, numbers.Real) and not isinstance(v, bool) \
            else format_value(v)
    fmt = column_format([v for c in columns for v in table[c]])
    return lambda v: format_value(v, fmt)


def _interval_pairs(columns: list) -> dict:
    """{low column: high column} for every pair of names equal but for one word low <-> high."""
    pairs = {}
    for column in columns:
        tokens = re.split(r"([_ ])", str(column))
        for i, token in enumerate(tokens):
            if token.lower() == "low":
                partner = "".join(tokens[:i] + ["high" if token == "low" else "High"] + tokens[i + 1:])
                if partner in columns and column not in pairs:
                    pairs[column] = partner
    return pairs


def _interval_name(low: str, columns: list) -> tuple[str, str | None]:
    """(shown header, the estimate column it folds into or None) of an interval pair."""
    tokens = [t for t in re.split(r"[_ ]", str(low)) if t]
    stem_tokens = [t for t in tokens if t.lower() != "low"]
    sep = " " if " " in str(low) else "_"
    stem = sep.join(stem_tokens)
    if stem_tokens and tokens[-1].lower() == "low" and stem in columns:
        return header(stem), stem
    if not stem_tokens:
        return "interval", None
    words = header(stem)
    return (words if {"ci", "interval"} & {t.lower() for t in stem_tokens} else f"{words} interval"), None


def display_table(table: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
    """The table as shown in every report format: all cells text, headers in words,
    interval pairs as one "[low, high]" column, numbers rounded by the one rule."""
    columns = list(table.columns) if columns is None else list(columns)
    pairs = _interval_pairs(columns)
    highs = set(pairs.values())
    folded = {}
    for low, high in pairs.items():
        name, estimate = _interval_name(low, columns)
        if estimate is not None:
            folded[estimate] = (low, high)
    out, numeric = {}, {}
    for column in columns:
        if column in highs or (column in pairs and column in {v[0] for v in folded.values()}):
            continue
        if column in pairs:
            name, _ = _interval_name(column, columns)
            high = pairs[column]
            decimals = column_decimals([*table[column], *table[high]])
            cells = [bounds_text(lo, hi, decimals) or "no interval" for lo, hi in zip(table[column], table[high])]
        else:
            name = header(column)
            fmt = _formatter(table, column, *folded.get(column, ()))
            cells = [fmt(v) for v in table[column]]
            if column in folded:
                low, high = folded[column]
                decimals = column_decimals([*table[column], *table[low], *table[high]])
                cells = [interval_text(v, lo, hi, decimals) if c and _finite(v) else c
                         for c, v, lo, hi in zip(cells, table[column], table[low], table[high])]
        while name in out:
            name += " "  # two names alike in words stay two columns
        out[name] = cells
        numeric[name] = table[column].dtype != object
    shown = pd.DataFrame(out, index=table.index, dtype=object)
    shown.attrs["numeric"] = numeric
    return shown


#: Pixels per character of a table cell at the page's table font (DejaVu Sans 14px, measured in
#: Chromium), for :func:`column_parts`' estimate; padding and border per cell.
CHAR_PX, CELL_PX = 8.6, 16
#: The widest a table may be on the page (the body is 1100 px wide at most).
TABLE_PX = 1060


def _width(name: str, cells, numeric: bool) -> float:
    """Estimated least width (px) of a column: its longest header word (headers wrap), and its
    longest cell for numbers (kept on one line) or longest word, at most 24 characters, for text."""
    words = max((len(w) for w in str(name).split()), default=0)
    if numeric:
        cell = max((len(c) for c in cells), default=0)
    else:
        cell = max((min(len(w), 24) for c in cells for w in str(c).split()), default=0)
    return max(words * 1.1, cell) * CHAR_PX + CELL_PX


def column_parts(shown: pd.DataFrame, budget: float = TABLE_PX) -> list[list[str]]:
    """The shown table's columns in parts that each fit ``budget`` px, each part repeating the
    leading text columns (what a row is about: model, worker). One part when it fits."""
    numeric = shown.attrs.get("numeric", {})
    widths = {c: _width(c, shown[c], numeric.get(c, False)) for c in shown.columns}
    if sum(widths.values()) <= budget:
        return [list(shown.columns)]
    keys = []
    for column in shown.columns:
        if numeric.get(column, False) or len(keys) == 3 or sum(widths[k] for k in keys) + widths[column] > budget / 3:
            break
        keys.append(column)
    parts, current = [], []
    for column in shown.columns[len(keys):]:
        used = sum(widths[c] for c in keys + current)
        if current and used + widths[column] > budget:
            parts.append(keys + current)
            current = []
        current.append(column)
    if current:
        parts.append(keys + current)
    return _balanced(parts, keys, widths, budget)


def _balanced(parts: list[list[str]], keys: list[str], widths: dict, budget: float) -> list[list[str]]:
    """The same number of parts with the columns shared out evenly (no part of one lone column
    after a full one), when every part still fits."""
    rest = [c for part in parts for c in part[len(keys):]]
    target = sum(widths[c] for c in rest) / len(parts)
    balanced, current, used = [], [], 0.0
    for column in rest:
        if current and used + widths[column] / 2 > target and len(balanced) < len(parts) - 1:
            balanced.append(keys + current)
            current, used = [], 0.0
        current.append(column)
        used += widths[column]
    balanced.append(keys + current)
    fits = all(sum(widths[c] for c in part) <= budget for part in balanced)
    return balanced if fits and len(balanced) == len(parts) else parts


def _cell_class(text: str, numeric: bool) -> str:
    """Numbers right-aligned on one line; text left-aligned, wrapped at spaces, and broken
    anywhere only when a word is longer than :func:`_width` counts (24 characters)."""
    if numeric:
        return ""
    return " class='t long'" if any(len(word) > 24 for word in str(text).split()) else " class='t'"


def table_html(table: pd.DataFrame, columns: list[str] | None = None, budget: float | None = TABLE_PX) -> str:
    """An escaped HTML table (text columns left-aligned); wider than ``budget`` px, it is split
    into parts by columns (see :func:`column_parts`), each a table of its own."""
    shown = display_table(table, columns)
    numeric = shown.attrs["numeric"]
    parts = column_parts(shown, budget) if budget else [list(shown.columns)]
    out = []
    for number, part in enumerate(parts, 1):
        head = "".join(("<th>" if numeric[c] else "<th class='t'>") + f"{esc(c.rstrip())}</th>" for c in part)
        body = []
        for row in shown[part].itertuples(index=False):
            cells = [f"<td{_cell_class(v, numeric[c])}>{esc(v)}</td>" for c, v in zip(part, row)]
            body.append("<tr>" + "".join(cells) + "</tr>")
        label = (f"<caption>part {number} of {len(parts)} (columns split to fit the page; the exported "
                 f"table has them all)</caption>" if len(parts) > 1 else "")
        out.append(f"<table>{label}<tr>{head}</tr>{''.join(body)}</table>")
    return "".join(out)


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
    shown = display_table(table, columns)
    align = "".join("r" if shown.attrs["numeric"][c] else "l" for c in shown.columns)
    lines = [r"\begin{table}[ht]", r"\centering"]
    if caption:
        lines.append(r"\caption{" + latex_escape(caption) + "}")
    if label:
        lines.append(r"\label{" + "".join(ch for ch in label if ch.isalnum() or ch in ":-_.") + "}")
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule",
              " & ".join(latex_escape(c.rstrip()) for c in shown.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(v) for v in row) + r" \\" for row in shown.itertuples(index=False)]
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
    shown = display_table(table, columns)
    rule = ["---:" if shown.attrs["numeric"][c] else "---" for c in shown.columns]
    lines = [f"**{markdown_escape(caption)}**", ""] if caption else []
    lines.append("| " + " | ".join(markdown_escape(c.rstrip()) for c in shown.columns) + " |")
    lines.append("| " + " | ".join(rule) + " |")
    lines += ["| " + " | ".join(markdown_escape(v) for v in row) + " |" for row in shown.itertuples(index=False)]
    return "\n".join(lines) + "\n"
