"""The one report layer of parlai_acute: every analysis builds its page with it.

An analysis makes a :class:`Report`, adds a banner, sections with text, tables (pandas
DataFrames) and figures (matplotlib), and configuration blocks, then calls
:meth:`Report.write`. That writes, atomically, a self-contained ``report.html`` (figures
inline as SVG, no external assets) and beside it every table as LaTeX and Markdown
(``tables/NAME.tex``, ``tables/NAME.md``) and every figure as SVG and PDF
(``figures/NAME.svg``, ``figures/NAME.pdf``), ready for a paper.

Text is always text: every string (model names, worker reasons, questions, figure
labels and tooltips) is escaped for HTML, LaTeX and Markdown where it is written.

    from parlai_acute.report import Report, estimands_section, interval_plot, win_rate_heatmap

    report = Report("ACUTE-Eval report")
    estimands_section(report, result.estimands())   # what the numbers are (a result's Estimands), first
    report.banner("Judged by SIMULATED workers (scripted browsers), not people")
    section = report.section("Question engaging")
    section.text("Who would you prefer to talk to for a long conversation?")
    section.figure(win_rate_heatmap(grid, models, interval_label="95% Clopper-Pearson"), "grid_engaging")
    section.table(matchups, "matchups_engaging", caption="Matchups")
    report.configuration("Run", {"seed": 0, "bootstrap": 1000})
    report.methods(methods_paragraph(data="...", unit="worker", ...))   # ends the page; report_methods.txt
    paths = report.write("out/")   # {"report.html": Path, "figures/grid_engaging.svg": Path, ...}
"""
from parlai_acute.report.document import Report, Section
from parlai_acute.report.estimands import estimands_section
from parlai_acute.report.figures import Chart, figure_pdf, figure_svg, new_figure
from parlai_acute.report.methods import methods_paragraph
from parlai_acute.report.plots import bar_plot, interval_plot, win_rate_heatmap
from parlai_acute.report.tables import display_table, esc, format_p, format_value, header, p_text, table_html, \
    table_latex, table_markdown

__all__ = ["Report", "Section", "estimands_section", "Chart", "new_figure", "figure_svg", "figure_pdf", "win_rate_heatmap", "bar_plot",
           "interval_plot", "methods_paragraph", "esc", "header", "format_p", "p_text", "format_value",
           "display_table", "table_html", "table_latex", "table_markdown"]
