"""The figures every pairwise analysis needs: a win-rate grid and an interval (forest) plot.

Both return a :class:`~parlai_acute.report.figures.Chart` whose cells/rows carry hover
texts. Text passed in (model names, labels) is drawn with ``parse_math=False``, so a ``$``
in a model name is shown, not typeset; the SVG writer escapes it.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import Normalize
from matplotlib.patches import Rectangle

from parlai_acute.report.figures import Chart, new_figure

_PLAIN = {"parse_math": False}


def _finite(*values) -> bool:
    return all(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in values)


def win_rate_heatmap(grid: pd.DataFrame, models: list[str], interval_label: str = "", title: str = "",
                     winner_axis: str = "winner (column)", loser_axis: str = "loser (row)") -> Chart:
    """The paper's grid: cell (row A, column B) = share of A-vs-B judgments won by B.

    ``grid`` has one row per cell with columns ``row`` (loser), ``col`` (winner), ``wins``
    (won by ``col``), ``n``, and optionally ``ci_low``/``ci_high`` (proportions, 0-1,
    e.g. Clopper-Pearson; name it in ``interval_label``), ``mark`` (e.g. ``*``) and
    ``note`` (added to the hover text, e.g. "3 workers"). Models appear in the order given
    (e.g. rank order), top to bottom and left to right.
    """
    k = len(models)
    longest = max((len(str(m)) for m in models), default=1)
    side = 1.0 + 0.075 * longest
    fig = new_figure(width=side + 1.05 * k + 1.4, height=side * 0.8 + 1.0 * k + 1.0)
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
        lines = [f"{rate:.0f}%{getattr(cell, 'mark', '') or ''}", f"{cell.wins}/{cell.n}"]
        tip = f"{cell.col} beat {cell.row} in {cell.wins} of {cell.n} judgments ({rate:.1f}%)"
        low, high = getattr(cell, "ci_low", None), getattr(cell, "ci_high", None)
        if _finite(low, high):
            lines.append(f"[{100 * low:.0f}, {100 * high:.0f}]")
            tip += f"; {interval_label or 'interval'} [{100 * low:.1f}%, {100 * high:.1f}%]"
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
    ax.set_xlabel(winner_axis, fontweight="bold", **_PLAIN)
    ax.set_ylabel(loser_axis, fontweight="bold", **_PLAIN)
    explained = "cell: % won by the column model, wins/n"
    if interval_label:
        explained += f", [{interval_label}, %]"
    ax.set_title(f"{title}\n{explained}" if title else explained, fontsize=9, **_PLAIN)
    bar = fig.colorbar(_mappable(cmap, norm), ax=ax, shrink=0.7)
    bar.set_label("% won by the column model", **_PLAIN)
    return Chart(fig, tooltips)


def _mappable(cmap, norm):
    from matplotlib.cm import ScalarMappable

    return ScalarMappable(norm=norm, cmap=cmap)


def interval_plot(table: pd.DataFrame, label: str, estimate: str, low: str, high: str, xlabel: str,
                  interval_label: str, reference: float | None = None, title: str = "",
                  note: str | None = None) -> Chart:
    """Point estimates with intervals, one row per line of ``table``, first line at the top.

    The x-axis label ends with what the bars are (``interval_label``, e.g. "95% bootstrap
    interval"). A row whose interval is missing is drawn as a hollow point; the text in its
    ``note`` column (e.g. "no interval: every judgment won") is printed beside it.
    """
    rows = list(table.itertuples(index=False))
    longest = max((len(str(getattr(r, label))) for r in rows), default=1)
    fig = new_figure(width=5.5 + 0.08 * longest, height=1.2 + 0.42 * max(len(rows), 1))
    ax = fig.add_subplot()
    tooltips = {}
    values = []
    for r in rows:
        values += [v for v in (getattr(r, estimate), getattr(r, low), getattr(r, high)) if _finite(v)]
    span = (max(values) - min(values)) if values else 1.0
    for y, r in enumerate(rows):
        point, lo, hi = getattr(r, estimate), getattr(r, low), getattr(r, high)
        gid = f"row-{y}"
        text = note and getattr(r, note, "")
        if _finite(lo, hi):
            ax.hlines(y, lo, hi, color="#336699", linewidth=2.5, gid=f"{gid}-bar")
            ax.plot([point], [y], "o", color="#003366", markersize=7, gid=gid)
            tooltips[gid] = f"{getattr(r, label)}: {point:.3f} [{lo:.3f}, {hi:.3f}] ({interval_label})"
        else:
            ax.plot([point], [y], "o", markerfacecolor="white", markeredgecolor="#003366", markersize=7, gid=gid)
            tooltips[gid] = f"{getattr(r, label)}: {point:.3f}, no interval" + (f" ({text})" if text else "")
        if text:
            ax.text(point + 0.03 * (span or 1.0), y - 0.25, str(text), fontsize=8, color="#555", **_PLAIN)
    if reference is not None:
        ax.axvline(reference, color="#999999", linewidth=1, linestyle="--")
    ax.set_yticks(range(len(rows)), [str(getattr(r, label)) for r in rows], **_PLAIN)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="x", color="#eeeeee")
    ax.set_axisbelow(True)
    ax.set_xlabel(f"{xlabel}; bars: {interval_label}", **_PLAIN)
    if title:
        ax.set_title(title, fontsize=10, **_PLAIN)
    return Chart(fig, tooltips)
