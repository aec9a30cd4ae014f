"""matplotlib figures for reports: made without pyplot, saved deterministically.

Figures are plain :class:`matplotlib.figure.Figure` objects (no pyplot, so no global
state, no display and no backend choice: saving uses matplotlib's own SVG and PDF
writers). SVG output keeps text as text (``svg.fonttype: none``), so labels stay
searchable and are XML-escaped by matplotlib; a fixed ``svg.hashsalt`` and no date make
the same figure give the same bytes every time. PDF output embeds TrueType fonts
(``pdf.fonttype: 42``, what publishers ask for) and carries no creation date.

Every text is drawn in DejaVu Sans (matplotlib's own) with a CJK font as its fallback, when
Debian's is installed (``make fonts``): a model named 通义千问 has its glyphs in SVG and PDF, and no
"Glyph missing" warning (:func:`text_families`).

A :class:`Chart` is a figure plus hover texts: ``tooltips`` maps the ``gid`` of an artist
(``artist.set_gid("cell-0-1")``) to a text that the HTML page shows on hover, escaped.
"""
from __future__ import annotations

import dataclasses
import functools
import html
import io
import logging
import os
import re
from dataclasses import dataclass, field

import matplotlib
from matplotlib.figure import Figure
from matplotlib.text import Text

# PDF font subsetting logs every step at INFO; Mephisto's handlers would print them all.
logging.getLogger("fontTools").setLevel(logging.WARNING)

#: Settings applied while saving; deterministic output, text kept as text.
SAVE_RC = {"svg.fonttype": "none", "svg.hashsalt": "parlai_acute", "pdf.fonttype": 42, "ps.fonttype": 42}


#: Debian's fonts with CJK glyphs (``make fonts`` installs the second), tried in order.
CJK_FONTS = ("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc")


@functools.lru_cache(maxsize=1)
def text_families() -> tuple[str, ...]:
    """The font families of every text, in fallback order: DejaVu Sans, then the first of
    :data:`CJK_FONTS` installed. It is registered with matplotlib here (its font cache may predate
    the font), each face as the normal and the bold weight: WenQuanYi has one weight (500), and
    matplotlib would log the mismatch at every text drawn (bold axis labels too)."""
    from matplotlib import font_manager

    manager = font_manager.fontManager
    for path in CJK_FONTS:
        if os.path.isfile(path):
            manager.addfont(path)
            manager.ttflist = [dataclasses.replace(f, weight=weight) if f.fname == path else f
                               for f in manager.ttflist for weight in ((400, 700) if f.fname == path else (None,))]
            return "DejaVu Sans", font_manager.FontProperties(fname=path).get_name()
    return ("DejaVu Sans",)


def _with_fallback(figure: Figure) -> None:
    """Give every text of ``figure`` left in the default family the fallback families."""
    default = [matplotlib.rcParams["font.family"]] if isinstance(matplotlib.rcParams["font.family"], str) \
        else list(matplotlib.rcParams["font.family"])
    for text in figure.findobj(Text):
        if list(text.get_fontfamily()) == default:
            text.set_fontfamily(list(text_families()))


@dataclass
class Chart:
    """A figure and the hover texts of some of its artists (gid -> text, shown escaped)."""

    figure: Figure
    tooltips: dict[str, str] = field(default_factory=dict)


def new_figure(width: float = 6.0, height: float = 4.0) -> Figure:
    """A figure with constrained layout (labels never clipped), sized in inches."""
    return Figure(figsize=(width, height), layout="constrained", dpi=100)


def _as_chart(figure) -> Chart:
    return figure if isinstance(figure, Chart) else Chart(figure)


def figure_svg(figure, tooltips: dict[str, str] | None = None) -> str:
    """The figure as a standalone SVG document (deterministic bytes), hover texts included."""
    chart = _as_chart(figure)
    _with_fallback(chart.figure)
    buffer = io.StringIO()
    with matplotlib.rc_context({**SAVE_RC, "font.family": list(text_families())}):  # texts made while drawing
        chart.figure.savefig(buffer, format="svg", metadata={"Date": None})
    return add_tooltips(buffer.getvalue(), {**chart.tooltips, **(tooltips or {})})


def figure_pdf(figure) -> bytes:
    """The figure as PDF (no creation date, TrueType fonts embedded)."""
    buffer = io.BytesIO()
    _with_fallback(_as_chart(figure).figure)
    with matplotlib.rc_context({**SAVE_RC, "font.family": list(text_families())}):
        _as_chart(figure).figure.savefig(buffer, format="pdf", metadata={"CreationDate": None})
    return buffer.getvalue()


def add_tooltips(svg: str, tooltips: dict[str, str]) -> str:
    """Insert an escaped ``<title>`` (the hover text) as first child of each ``<g id=gid>``."""
    for gid, text in tooltips.items():
        opening = f'<g id="{html.escape(gid, quote=True)}">'
        svg = svg.replace(opening, f"{opening}<title>{html.escape(str(text), quote=False)}</title>", 1)
    return svg


_HEADER = re.compile(r"\A\s*<\?xml[^>]*\?>\s*(<!DOCTYPE[^>]*>\s*)?")
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG document made fit to sit inside HTML beside others: no XML header, no
    metadata, and every id (and reference to one) prefixed so two figures never clash."""
    svg = _METADATA.sub("", _HEADER.sub("", svg), count=1)
    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    return _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
