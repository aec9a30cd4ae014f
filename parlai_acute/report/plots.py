"""The figures every pairwise analysis needs: a win-rate grid and an interval (forest) plot.

Both return a :class:`~parlai_acute.report.figures.Chart` whose cells/rows carry hover
texts. Text passed in (model names, labels) is drawn with ``parse_math=False``, so a ``$``
in a model name is shown, not typeset; the SVG writer escapes it.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

from parlai_acute.report.figures import Chart, new_figure
from parlai_acute.report.tables import bounds_text, has_interval, interval_text, number_text

_PLAIN = {"parse_math": False}


def win_rate_heatmap(grid: pd.DataFrame, models: list[str], interval_label: str = "", title: str = "",
                     unit: str = "judgments") -> Chart:
    """The paper's grid: cell (row A, column B) = share of A-vs-B ``unit`` won by B.

    Each cell is a matchup, so the axes name the models ("row model", "column model") and
    the heading says what a cell is, never "winner"/"loser" (either model may win a cell).

    ``grid`` has one row per cell with columns ``row``, ``col``, ``wins``
    (won by ``col``), ``n``, and optionally ``ci_low``/``ci_high`` (proportions, 0-1,
    e.g. Clopper-Pearson; name it in ``interval_label``), ``mark`` (e.g. ``*``) and
    ``note`` (added to the hover text, e.g. "3 workers"). Models appear in the order given
    (e.g. rank order), top to bottom and left to right.
    """
    k = len(models)
    longest = max((len(str(m)) for m in models), default=1)
    side = 1.0 + 0.075 * longest
    width = max(side + 1.05 * k + 1.4, 5.0)
    fig = new_figure(width=width, height=side * 0.8 + 1.0 * k + 1.2)
    ax = fig.add_subplot()
    cmap, norm = colormaps["PiYG"], Normalize(0, 100)
    position = {m: i for i, m in enumerate(models)}
    tooltips = {}
    for cell in grid.itertuples(index=False):
        if cell.row not in position or cell.col not in position or not cell.n:
            continue
        i, j = position[cell.row], position[cell.col]
        rate = 100.0 * cell.wins / cell.n
        gid = f"cell-{i}-{j}"
        ax.add_patch(Rectangle((j, i), 1, 1, facecolor=cmap(norm(rate)), edgecolor="white", linewidth=2, gid=gid))
        share = cell.wins / cell.n  # written by the rule its interval is (report.tables), so it lies inside it
        lines = [f"{number_text(share, 0, scale=100)}%{getattr(cell, 'mark', '') or ''}", f"{cell.wins}/{cell.n}"]
        tip = f"{cell.col} beat {cell.row} in {cell.wins} of {cell.n} judgments ({number_text(share, 1, scale=100)}%)"
        low, high = getattr(cell, "ci_low", None), getattr(cell, "ci_high", None)
        if has_interval(low, high):  # shown by the one rule: bounds rounded outward, never "[50, 50]"
            lines.append(bounds_text(low, high, 0, scale=100))
            tip += f"; {interval_label or 'interval'} {bounds_text(low, high, 1, scale=100, unit='%')}"
        note = getattr(cell, "note", "")
        if note:
            tip += f"; {note}"
        shade = abs(rate - 50) > 30
        ax.text(j + 0.5, i + 0.5, "\n".join(lines), ha="center", va="center", fontsize=9, linespacing=1.3,
                color="white" if shade else "black", **_PLAIN)
        tooltips[gid] = tip
    for i in range(k):
        ax.add_patch(Rectangle((i, i), 1, 1, facecolor="#eeeeee", edgecolor="white", linewidth=2))
    ax.set_xlim(0, k)
    ax.set_ylim(k, 0)
    ax.set_aspect("equal")
    ticks = np.arange(k) + 0.5
    ax.set_xticks(ticks, [str(m) for m in models], rotation=30, ha="right", **_PLAIN)
    ax.set_yticks(ticks, [str(m) for m in models], **_PLAIN)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xlabel("column model", fontweight="bold", **_PLAIN)
    ax.set_ylabel("row model", fontweight="bold", **_PLAIN)
    explained = (f"each cell: row model vs column model, % of their {unit} won by the column model; "
                 f"wins of the column model/{unit}")
    if interval_label:
        explained += f"; [{interval_label}, %]"
    ax.set_title(_wrapped(f"{title}. E{explained[1:]}" if title else explained, 1.05 * k + 0.5, 9), fontsize=9,
                 **_PLAIN)
    bar = fig.colorbar(_mappable(cmap, norm), ax=ax, shrink=0.7)
    bar.set_label("% won by the column model", **_PLAIN)
    return Chart(fig, tooltips)


def _mappable(cmap, norm):
    from matplotlib.cm import ScalarMappable

    return ScalarMappable(norm=norm, cmap=cmap)


def _wrapped(text: str, width_inches: float, fontsize: float = 10) -> str:
    """``text`` wrapped to ``width_inches`` (the axes' width: a label is centred on the axes, not the
    figure) at DejaVu Sans' widest average of 0.65 em a character, so no label runs past the figure."""
    chars = max(int(width_inches * 72 / (0.65 * fontsize)), 16)
    return "\n".join(wrapped for line in str(text).split("\n") for wrapped in textwrap.wrap(line, chars) or [""])


def bar_plot(labels: list[str], values, xlabel: str, title: str = "") -> Chart:
    """Horizontal bars, one per label, first at the top, for descriptive values (no interval:
    say so in ``title``); sized and labelled like :func:`interval_plot`, so nothing is clipped."""
    labels = [str(label) for label in labels]
    longest = max((len(label) for label in labels), default=1)
    width = 5.5 + 0.08 * longest
    fig = new_figure(width=width, height=1.3 + 0.4 * max(len(labels), 1))
    ax = fig.add_subplot()
    ax.barh(range(len(labels)), values, color="#336699")
    ax.set_yticks(range(len(labels)), labels, **_PLAIN)
    ax.invert_yaxis()
    axes_width = width - 0.08 * longest - 0.6
    ax.set_xlabel(_wrapped(xlabel, axes_width), **_PLAIN)
    if title:
        ax.set_title(_wrapped(title, axes_width, 9), fontsize=9, **_PLAIN)
    return Chart(fig)


def interval_plot(table: pd.DataFrame, label: str, estimate: str, low: str, high: str, xlabel: str,
                  interval_label: str, reference: float | None = None, title: str = "",
                  note: str | None = None, missing: str = "") -> Chart:
    """Point estimates with intervals, one row per line of ``table``, first line at the top.

    The x-axis label ends with what the bars are (``interval_label``, e.g. "95% bootstrap
    interval"). A row whose interval is missing is drawn as a hollow point; the text in its
    ``note`` column (e.g. "no interval: every judgment won") is printed beside it. When no
    row has an interval the label says so instead of promising bars, with ``missing`` (why
    none could be given) when the caller knows.
    """
    rows = list(table.itertuples(index=False))
    longest = max((len(str(getattr(r, label))) for r in rows), default=1)
    noted = bool(note) and any(getattr(r, note, "") for r in rows)
    width = 5.5 + 0.08 * longest
    fig = new_figure(width=width, height=1.2 + (0.7 if noted else 0.42) * max(len(rows), 1))
    ax = fig.add_subplot()
    tooltips = {}
    drawn = 0
    for y, r in enumerate(rows):
        point, lo, hi = getattr(r, estimate), getattr(r, low), getattr(r, high)
        gid = f"row-{y}"
        text = note and getattr(r, note, "")
        if has_interval(lo, hi):
            drawn += 1
            ax.hlines(y, lo, hi, color="#336699", linewidth=2.5, gid=f"{gid}-bar")
            ax.plot([point], [y], "o", color="#003366", markersize=7, gid=gid)
            tooltips[gid] = f"{getattr(r, label)}: {interval_text(point, lo, hi)} ({interval_label})"
        else:
            ax.plot([point], [y], "o", markerfacecolor="white", markeredgecolor="#003366", markersize=7, gid=gid)
            tooltips[gid] = f"{getattr(r, label)}: {interval_text(point, lo, hi, why=str(text or ''))}"
        if text:  # under the row, across the plot; kept out of the layout so it never squeezes the axes
            ax.text(0.01, y + 0.22, textwrap.shorten(str(text), int(width * 14), placeholder=" ..."), fontsize=7,
                    color="#555", va="top", transform=ax.get_yaxis_transform(), in_layout=False, **_PLAIN)
    if reference is not None:
        ax.axvline(reference, color="#999999", linewidth=1, linestyle="--")
    ax.set_yticks(range(len(rows)), [str(getattr(r, label)) for r in rows], **_PLAIN)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="x", color="#eeeeee")
    ax.set_axisbelow(True)
    if drawn == len(rows):
        bars = f"bars: {interval_label}"
    elif drawn:
        bars = f"bars: {interval_label}; hollow points: no interval" + (f" ({missing})" if missing else "")
    else:
        bars = f"no interval bars ({interval_label}): {missing or 'none could be given'}"
    axes_width = width - 0.08 * longest - 0.6  # less the row labels
    ax.set_xlabel(_wrapped(f"{xlabel}\n{bars}", axes_width), **_PLAIN)
    if title:
        ax.set_title(_wrapped(title, axes_width), fontsize=10, **_PLAIN)
    return Chart(fig, tooltips)
