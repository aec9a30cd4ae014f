"""One result shape for every protocol (issue 22, "One study, one answer"): each protocol's analysis
result has the same four members -- ``summary()`` (the protocol's ``estimands.headline``), ``meta()``,
``tables()`` and ``warnings()`` -- its outputs are written under one name per kind of output
(``summary.csv`` equal to ``summary()``, ``results.json``, ``run.json``, ``report.html``), and every
report opens with the estimands it reports."""
from __future__ import annotations

import html
import json
import math
import re

import numpy as np
import pandas as pd
import pytest

import parlai_acute
from parlai_acute import api
from parlai_acute.errors import UserError
from parlai_acute.files import json_ready
from parlai_acute.registry import PROTOCOLS, protocol
from parlai_acute.report import Report, estimands_section
from parlai_acute.report.estimands import range_text
from parlai_acute.result import MEMBERS
from parlai_acute.stats.estimand import HEADLINE, Estimand, describe
from test_api import TABLES as API_TABLES

WORDS = "the a cat dog likes hates runs sleeps in on my your red blue big small today now".split()


def references(seed: int = 0) -> list[dict]:
    """A small multi-reference collection: two modes, three contexts each, four replies per context."""
    rng = np.random.default_rng(seed)
    say = lambda n: " ".join(rng.choice(WORDS, n))  # noqa: E731
    contexts = {c: (f"hello {c}\n{say(4)}", say(6)) for c in range(3)}
    return [{"mode": mode, "context_id": f"c{c}", "context": contexts[c][0], "original": contexts[c][1],
             "reply": say(int(rng.integers(3, 8))), "worker": f"w{r if mode == '1R4W' else c}"}
            for mode in ("4R1W", "1R4W") for c in range(3) for r in range(4)]


TABLES = {**API_TABLES, "multiref": references}
OPTIONS = {"acute": {"max_per_worker": 10}}
#: one file name per kind of output, in every protocol that has that kind
KINDS = {"pairs.csv": {"acute", "per-turn", "ssa", "convai2"}, "winrate_grid.csv": {"acute", "per-turn"},
         "models.csv": {"per-turn", "ssa", "convai2"}, "workers.csv": {"acute", "per-turn", "ssa", "convai2"}}
#: the names these kinds had before they were one
OLD_NAMES = {"grid.csv", "matchups.csv", "differences.csv", "likert.csv", "annotators.csv", "winrates.json",
             "agreement.json"}


def strict(text: str):
    def bad(constant):
        raise AssertionError(f"non-strict JSON constant {constant}")
    return json.loads(text, parse_constant=bad)


@pytest.fixture(scope="module")
def results():
    return {name: api.analyze(name, TABLES[name](), warn=False, bootstrap=50, seed=3, **OPTIONS.get(name, {}))
            for name in PROTOCOLS}


def test_every_protocol_is_covered():
    assert set(TABLES) == set(PROTOCOLS)


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_every_result_has_the_four_members_with_the_same_types(results, name):
    result = results[name]
    assert all(callable(getattr(result, member, None)) for member in MEMBERS), name
    module = protocol(name).estimands_module()
    summary = result.summary()
    assert isinstance(summary, pd.DataFrame) and list(summary.columns) == HEADLINE and len(summary)
    pd.testing.assert_frame_equal(summary, module.headline(result))
    meta = result.meta()
    assert isinstance(meta, dict) and meta["analysis"] == name and meta["seed"] == 3
    assert isinstance(meta["config"], dict) and meta["config"]["bootstrap"] == 50
    assert meta["parlai_acute_version"] == parlai_acute.__version__
    assert meta["estimands"] == describe(module.ESTIMANDS)
    tables = result.tables()
    assert isinstance(tables, dict) and next(iter(tables)) == "summary"
    assert all(isinstance(k, str) and isinstance(v, pd.DataFrame) for k, v in tables.items())
    warnings = result.warnings()
    assert isinstance(warnings, list) and all(isinstance(w, str) for w in warnings)


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_every_summary_row_is_a_named_estimand_inside_its_range_or_says_why_not(results, name):
    estimands = protocol(name).estimands_module().ESTIMANDS
    for row in results[name].summary().to_dict("records"):
        e = estimands[row["measure"]]  # every reported measure is defined
        assert row["interval"], row
        has = math.isfinite(row["low"]) and math.isfinite(row["high"])
        if has:
            assert e.low - 1e-9 <= row["low"] < row["high"] <= e.high + 1e-9 and row["why_no_interval"] == "", row
        else:
            assert row["why_no_interval"].strip(), row
        if math.isfinite(row["estimate"]):
            assert e.low - 1e-9 <= row["estimate"] <= e.high + 1e-9, row


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_write_outputs_writes_summary_csv_equal_to_the_summary_and_one_name_per_kind(results, name, tmp_path):
    result = results[name]
    paths = api.write_outputs(name, result, tmp_path, report=True)
    tables = result.tables()
    assert {f"{stem}.csv" for stem in tables} | {"results.json", "run.json", "report.html"} <= set(paths)
    assert not OLD_NAMES & set(paths), sorted(OLD_NAMES & set(paths))
    for kind, protocols in KINDS.items():
        assert (kind in paths) == (name in protocols), (kind, name)
    written = pd.read_csv(paths["summary.csv"], float_precision="round_trip", keep_default_na=False,
                          na_values={c: [""] for c in ("estimate", "low", "high")},
                          dtype={c: str for c in ("group", "comparison", "measure", "interval", "why_no_interval")})
    pd.testing.assert_frame_equal(written, result.summary(), check_dtype=False)
    saved = strict(paths["results.json"].read_text(encoding="utf-8"))
    assert saved["meta"]["analysis"] == name and saved["estimands"] == json_ready(result.meta()["estimands"])
    assert len(saved["summary"]) == len(written) and saved["summary"][0]["measure"] == written["measure"][0]
    run = strict(paths["run.json"].read_text(encoding="utf-8"))
    assert run["analysis"] == name and "summary.csv" in run["outputs"] and run["estimands"] == saved["estimands"]
    page = paths["report.html"].read_text(encoding="utf-8")
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert headings[0] == "What is measured", headings[:3]  # the estimands come first
    for e in result.estimands():
        assert html.escape(e.measure, quote=True) in page
    assert (tmp_path / "tables" / "estimands.tex").is_file()


def test_watching_or_correcting_a_protocol_without_observations_is_one_line():
    for name in ("convai2", "multiref"):
        with pytest.raises(UserError, match=rf"^the {name} protocol's estimands are not read row by row") as info:
            protocol(name).estimands_module("observe")
        assert "\n" not in str(info.value) and "acute, per-turn, ssa" in str(info.value)
    with pytest.raises(UserError, match="api.analyze\\('multiref', table\\).summary\\(\\)"):
        api.estimates("multiref", references())


def test_convai2_estimates_from_the_table_are_the_analysis_means(results):
    found = api.estimates("convai2", TABLES["convai2"]())
    summary = results["convai2"].summary().set_index(["group", "comparison", "measure"])
    assert len(found) and set(found["measure"]) <= {"mean score", "persona detection rate"}
    for r in found.itertuples(index=False):
        assert r.estimate == pytest.approx(summary.loc[(r.group, r.comparison, r.measure), "estimate"], abs=1e-12)


def test_the_estimands_section_comes_first_and_says_each_range_in_words():
    report = Report("t")
    report.section("Results").text("...")
    estimands_section(report, [Estimand("rate", "share of wins", "pooled", "worker", 0.0, 1.0),
                               Estimand("score", "quality", "posterior mean", "worker", float("-inf"), float("inf"))])
    assert [s.heading for s in report.sections] == ["What is measured", "Results"]
    page = report.render_html()
    assert "0 to 1" in page and "unbounded" in page and "posterior mean" in page
    assert range_text(0.0, float("inf")) == "0 or more" and range_text(-3.0, 3.0) == "-3 to 3"
