"""The report document: banner, sections (text, notes, tables, figures), configuration.

Build it in reading order, then :meth:`Report.write` it. Nothing is rendered until then,
so a report costs nothing until it is written; figures are rendered once each, for the
HTML page and the exported files alike.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from parlai_acute.files import atomic_write, json_ready
from parlai_acute.report.figures import Chart, figure_pdf, figure_svg, inline_svg
from parlai_acute.report.tables import esc, table_html, table_latex, table_markdown

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:14px}td,th{border:1px solid #ccc;padding:3px 7px;
text-align:right;vertical-align:top}th{background:#f3f3f3;font-weight:600}
td.t,th.t{text-align:left}td.long{overflow-wrap:anywhere}
td{white-space:nowrap}td.t{white-space:normal}
caption{caption-side:top;text-align:left;color:#666;font-size:90%}
figure{margin:0.5em 0 1.5em}figure svg{max-width:100%;height:auto}
figcaption,.note,.exports{color:#666;font-size:90%;overflow-wrap:anywhere}details{margin:0.3em 0}
pre{background:#f7f7f7;padding:0.6em;white-space:pre-wrap;overflow-wrap:anywhere}
.banner{border:3px solid #b00;background:#fff0f0;color:#700;font-size:130%;font-weight:bold;
padding:0.7em 1em;margin:1em 0}.banner.info{border-color:#369;background:#eef4fb;color:#134}
@page{size:A4 landscape;margin:12mm}
@media print{body{margin:0;max-width:none;font-size:11px}table{font-size:10px}
figure,table,tr{break-inside:avoid}.exports{display:none}}
"""
_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass
class _Text:
    text: str
    kind: str  # "p", "note", "pre"

    def html(self, _report) -> str:
        if self.kind == "pre":
            return f"<pre>{esc(self.text)}</pre>"
        cls = " class='note'" if self.kind == "note" else ""
        return f"<p{cls}>{esc(self.text)}</p>"


@dataclass
class _Table:
    table: pd.DataFrame
    name: str | None
    caption: str
    columns: list[str] | None
    max_rows: int | None
    more: str

    def html(self, _report) -> str:
        shown = self.table if self.max_rows is None else self.table.head(self.max_rows)
        parts = [f"<p class='note'>{esc(self.caption)}</p>" if self.caption else "", table_html(shown, self.columns)]
        hidden = len(self.table) - len(shown)
        if hidden > 0:
            parts.append(f"<p class='note'>{hidden} more {esc(self.more)}</p>")
        if self.name:
            parts.append(f"<p class='exports'>Table as <a href='tables/{esc(self.name)}.tex'>LaTeX</a>, "
                         f"<a href='tables/{esc(self.name)}.md'>Markdown</a></p>")
        return "".join(parts)


@dataclass
class _Figure:
    chart: Chart
    name: str
    caption: str
    svg: str = ""

    def html(self, _report) -> str:
        caption = f"<figcaption>{esc(self.caption)}</figcaption>" if self.caption else ""
        return (f"<figure>{inline_svg(self.svg, self.name)}{caption}</figure>"
                f"<p class='exports'>Figure as <a href='figures/{esc(self.name)}.svg'>SVG</a>, "
                f"<a href='figures/{esc(self.name)}.pdf'>PDF</a></p>")


@dataclass
class Section:
    """A heading and its content, in the order added; sections nest (h2, h3, ...)."""

    heading: str
    collapsed: bool = False
    level: int = 2
    items: list = field(default_factory=list)
    _report: "Report | None" = field(default=None, repr=False)

    def text(self, text: str) -> "Section":
        """A paragraph (shown as text, never markup)."""
        self.items.append(_Text(str(text), "p"))
        return self

    def note(self, text: str) -> "Section":
        """A small explanatory paragraph (how to read a table, what an interval is)."""
        self.items.append(_Text(str(text), "note"))
        return self

    def preformatted(self, text: str) -> "Section":
        self.items.append(_Text(str(text), "pre"))
        return self

    def table(self, table: pd.DataFrame, name: str | None = None, caption: str = "",
              columns: list[str] | None = None, max_rows: int | None = None, more: str = "rows not shown") -> "Section":
        """A table, given raw (snake_case names, full precision): the page and the exports show it
        by the one display rule of :mod:`parlai_acute.report.tables` (headers in words, intervals
        as one column, p-values and numbers rounded; split by columns when too wide for the page).
        With a ``name`` it is also exported as ``tables/NAME.tex`` and ``.md`` (complete, even
        when the page shows only ``max_rows`` rows, followed by "N more ``more``")."""
        name = self._report._claim(name, "tables") if name else None
        self.items.append(_Table(table.copy(), name, caption, columns, max_rows, more))
        return self

    def figure(self, figure, name: str, caption: str = "") -> "Section":
        """A matplotlib Figure or :class:`Chart`: inline SVG in the page, exported as
        ``figures/NAME.svg`` and ``figures/NAME.pdf``."""
        chart = figure if isinstance(figure, Chart) else Chart(figure)
        self.items.append(_Figure(chart, self._report._claim(name, "figures"), caption))
        return self

    def section(self, heading: str, collapsed: bool = False) -> "Section":
        """A subsection (one heading level down); ``collapsed`` shows it folded."""
        child = Section(heading, collapsed, min(self.level + 1, 6), _report=self._report)
        self.items.append(child)
        return child

    def html(self, report) -> str:
        body = "".join(item.html(report) for item in self.items)
        if self.collapsed:
            return f"<details><summary>{esc(self.heading)}</summary>{body}</details>"
        return f"<h{self.level}>{esc(self.heading)}</h{self.level}>{body}"

    def walk(self):
        for item in self.items:
            yield item
            if isinstance(item, Section):
                yield from item.walk()


class Report:
    """A report page and its exports. See the package docstring for an example."""

    def __init__(self, title: str, intro: str = ""):
        self.title = str(title)
        self.intro = str(intro)
        self.banners: list[tuple[str, str]] = []
        self.sections: list[Section] = []
        self.configurations: list[tuple[str, dict]] = []
        self.methods_text = ""
        self._names: set[tuple[str, str]] = set()

    def banner(self, text: str, kind: str = "warning") -> "Report":
        """A prominent box under the title (``kind`` "warning" or "info"), e.g. that the
        judgments were made by simulated workers."""
        if kind not in ("warning", "info"):
            raise ValueError(f"banner kind must be 'warning' or 'info', not {kind!r}")
        self.banners.append((kind, str(text)))
        return self

    def section(self, heading: str, collapsed: bool = False) -> Section:
        """A top-level section; add content to the returned :class:`Section`."""
        section = Section(heading, collapsed, 2, _report=self)
        self.sections.append(section)
        return section

    def methods(self, text: str) -> "Report":
        """The "Methods" paragraph (see :mod:`parlai_acute.report.methods`): the page ends with
        it and it is also written to ``report_methods.txt``, ready to paste into a paper."""
        self.methods_text = str(text)
        return self

    def configuration(self, title: str, values: dict) -> "Report":
        """A configuration block (model configurations, run settings, seed, version), shown
        as JSON at the end of the page and written to ``report_config.json``."""
        self.configurations.append((str(title), json.loads(json.dumps(json_ready(values), default=str))))
        return self

    def _claim(self, name: str, kind: str) -> str:
        """A file-safe export name derived from ``name``, unique among the ``kind`` (folder)."""
        base = _NAME.sub("_", str(name)).strip("._") or "item"
        candidate, number = base, 2
        while (kind, candidate) in self._names:
            candidate, number = f"{base}_{number}", number + 1
        self._names.add((kind, candidate))
        return candidate

    def _items(self):
        for section in self.sections:
            yield from section.walk()

    def _render_figures(self) -> None:
        for item in self._items():
            if isinstance(item, _Figure) and not item.svg:
                item.svg = figure_svg(item.chart)

    def render_html(self) -> str:
        """The self-contained page (figures inline, no external assets)."""
        self._render_figures()
        parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
                 f"<title>{esc(self.title)}</title><style>{_STYLE}</style></head><body>",
                 f"<h1>{esc(self.title)}</h1>"]
        parts += [f"<div class='banner {kind}' role='alert'>{esc(text)}</div>" for kind, text in self.banners]
        if self.intro:
            parts.append(f"<p>{esc(self.intro)}</p>")
        parts += [section.html(self) for section in self.sections]
        if self.configurations:
            parts.append("<h2>Configuration</h2>")
            for title, values in self.configurations:
                parts.append(f"<h3>{esc(title)}</h3><pre>"
                             f"{esc(json.dumps(values, indent=2, sort_keys=True, allow_nan=False))}</pre>")
        if self.methods_text:
            parts.append(f"<h2>Methods</h2><p class='methods'>{esc(self.methods_text)}</p>")
        parts.append("</body></html>")
        return "\n".join(parts)

    def write(self, outdir: str | Path, filename: str = "report.html") -> dict[str, Path]:
        """Write the page, ``report_config.json``, ``tables/*.tex|md`` and
        ``figures/*.svg|pdf`` into ``outdir``, each atomically (exports first, the page
        last, so the page never links to a file that is not there yet). Returns
        {path relative to outdir: absolute path}."""
        outdir = Path(outdir)
        self._render_figures()
        files: dict[str, str | bytes] = {}
        for item in self._items():
            if isinstance(item, _Table) and item.name:
                files[f"tables/{item.name}.tex"] = table_latex(item.table, item.columns, item.caption,
                                                               label=f"tab:{item.name}")
                files[f"tables/{item.name}.md"] = table_markdown(item.table, item.columns, item.caption)
            elif isinstance(item, _Figure):
                files[f"figures/{item.name}.svg"] = item.svg
                files[f"figures/{item.name}.pdf"] = figure_pdf(item.chart)
        stem = Path(filename).stem
        files[f"{stem}_config.json"] = json.dumps(
            {title: values for title, values in self.configurations}, indent=2, sort_keys=True,
            allow_nan=False, ensure_ascii=False) + "\n"
        if self.methods_text:
            files[f"{stem}_methods.txt"] = self.methods_text + "\n"
        files[filename] = self.render_html()
        paths = {}
        for relative, content in files.items():
            path = outdir / relative
            binary = isinstance(content, bytes)
            with atomic_write(path, "wb" if binary else "w") as fh:
                fh.write(content)
            paths[relative] = path
        return paths
