"""Every report as a researcher sees it: each protocol's report, from a small simulated run, opened in
headless Chromium at 1280x800 and laid out for print (A4 landscape, what ``page.pdf`` prints).

Checked on the rendered page, so a change anywhere (the analysis adding a column, a longer caption,
the stylesheet) that breaks the layout fails here: no table wider than the page's content box, no
figure caption or figure text clipped, headers in words with the one rounding rule of
:mod:`parlai_acute.report.tables`, interval plots that draw the bars they promise or say why not, and
win-rate grids whose axes say what a cell is.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from parlai_acute import api
from parlai_acute.convai2.simulate import simulate_ratings
from parlai_acute.per_turn.simulate import simulate_turns
from parlai_acute.scripts.main import main
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute.acute.simulate import simulate_judgments

VIEWPORT = {"width": 1280, "height": 800}
#: A4 landscape less the report's 12 mm @page margins, in CSS pixels (96 per inch).
PRINT_WIDTH = round((297 - 2 * 12) / 25.4 * 96)
LONG = "a_model_with_a_rather_long_checkpoint_name"


def _analysed(tmp: Path, name: str, protocol: str, table) -> Path:
    cap = {"max_per_worker": 10} if protocol == "acute" else {}
    result = api.analyze(protocol, table, bootstrap=50, seed=0, **cap)
    return api.write_outputs(protocol, result, tmp / name)["report.html"]


def _interactive(labels: pd.DataFrame) -> pd.DataFrame:
    """Labels of replies in chats (interactive SSA inside per-turn runs): five turns per conversation."""
    number = labels["context_id"].str.removeprefix("ctx").astype(int)
    return labels.assign(source="interactive", conversation=labels["model"] + "-chat" + (number // 5).astype(str),
                         turn=number % 5)


def _judge_agreement(tmp: Path) -> Path:
    human = simulate_labels({LONG: (0.8, 0.5), "beta": (0.6, 0.3)}, 8, seed=0)
    judge = simulate_labels({LONG: (0.8, 0.5), "beta": (0.6, 0.3)}, 8, labels_per_item=1, seed=1)
    human.to_csv(tmp / "human.csv", index=False)
    judge.assign(worker="judge-smollm2").to_csv(tmp / "judge.csv", index=False)
    assert main(["judge", "agreement", "--protocol", "ssa", "--people", str(tmp / "human.csv"), "--judge-table",
                 str(tmp / "judge.csv"), "--bootstrap", "50", "--outdir", str(tmp / "judge_agreement")]) == 0
    return tmp / "judge_agreement" / "report.html"


def _metrics(tmp: Path) -> list[Path]:
    ratings = tmp / "ratings.csv"
    rows = [("Hi how are you?", "I'm fine thanks and you?", 5, "a", "I'm fine, thank you."),
            ("Hi how are you?", "the cat sat on the mat", 1, "b", "I'm fine, thank you."),
            ("Where do you live?", "I live in Paris", 4, "a", "I live in London."),
            ("Where do you live?", "bananas are yellow", 1, "b", "I live in London."),
            ("What is your job?", "I am a teacher", 5, "c", "I work as a nurse."),
            ("What is your job?", "ok", 2, "c", "I work as a nurse.")]
    pd.DataFrame(rows, columns=["context", "response", "rating", "system", "reference"]).to_csv(ratings, index=False)
    assert main(["metrics", "correlate", "--ratings", str(ratings), "--model-column", "system", "--metrics", "f1,rouge",
                 "--bootstrap", "50", "-o", str(tmp / "metrics_correlate")]) == 0
    data = tmp / "set.csv"
    data.write_text("context,response\nhi how are you?,i am fine\nwhat do you do?,i am a teacher\n"
                    "where are you from?,i am from paris\n", encoding="utf-8")
    replies = tmp / "replies.jsonl"
    replies.write_text("".join(json.dumps({"id": str(i), "reply": r}) + "\n"
                               for i, r in enumerate(["i am good", "i teach", "from paris"], 1)), encoding="utf-8")
    assert main(["metrics", "score", "--data", str(data), "--replies", str(replies), "--metrics", "f1,bleu",
                 "--bootstrap", "50", "-o", str(tmp / "metrics_score")]) == 0
    log = tmp / "chat.jsonl"
    log.write_text(json.dumps({"dialog": [[{"id": "localHuman", "text": "hi! how are you?"},
                                           {"id": LONG, "text": "Fine. What about you?"}]]}) + "\n", encoding="utf-8")
    assert main(["metrics", "logs", f"me={log}", "-o", str(tmp / "metrics_logs")]) == 0
    return [tmp / "metrics_correlate" / "report.html", tmp / "metrics_score" / "report.html",
            tmp / "metrics_logs" / "report.html"]


def _metrics_rank(tmp: Path) -> Path:
    """The rank report from scored contexts (what a model's log-probabilities give), without a model."""
    from parlai_acute.metrics.ranking import RankConfig, summarise
    from parlai_acute.metrics.reports import rank_report

    config = RankConfig(candidates=5, bootstrap=50)
    table = pd.DataFrame({"gold_logprob": [-12.0, -20.5, -8.25, -15.0], "gold_tokens": [6, 9, 4, 7],
                          "hit": [1, 0, 1, 0], "hit_with_parrot": [1, 0, 0, 0], "parrot_beats_gold": [0, 1, 1, 0]})
    rank_report(summarise(table, config), table, config, {"model": LONG, "tokenizer": "gpt2"}).write(tmp / "rank")
    return tmp / "rank" / "report.html"


def _multiref(tmp: Path) -> Path:
    from parlai_acute import api
    from parlai_acute.multiref.references import collection_records

    dialogues = [[{"text": f"Do you like topic {i}?", "responses": [f"Yes, I like topic {i} a lot.", "Not really.",
                                                                    "Sometimes, it depends.", f"I love {i}."]},
                  {"text": "Yes, every weekend."}] for i in range(4)]
    path = tmp / "collected.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in dialogues), encoding="utf-8")
    result = api.analyze("multiref", collection_records(path, "4R1W"), bootstrap=50)
    return api.write_outputs("multiref", result, tmp / "multiref")["report.html"]


def _status_and_ppi(tmp: Path) -> tuple[Path, Path]:
    """``status`` and ``ppi`` pages (``-o DIR``) of one simulated ACUTE run, and a judge of it."""
    from parlai_acute.acute.judgments import write_judgments

    people = simulate_judgments({LONG: 0.5, "beta": 0.0, "gamma": 0.0}, 600, seed=0, workers=60)
    judged = people.drop_duplicates("pair_id").assign(worker="judge")
    write_judgments(tmp / "people.csv", people[people["pair_id"].isin(judged["pair_id"].iloc[::3])])
    write_judgments(tmp / "judge.csv", judged)
    assert main(["status", "--table", str(tmp / "people.csv"), "--top-k", "1", "-o", str(tmp / "status")]) == 0
    assert main(["ppi", "--people", str(tmp / "people.csv"), "--judge-table", str(tmp / "judge.csv"),
                 "-o", str(tmp / "ppi")]) == 0
    return tmp / "status" / "report.html", tmp / "ppi" / "report.html"


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("reports")
    models = {LONG: 0.3, "beta": -0.3, "gamma": 0.0}
    pages = {
        "acute": _analysed(tmp, "acute", "acute", simulate_judgments(models, 60, seed=0, workers=20)),
        "acute with ties": _analysed(tmp, "acute-ties", "acute", simulate_judgments(
            models, 120, seed=0, workers=20, tie=1.0, both_bad=0.3)),
        "per-turn": _analysed(tmp, "per-turn", "per-turn", simulate_turns(
            {LONG: 0.6, "beta": 0.4, "gamma": 0.5}, "mm", "soba", dialogues=10, seed=0)),
        "per-turn, one dialogue": _analysed(tmp, "per-turn-1", "per-turn", simulate_turns(
            {"a": 0.6, "b": 0.4}, "pm", "soba", dialogues=1, seed=0)),
        "ssa static": _analysed(tmp, "ssa", "ssa", simulate_labels({LONG: (0.8, 0.5), "beta": (0.6, 0.3)}, 10, seed=0)),
        "ssa interactive": _analysed(tmp, "ssa-interactive", "ssa", _interactive(simulate_labels(
            {LONG: (0.8, 0.5), "beta": (0.6, 0.3)}, 10, seed=2))),
        "convai2": _analysed(tmp, "convai2", "convai2", simulate_ratings({LONG: 3.0, "beta": 2.5}, 10, 4, seed=0,
                                                                         rounded=True)),
        "judge agreement": _judge_agreement(tmp),
        "multiref": _multiref(tmp),
        "metrics rank": _metrics_rank(tmp),
    }
    pages["metrics correlate"], pages["metrics score"], pages["metrics logs"] = _metrics(tmp)
    pages["status"], pages["ppi"] = _status_and_ppi(tmp)
    return pages


@pytest.fixture(scope="module")
def page():
    from parlai_acute.mephisto_tasks.live.browser import browser

    with browser() as chromium:
        tab = chromium.new_page(viewport=VIEWPORT)
        yield tab
        tab.close()


MEASURE = r"""() => {
  const body = document.body, style = getComputedStyle(body);
  const box = body.getBoundingClientRect();
  const right = box.left + body.clientWidth - parseFloat(style.paddingRight);
  const seen = el => el.getBoundingClientRect().width > 0;
  const out = {right, viewport: document.documentElement.clientWidth, tables: [], captions: [], outside: [],
               headers: [], cells: [], figures: []};
  for (const t of document.querySelectorAll('table')) if (seen(t))
    out.tables.push({right: t.getBoundingClientRect().right, head: (t.querySelector('th') || {}).textContent});
  for (const th of document.querySelectorAll('th')) out.headers.push(th.textContent);
  for (const tr of document.querySelectorAll('table tr')) {
    const row = [...tr.children].map(c => c.textContent);
    const heads = [...tr.closest('table').querySelectorAll('th')].map(h => h.textContent);
    if (tr.querySelector('td')) row.forEach((v, i) => out.cells.push([heads[i] || '', v]));
  }
  for (const c of document.querySelectorAll('figcaption')) if (seen(c))
    out.captions.push({text: c.textContent.slice(0, 60), scroll: c.scrollWidth, client: c.clientWidth,
                       right: c.getBoundingClientRect().right});
  for (const svg of document.querySelectorAll('figure svg')) if (seen(svg)) {
    const s = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].map(t => t.textContent);
    out.figures.push({texts, bars: svg.querySelectorAll('g[id$="-bar"]').length, right: s.right});
    for (const t of svg.querySelectorAll('text')) {
      const r = t.getBoundingClientRect();
      if (r.width && (r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1))
        out.outside.push(t.textContent.slice(0, 60));
    }
  }
  return out;
}"""
SNAKE = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]")
TOO_PRECISE = re.compile(r"\d\.\d{4,}")
P_CELL = re.compile(r"(|< 0\.001|[01]\.\d{3})")
P_HEADER = re.compile(r"(^|[\s(])p($|[\s)])")


def check_layout(m: dict, where: str) -> None:
    """(a) tables and (b) captions and figure texts inside the page's content box."""
    assert m["right"] <= m["viewport"], where
    wide = [t for t in m["tables"] if t["right"] > m["right"] + 0.5]
    assert not wide, f"{where}: tables wider than the page ({m['right']:.0f} px): {wide}"
    clipped = [c for c in m["captions"] if c["scroll"] > c["client"] or c["right"] > m["right"] + 0.5]
    assert not clipped, f"{where}: clipped figure captions {clipped}"
    assert not m["outside"], f"{where}: figure text outside its figure {m['outside']}"
    assert all(f["right"] <= m["right"] + 0.5 for f in m["figures"]), where


@pytest.mark.parametrize("name", ["acute", "acute with ties", "per-turn", "per-turn, one dialogue", "ssa static", "ssa interactive",
                                  "convai2", "judge agreement", "multiref", "metrics correlate", "metrics score",
                                  "metrics logs", "metrics rank", "status", "ppi"])
def test_the_report_reads_well_at_1280px_and_in_print(reports, page, name):
    html = reports[name]
    page.set_viewport_size(VIEWPORT)
    page.emulate_media(media="screen")
    page.goto(html.resolve().as_uri())
    m = page.evaluate(MEASURE)
    assert m["tables"] and m["headers"], name
    check_layout(m, f"{name} at 1280 px")
    # (c) headers in words, numbers rounded by the one rule
    assert not [h for h in m["headers"] if SNAKE.search(h)], f"{name}: snake_case headers"
    assert not [v for _, v in m["cells"] if TOO_PRECISE.fullmatch(v.split(" [")[0])], f"{name}: unrounded numbers"
    p_cells = [(h, v) for h, v in m["cells"] if P_HEADER.search(h)]
    assert all(P_CELL.fullmatch(v) for _, v in p_cells), f"{name}: p-values not as '0.008' or '< 0.001': {p_cells}"
    for figure in m["figures"]:
        text = " ".join(" ".join(figure["texts"]).split())
        # (d) a figure that promises bars draws them; one that cannot draw any says so
        if "bars:" in text and "interval" in text and "row model" not in text:
            assert figure["bars"] > 0, f"{name}: a figure promises interval bars and draws none: {text[:200]}"
        # (e) a win-rate grid says what a cell is
        assert "winner" not in text and "loser" not in text, name
        if "row model" in text:
            assert "column model" in text and "% of their" in text, name
    if name == "per-turn, one dialogue":
        rates = [f for f in m["figures"] if "pick rate" in " ".join(f["texts"])]
        assert rates and all(f["bars"] == 0 for f in rates)
        said = " ".join(" ".join(rates[0]["texts"]).split())
        assert "no interval bars" in said and "1 dialogue; a dialogue bootstrap needs 5 or more" in said

    # printed: the same checks on the print layout, then the PDF itself
    page.emulate_media(media="print")
    page.set_viewport_size({"width": PRINT_WIDTH, "height": 800})
    check_layout(page.evaluate(MEASURE), f"{name} printed")
    pdf = page.pdf(prefer_css_page_size=True, print_background=True)
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") >= 1
