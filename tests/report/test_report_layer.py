"""The shared report layer: escaping everywhere, exports beside the page, deterministic figures."""
import json
import random
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


def test_heatmap_axes_say_what_a_cell_is_and_cells_carry_rate_n_interval(written):
    """Each cell is a matchup: the axes name the row and column models (never 'winner'/'loser',
    as either may win a cell) and the heading says whose share of the judgments a cell is."""
    _, _, paths = written
    root = ElementTree.fromstring(paths["figures/grid.svg"].read_bytes())
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "column model" in texts and "row model" in texts
    assert not any("winner" in t or "loser" in t for t in texts)
    heading = " ".join(" ".join(texts).split())
    assert "row model vs column model, % of their judgments won by the column model" in heading
    assert "30%*" in texts and "3/10" in texts and "[10, 90]" in texts  # row plain: rate, n, interval
    assert "95% Clopper-Pearson" in " ".join(texts)
    ticks = [t for t in texts if t in ("plain", EVIL, "third")]
    assert ticks[:3] == ["plain", EVIL, "third"]  # models in the order given


def test_interval_plot_names_its_interval_and_marks_missing_ones(written):
    _, _, paths = written
    root = ElementTree.fromstring(paths["figures/ranking.svg"].read_bytes())
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "log-strength" in texts  # the x-axis label, then what the bars are and what a hollow point is
    assert "bars: 95% bootstrap interval; hollow points: no interval" in " ".join(" ".join(texts).split())
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
    assert "<script>" not in tex and " & 0.123 & 12345 \\\\" in tex
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


def test_a_plot_without_any_interval_says_so_instead_of_promising_bars():
    nan = float("nan")
    table = pd.DataFrame({"model": ["a", "b"], "rate": [0.7, 0.3], "low": [nan, nan], "high": [nan, nan]})
    chart = interval_plot(table, "model", "rate", "low", "high", xlabel="pick rate", interval_label="95% bootstrap",
                          missing="1 dialogue; a dialogue bootstrap needs 5 or more")
    root = ElementTree.fromstring(figure_svg(chart))
    text = " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert "bars:" not in text and "no interval bars" in text and "a dialogue bootstrap needs 5 or more" in text
    assert not root.findall(".//{http://www.w3.org/2000/svg}g[@id='row-0-bar']")


def test_one_formatting_rule_headers_in_words_intervals_merged_p_values_rounded():
    from parlai_acute.report.tables import display_table, header

    table = pd.DataFrame({"model_a": ["x", "y"], "boot_p_holm": [0.008404, 0.00001], "diff": [0.123456, -0.5],
                          "ci_low": [0.01, -0.9], "ci_high": [0.5, 0.25], "kappa": [0.4, 0.5],
                          "kappa_low": [0.1, 0.2], "kappa_high": [0.6, 0.7], "n": [3.0, float("nan")],
                          "few": [True, False]})
    shown = display_table(table)
    assert list(shown.columns) == ["model A", "bootstrap p (Holm)", "difference", "CI", "kappa", "n", "few"]
    assert list(shown["bootstrap p (Holm)"]) == ["0.008", "< 0.001"]
    assert list(shown["difference"]) == ["0.123", "-0.500"]
    assert list(shown["CI"]) == ["[0.010, 0.500]", "[-0.900, 0.250]"]
    assert list(shown["kappa"]) == ["0.400 [0.100, 0.600]", "0.500 [0.200, 0.700]"]
    assert list(shown["n"]) == ["3", ""] and list(shown["few"]) == ["yes", "no"]
    assert header("Holm p (cluster-aware)") == "Holm p (cluster-aware)"  # already in words: kept
    assert header("p_holm_exact") == "p exact (Holm)"
    assert [header(c) for c in ("gt_bleu4", "unique1_new")] == ["gt BLEU-4", "unique 1-grams new"]
    assert list(display_table(pd.DataFrame({"top_p": [0.95]}))["top p"]) == ["0.950"]  # a setting, not a p-value


def test_one_interval_rule_rounds_outward_and_says_no_interval_in_words():
    """The metrics score line "0.0403 [0.000,0.040]": an estimate shown outside its interval by
    rounding. The rule rounds the bounds outward at the estimate's places; a NaN or zero-width
    interval is words, never "nan" or "[x, x]"."""
    from parlai_acute.report.tables import bounds_text, display_table, interval_text

    nan = float("nan")
    assert interval_text(0.0403, 0.00011, 0.04034) == "0.040 [0.000, 0.041]"
    assert interval_text(0.29, 0.29, 0.5, 1, scale=100, unit="%") == "29.0% [29.0%, 50.0%]"  # not 28.9
    assert interval_text(-0.00001, -0.2, 0.3, 2, signed=True) == "+0.00 [-0.20, +0.30]"  # no "-0.00"
    assert interval_text(0.5, nan, nan, why="1 context") == "0.500 (no interval: 1 context)"
    assert interval_text(0.5, 0.5, 0.5) == "0.500 (no interval)"  # zero width: no interval
    assert interval_text(nan, nan, nan, why="no ratings") == "undefined (no ratings)"
    assert bounds_text(0.2, 0.1) == "" and bounds_text(0.1, float("inf")) == ""
    assert interval_text(3e30, 1e30, 1e300, 1) == "3" + "0" * 30 + ".0 [1" + "0" * 30 + ".0, 1" + "0" * 300 + ".0]"
    rng = random.Random(0)
    for _ in range(2000):  # the shown estimate always lies inside the shown interval, inside [0, 1]
        places = rng.randint(1, 6)
        low, estimate, high = sorted([rng.choice([0.0, 1.0, 1 / 3, 0.29])] + [round(rng.random(), places)
                                                                              for _ in range(2)])
        decimals = rng.randint(0, 3)
        text = interval_text(estimate, low, high, decimals)
        if "[" in text:
            shown, lo, hi = (float(x) for x in text.replace("[", "").replace("]", "").replace(",", "").split())
            assert lo <= shown <= hi and lo < hi and 0 <= lo and hi <= 1
    shown = display_table(pd.DataFrame({"rate": [0.0403, 0.5, nan], "rate_low": [0.0001, nan, nan],
                                        "rate_high": [0.04034, nan, nan], "ci_low": [0.1, 0.3, nan],
                                        "ci_high": [0.2, 0.3, nan]}))
    assert list(shown["rate"]) == ["0.040 [0.000, 0.041]", "0.500 (no interval)", ""]
    assert list(shown["CI"]) == ["[0.100, 0.200]", "no interval", "no interval"]


def test_a_table_too_wide_for_the_page_is_split_by_columns_repeating_its_key():
    from parlai_acute.report.tables import TABLE_PX, column_parts, display_table

    wide = pd.DataFrame({"model": ["alpha", "beta"], **{f"measure_number_{i}": [0.123456, 0.5] for i in range(30)}})
    parts = column_parts(display_table(wide))
    assert len(parts) > 1 and all(part[0] == "model" for part in parts)
    assert sorted({c for part in parts for c in part[1:]}) == sorted(display_table(wide).columns[1:])
    html = table_html_of(wide)
    assert html.count("<table>") == len(parts) and f"part 1 of {len(parts)}" in html
    assert column_parts(display_table(wide.iloc[:, :4]), TABLE_PX) == [list(display_table(wide.iloc[:, :4]).columns)]


def table_html_of(table):
    from parlai_acute.report.tables import table_html

    return table_html(table)


def test_cjk_model_names_render_without_missing_glyphs():
    """Model names in Chinese or Japanese are drawn from Debian's CJK font, the fallback of every
    text (``make fonts`` installs it): no "Glyph missing" warning in SVG or PDF, the font named."""
    import warnings

    from parlai_acute.report.figures import text_families

    assert len(text_families()) == 2, "no CJK font installed: run `make fonts` (Debian's fonts-wqy-zenhei)"
    models = ["通义千问", "ベースライン", "plain"]
    ranking = pd.DataFrame({"model": models, "strength": [0.5, 0.1, -0.6], "low": [0.1, -0.3, -1.0],
                            "high": [0.9, 0.5, -0.2]})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        charts = [win_rate_heatmap(grid_table(models), models, interval_label="95% Clopper-Pearson", title="模型"),
                  interval_plot(ranking, "model", "strength", "low", "high", xlabel="log-strength",
                                interval_label="95% bootstrap interval")]
        svgs = [figure_svg(chart) for chart in charts]
        for chart in charts:
            figure_pdf(chart)
    assert not [str(w.message) for w in seen if "missing from font" in str(w.message)]
    assert all(text_families()[1] in svg and "通义千问" in svg for svg in svgs)
