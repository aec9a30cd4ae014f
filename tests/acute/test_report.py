"""The ACUTE-Eval report: self-contained, escaped, the grid and the ranking drawn as inline SVG
and exported (SVG/PDF figures, LaTeX/Markdown tables) beside the page."""
import math
from html.parser import HTMLParser

import pytest

from parlai_acute.acute.analysis import AnalysisConfig, analyze, write_outputs
from parlai_acute.acute.simulate import simulate_judgments

EVIL_REASON = "<script>alert('x')</script> & <img src=x onerror=alert(1)>"
EVIL_MODEL = 'bot"<b>bold</b>'


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    df = simulate_judgments({"plain": 0.0, EVIL_MODEL: 1.0, "third": 0.5}, 900, seed=5, workers=300)
    df.loc[df.index[::10], "reason"] = EVIL_REASON
    result = analyze(df, AnalysisConfig(bootstrap=100, seed=1))
    paths = write_outputs(result, tmp_path_factory.mktemp("out"))
    return paths["report.html"].read_text(encoding="utf-8"), result, paths


def test_worker_text_and_model_names_are_text_not_markup(report):
    html, *_ = report
    parser = Collect()
    parser.feed(html)
    assert "script" not in parser.tags and "img" not in parser.tags and "b" not in parser.tags
    assert not any(name.startswith("on") for name, _ in parser.attrs)
    text = "".join(parser.text)
    assert EVIL_REASON in text  # shown verbatim, as text
    assert EVIL_MODEL in text
    assert "&lt;script&gt;" in html


def test_self_contained(report):
    html, *_ = report
    parser = Collect()
    parser.feed(html)
    for name, value in parser.attrs:
        if name in ("src", "href"):
            assert not value.startswith(("http:", "https:", "//")), value
    assert "<link" not in html and "@import" not in html


def test_heatmap_and_ranking_plots(report):
    html, result, _ = report
    parser = Collect()
    parser.feed(html)
    assert parser.tags.count("svg") == 2  # one question: heatmap + ranking
    q = result.questions[0]
    text = "".join(parser.text)
    for model in q.ranking.itertuples():  # one hover text per model on the ranking plot, bounds rounded outward
        low, high = math.floor(model.ci_low * 1000) / 1000, math.ceil(model.ci_high * 1000) / 1000
        assert f"{model.model}: {model.strength:.3f} [{low:.3f}, {high:.3f}]" in text
    cell = q.grid.iloc[0]
    assert f"{cell.wins}/{cell.n}" in text
    assert f"{cell.winrate:.0f}%{cell.mark}" in text
    assert "column model" in text and "row model" in text and "loser (row)" not in text
    assert "Judgments per worker" in html and "Reasons by matchup" in html
    assert q.ranking.iloc[0]["model"] == EVIL_MODEL  # strongest model listed first


def test_reasons_per_matchup_are_capped_in_the_page(report):
    from parlai_acute.acute.report import MAX_REASONS_SHOWN

    html, result, _ = report
    reasons = result.reasons()
    biggest = reasons.groupby("matchup").size().max()
    assert biggest > MAX_REASONS_SHOWN
    assert f"{biggest - MAX_REASONS_SHOWN} more in reasons.csv" in html


def test_figures_and_tables_are_exported_beside_the_page(report):
    _, result, paths = report
    key = result.questions[0].question_key
    for name in (f"figures/winrate_grid_{key}.svg", f"figures/winrate_grid_{key}.pdf", f"figures/ranking_{key}.svg",
                 f"figures/ranking_{key}.pdf", f"tables/matchups_{key}.tex", f"tables/matchups_{key}.md",
                 f"tables/ranking_{key}.tex", f"tables/ranking_{key}.md"):
        assert paths[name].is_file() and paths[name].stat().st_size > 0, name
