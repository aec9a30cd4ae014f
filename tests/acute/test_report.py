"""The HTML report: self-contained, escaped, with the grid and the ranking drawn as SVG."""
from html.parser import HTMLParser

import pytest

from parlai_acute.acute.analysis import AnalysisConfig, analyze, write_outputs
from parlai_acute.stats.simulate import simulate_judgments

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
    return paths["report.html"].read_text(encoding="utf-8"), result


def test_worker_text_and_model_names_are_text_not_markup(report):
    html, _ = report
    parser = Collect()
    parser.feed(html)
    assert "script" not in parser.tags and "img" not in parser.tags and "b" not in parser.tags
    assert not any(name.startswith("on") for name, _ in parser.attrs)
    text = "".join(parser.text)
    assert EVIL_REASON in text  # shown verbatim, as text
    assert EVIL_MODEL in text
    assert "&lt;script&gt;" in html


def test_self_contained(report):
    html, _ = report
    parser = Collect()
    parser.feed(html)
    for name, value in parser.attrs:
        if name in ("src", "href"):
            assert not value.startswith(("http:", "https:", "//")), value
    assert "<link" not in html and "@import" not in html


def test_heatmap_and_ranking_plots(report):
    html, result = report
    parser = Collect()
    parser.feed(html)
    assert parser.tags.count("svg") == 2  # one question: heatmap + ranking
    assert parser.tags.count("circle") == 3  # one point per model
    q = result.questions[0]
    cell = q.grid.iloc[0]
    assert f"{cell.wins}/{cell.n}" in "".join(parser.text)
    assert f"{cell.winrate:.0f}%{cell.mark}" in "".join(parser.text)
    assert "Judgments per worker" in html and "Reasons by matchup" in html
    assert q.ranking.iloc[0]["model"] == EVIL_MODEL  # strongest model listed first


def test_reasons_per_matchup_are_capped_in_the_page(report):
    from parlai_acute.acute.report import MAX_REASONS_SHOWN

    html, result = report
    reasons = result.reasons()
    biggest = reasons.groupby("matchup").size().max()
    assert biggest > MAX_REASONS_SHOWN
    assert f"{biggest - MAX_REASONS_SHOWN} more in reasons.csv" in html
