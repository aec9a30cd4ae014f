"""The shared report layer: escaping everywhere, exports beside the page, deterministic figures."""
import json
import re
from html.parser import HTMLParser
from xml.etree import ElementTree

import pandas as pd
import pytest
from matplotlib.figure import Figure

from parlai_acute.report import Report, figure_pdf, figure_svg, interval_plot, table_latex, table_markdown, \
    win_rate_heatmap

EVIL = "<script>alert('x')</script> & <img src=x onerror=alert(1)> $x$ | _ \\ {}"


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text, self.ids = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)
        self.ids.extend(v for k, v in attrs if k == "id")

    def handle_data(self, data):
        self.text.append(data)


def grid_table(models):
    rows = []
    for i, a in enumerate(models):
        for j, b in enumerate(models):
            if i != j:
                rows.append({"row": a, "col": b, "wins": 3 + i, "n": 10, "ci_low": 0.1 * (i + 1), "ci_high": 0.9,
                             "mark": "*" if i == 0 else ""})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    models = ["plain", EVIL, "third"]
    report = Report("Title " + EVIL, intro="intro " + EVIL)
    report.banner("Judged by SIMULATED workers " + EVIL)
    section = report.section("Section " + EVIL)
    section.text("para " + EVIL)
    section.note("note " + EVIL)
    section.figure(win_rate_heatmap(grid_table(models), models, interval_label="95% Clopper-Pearson"), "grid")
    ranking = pd.DataFrame({"model": models, "strength": [0.5, 0.1, -0.6], "low": [0.1, float("nan"), -1.0],
                            "high": [0.9, float("nan"), -0.2], "why": ["", "no interval: " + EVIL, ""]})
    section.figure(interval_plot(ranking, "model", "strength", "low", "high", xlabel="log-strength",
                                 interval_label="95% bootstrap interval", reference=0.0, note="why"), "ranking")
    section.table(ranking, "ranking", caption="Ranking " + EVIL)
    section.section("folded " + EVIL, collapsed=True).table(
        pd.DataFrame({"reason": [EVIL] * 5}), max_rows=2, more="in reasons.csv")
    report.configuration("Models " + EVIL, {"agent": EVIL, "nan": float("nan"), "seed": 0})
    outdir = tmp_path_factory.mktemp("report")
    paths = report.write(outdir)
    return report, outdir, paths


def test_every_export_is_written_beside_the_page(written):
    _, outdir, paths = written
    assert set(paths) == {"report.html", "report_config.json", "figures/grid.svg", "figures/grid.pdf",
                          "figures/ranking.svg", "figures/ranking.pdf", "tables/ranking.tex", "tables/ranking.md"}
    for relative, path in paths.items():
        assert path == outdir / relative and path.stat().st_size > 0
    assert paths["figures/grid.pdf"].read_bytes().startswith(b"%PDF")
    ElementTree.fromstring(paths["figures/grid.svg"].read_bytes())  # well-formed standalone SVG
    assert not list(outdir.rglob(".*.tmp"))  # atomic writes leave no temporary files


def test_text_is_text_everywhere_in_the_page(written):
    _, _, paths = written
    page = paths["report.html"].read_text(encoding="utf-8")
    parser = Collect()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags
    assert not any(name.startswith("on") for name, _ in parser.attrs)
    text = "".join(parser.text)
    for where in ("Title ", "intro ", "Judged by SIMULATED workers ", "Section ", "para ", "note ", "Ranking ",
                  "folded "):
        assert where + EVIL in text, where
    assert text.count(EVIL) > 10  # also figure tick labels, tooltips, table cells and the configuration
    assert "3 more in reasons.csv" in text  # the folded table shows 2 of 5 rows


def test_figure_labels_and_tooltips_are_escaped(written):
    _, _, paths = written
    svg = paths["figures/grid.svg"].read_text(encoding="utf-8")
    root = ElementTree.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
    assert EVIL in texts  # a tick label, drawn as plain text (no mathtext for the $x$)
    titles = ["".join(t.itertext()) for t in root.iter(ns + "title")]
    assert any(t.startswith(f"{EVIL} beat plain in 3 of 10 judgments (30.0%); 95% Clopper-Pearson [10.0%, 90.0%]") for t in titles), titles
    assert not list(root.iter(ns + "script"))


def test_heatmap_axes_say_which_side_won_and_cells_carry_rate_n_interval(written):
    _, _, paths = written
    root = ElementTree.fromstring(paths["figures/grid.svg"].read_bytes())
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "winner (column)" in texts and "loser (row)" in texts
    assert "30%*" in texts and "3/10" in texts and "[10, 90]" in texts  # row plain: rate, n, interval
    assert any("95% Clopper-Pearson" in t for t in texts)
    ticks = [t for t in texts if t in ("plain", EVIL, "third")]
    assert ticks[:3] == ["plain", EVIL, "third"]  # models in the order given


def test_interval_plot_names_its_interval_and_marks_missing_ones(written):
    _, _, paths = written
    root = ElementTree.fromstring(paths["figures/ranking.svg"].read_bytes())
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "log-strength; bars: 95% bootstrap interval" in texts
    assert "no interval: " + EVIL in texts


def test_ids_of_inline_figures_never_clash(written):
    _, _, paths = written
    parser = Collect()
    parser.feed(paths["report.html"].read_text(encoding="utf-8"))
    assert len(parser.ids) == len(set(parser.ids)) and parser.ids
    page = paths["report.html"].read_text(encoding="utf-8")
    for ref in re.findall(r'(?:url\(#|href="#)([^)"]+)', page):
        assert ref in parser.ids, ref


def test_svg_and_pdf_are_deterministic():
    def make():
        fig = Figure(figsize=(3, 2))
        ax = fig.add_subplot()
        ax.plot([0, 1], [1, 0], gid="line")
        ax.set_title("same")
        return fig

    assert figure_svg(make()) == figure_svg(make())
    assert figure_pdf(make()) == figure_pdf(make())
    assert "<dc:date>" not in figure_svg(make())


def test_latex_and_markdown_exports_escape_text():
    table = pd.DataFrame({"model": [EVIL], "rate": [0.123456], "n": [12345]})
    tex = table_latex(table, caption="c_" + EVIL)
    assert r"\textless{}script\textgreater{}" in tex and r"\$x\$" in tex and r"\_" in tex
    assert "<script>" not in tex and " & 0.1235 & 12345 \\\\" in tex
    md = table_markdown(table)
    row = md.splitlines()[2]
    assert row.count(" | ") == 2  # the pipe in the text did not make a column
    assert "<script>" not in md and "&lt;script&gt;" in md and r"\$x\$" in md


def test_configuration_is_strict_json(written):
    _, _, paths = written
    def reject(value):
        raise ValueError(value)
    config = json.loads(paths["report_config.json"].read_text(encoding="utf-8"), parse_constant=reject)
    assert config["Models " + EVIL] == {"agent": EVIL, "nan": None, "seed": 0}


def test_export_names_are_file_safe_and_unique(tmp_path):
    report = Report("r")
    section = report.section("s")
    section.table(pd.DataFrame({"a": [1]}), "../x y")
    section.table(pd.DataFrame({"a": [2]}), "../x y")
    paths = report.write(tmp_path)
    assert {"tables/x_y.tex", "tables/x_y_2.tex"} <= set(paths)
    assert all(p.resolve().is_relative_to(tmp_path.resolve()) for p in paths.values())
