"""Self-contained HTML report of an ACUTE-Eval analysis (no external assets, works offline).

Plots are inline SVG generated here, so the report needs no plotting library and no
network. Every piece of text -- model names, worker ids and reasons, questions -- goes
through :func:`html.escape`: crowdworker text is shown as text, never run as markup.
"""
from __future__ import annotations

import html
import json
import math

import pandas as pd

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td.t{text-align:left}svg text{font-family:system-ui,sans-serif}
.note{color:#666;font-size:90%}details{margin:0.3em 0}pre{background:#f7f7f7;padding:0.6em}
"""


def esc(value) -> str:
    """Any value as HTML-escaped text (quotes too, so it is safe inside attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def _fmt(value) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.4g}"
    return str(value)


def table_html(table: pd.DataFrame, columns: list[str] | None = None) -> str:
    """An escaped HTML table; text columns left-aligned."""
    columns = columns or list(table.columns)
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = []
    for row in table[columns].itertuples(index=False):
        cells = []
        for value in row:
            cls = ' class="t"' if isinstance(value, str) else ""
            cells.append(f"<td{cls}>{esc(_fmt(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _color(rate: float) -> str:
    """White at 50 %, green toward 100 % (column model wins), red toward 0 %."""
    t = max(-1.0, min(1.0, (rate - 50.0) / 50.0))
    if t >= 0:
        r, g, b = 255 - 150 * t, 255 - 40 * t, 255 - 150 * t
    else:
        r, g, b = 255 + 20 * t, 255 + 150 * t, 255 + 150 * t
    return f"rgb({int(r)},{int(g)},{int(b)})"


def heatmap_svg(grid: pd.DataFrame, models: list[str]) -> str:
    """Win-rate grid as SVG: row = loser, column = winner, cell = % of the matchup won by the column."""
    k = len(models)
    cell = 78
    label = 7 * max((len(m) for m in models), default=1)  # approximate width of the longest name (12px font)
    left, top = label + 16, int(label * 0.65) + 24  # column names are rotated by 40 degrees
    width, height = left + cell * k + int(label * 0.77) + 10, top + cell * k + 10
    cells = {(r.row, r.col): r for r in grid.itertuples(index=False)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="win-rate grid">']
    for i, model in enumerate(models):
        y = top + i * cell + cell / 2
        parts.append(f'<text x="{left - 6}" y="{y:.0f}" text-anchor="end" dominant-baseline="middle" '
                     f'font-size="12">{esc(model)}</text>')
        x = left + i * cell + cell / 2
        parts.append(f'<text x="{x:.0f}" y="{top - 6}" font-size="12" transform="rotate(-40 {x:.0f} {top - 6})">'
                     f'{esc(model)}</text>')
    for i, row in enumerate(models):
        for j, col in enumerate(models):
            x, y = left + j * cell, top + i * cell
            c = cells.get((row, col))
            if c is None:
                parts.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="#eee" stroke="#fff"/>')
                continue
            title = f"{col} beat {row} in {c.wins} of {c.n} ({c.winrate:.1f}%), Holm p = {c.p_holm:.3g}"
            parts.append(f'<g><title>{esc(title)}</title><rect x="{x}" y="{y}" width="{cell}" height="{cell}" '
                         f'fill="{_color(c.winrate)}" stroke="#fff"/>'
                         f'<text x="{x + cell / 2:.0f}" y="{y + cell / 2 - 4:.0f}" text-anchor="middle" '
                         f'font-size="15">{c.winrate:.0f}%{esc(c.mark)}</text>'
                         f'<text x="{x + cell / 2:.0f}" y="{y + cell / 2 + 14:.0f}" text-anchor="middle" '
                         f'font-size="11" fill="#555">{c.wins}/{c.n}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def ranking_svg(ranking: pd.DataFrame) -> str:
    """Bradley-Terry strengths (points) with bootstrap intervals (bars), best at the top."""
    row_h, right, top = 26, 30, 20
    left = 7 * int(ranking["model"].astype(str).str.len().max()) + 40
    width = left + 480
    plot_w = width - left - right
    values = pd.concat([ranking["strength"], ranking["ci_low"], ranking["ci_high"]]).dropna()
    lo, hi = float(values.min()), float(values.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 1, hi + 1
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def sx(v):
        return left + (v - lo) / (hi - lo) * plot_w

    height = top + row_h * len(ranking) + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="Bradley-Terry ranking">']
    bottom = top + row_h * len(ranking)
    for tick in _ticks(lo, hi):
        x = sx(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#eee"/>'
                     f'<text x="{x:.1f}" y="{bottom + 15}" text-anchor="middle" font-size="11">{tick:g}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{bottom + 32}" text-anchor="middle" font-size="12">'
                 f'Bradley-Terry log-strength (mean 0)</text>')
    for i, r in enumerate(ranking.itertuples(index=False)):
        y = top + i * row_h + row_h / 2
        parts.append(f'<text x="{left - 8}" y="{y:.0f}" text-anchor="end" dominant-baseline="middle" '
                     f'font-size="12">{r.rank}. {esc(r.model)}</text>')
        title = f"{r.model}: {r.strength:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
        parts.append(f"<g><title>{esc(title)}</title>")
        if not (math.isnan(r.ci_low) or math.isnan(r.ci_high)):
            parts.append(f'<line x1="{sx(r.ci_low):.1f}" y1="{y:.0f}" x2="{sx(r.ci_high):.1f}" y2="{y:.0f}" '
                         f'stroke="#369" stroke-width="2"/>')
        parts.append(f'<circle cx="{sx(r.strength):.1f}" cy="{y:.0f}" r="5" fill="#036"/></g>')
    parts.append("</svg>")
    return "".join(parts)


def _ticks(lo: float, hi: float) -> list[float]:
    span = hi - lo
    step = 10 ** math.floor(math.log10(span / 5))
    for mult in (1, 2, 5, 10):
        if span / (step * mult) <= 7:
            step *= mult
            break
    first = math.ceil(lo / step) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step) + 1)]


def _question_section(q) -> str:
    parts = [f"<h2>Question {esc(q.question_key)}</h2>"]
    if q.question:
        parts.append(f"<p><i>{esc(q.question)}</i></p>")
    parts.append("<h3>Win rates</h3><p class='note'>Cell (row A, column B): percentage of A-vs-B judgments "
                 "won by B, with wins/judgments. Marks use Holm-corrected two-sided exact binomial p-values: "
                 "* p &lt; .05, ** p &lt; .01.</p>")
    parts.append(heatmap_svg(q.grid, q.models))
    parts.append(table_html(q.matchups))
    parts.append("<h3>Ranking (Bradley-Terry)</h3>")
    if q.ranking is None:
        parts.append(f"<p>No ranking: {esc(q.ranking_error)}</p>")
    else:
        parts.append(ranking_svg(q.ranking))
        parts.append(table_html(q.ranking))
    a = q.agreement
    parts.append("<h3>Agreement</h3>" + table_html(pd.DataFrame([a])))
    b = q.side_bias
    parts.append(f"<p class='note'>Left conversation won {b['left_wins']} of {b['n']} judgments "
                 f"(two-sided binomial p = {_fmt(b['pvalue'])}); sides are randomised, so this checks the "
                 f"interface, not the models.</p>")
    return "".join(parts)


#: Reasons shown per matchup; all of them are in reasons.csv (a big run would make a huge page).
MAX_REASONS_SHOWN = 100


def _reasons_section(reasons: pd.DataFrame) -> str:
    parts = ["<h2>Reasons by matchup</h2>"]
    for (key, matchup), group in reasons.groupby(["question_key", "matchup"], sort=True):
        more = len(group) - MAX_REASONS_SHOWN
        note = f"<p class='note'>{more} more in reasons.csv</p>" if more > 0 else ""
        parts.append(f"<details><summary>{esc(key)}: {esc(matchup)} ({len(group)})</summary>"
                     + table_html(group.head(MAX_REASONS_SHOWN), ["winner", "loser", "worker", "reason"])
                     + note + "</details>")
    return "".join(parts)


def render_report(result) -> str:
    """The full report of an :class:`~parlai_acute.acute.analysis.AnalysisResult`."""
    meta = result.meta()
    kept, excluded = len(result.kept), len(result.excluded)
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<title>ACUTE-Eval report</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>ACUTE-Eval report</h1>",
             f"<p>{kept} judgments analysed, {excluded} excluded, from {esc(result.config.source)}. "
             f"parlai_acute {esc(meta['parlai_acute_version'])}, seed {esc(meta['seed'])}.</p>",
             "<h2>Exclusions</h2>", table_html(pd.DataFrame(result.exclusion_summary())),
             f"<p class='note'>Per-worker cap: {result.cap} judgments.</p>"]
    aa = result.aa_checks()
    if len(aa):
        parts.append("<h3>A/A comparisons (same model on both sides)</h3><p class='note'>The left side should "
                     "win about half of them; a small p-value means annotators favour a side.</p>"
                     + table_html(aa))
    parts.extend(_question_section(q) for q in result.questions)
    workers = result.workers()
    parts.append(f"<h2>Judgments per worker</h2><details><summary>{len(workers)} workers</summary>"
                 + table_html(workers) + "</details>")
    parts.append(_reasons_section(result.reasons()))
    parts.append("<h2>Configuration</h2><pre>" + esc(json.dumps(meta, indent=2, sort_keys=True)) + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)
