"""Per-annotator ratings for ``metrics correlate`` (issue 24): the long table, its aggregation,
the annotators' agreement beside the correlations, and USR's released layout (a fixture written
here in that layout, tests/fixtures/usr)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from parlai_acute.errors import UserError
from parlai_acute.metrics.ratings import rated_replies, usr_ratings
from parlai_acute.scripts.main import main

USR = Path(__file__).resolve().parents[1] / "fixtures" / "usr" / "pc_usr_data.json"


def test_interval_alpha_equals_the_krippendorff_package_with_missing_ratings():
    import krippendorff

    from parlai_acute.stats.agreement import interval_agreement

    rng = np.random.default_rng(4)
    truth = rng.integers(1, 6, 40)
    data = np.clip(truth[None, :] + rng.integers(-1, 2, (3, 40)), 1, 5).astype(float)
    data[0, :5] = np.nan  # some replies rated by two annotators only
    data[1:, 39] = np.nan  # and one by a single annotator: not pairable
    cells = [(i, data[r, i]) for r in range(3) for i in range(40) if not np.isnan(data[r, i])]
    got = interval_agreement([i for i, _ in cells], [v for _, v in cells], resamples=300, seed=0)
    assert got["krippendorff_alpha"] == pytest.approx(krippendorff.alpha(reliability_data=data,
                                                                         level_of_measurement="interval"))
    assert got["items"] == 39 and got["alpha_ci_low"] < got["krippendorff_alpha"] < got["alpha_ci_high"]
    same = interval_agreement([1, 1, 2, 2], [3, 3, 3, 3])
    assert np.isnan(same["krippendorff_alpha"]) and "undefined" in same["note"]


def rows(*ratings):
    return [{"item": item, "context": "hi", "response": reply, "model": model, "annotator": who, "rating": str(r),
             "reference": "hello"} for item, reply, model, who, r in ratings]


@pytest.mark.parametrize("how, expected", [("mean", [2.0, 5.0]), ("median", [1.0, 5.0])])
def test_one_replys_rows_become_one_rating_by_the_chosen_aggregate(how, expected):
    table = rows(("1", "yo", "a", "u1", 1), ("1", "yo", "a", "u2", 1), ("1", "yo", "a", "u3", 4),
                 ("1", "hello there", "b", "u1", 5))
    replies, per_annotator = rated_replies(table, [f"row {i}" for i in range(4)], aggregate=how)
    assert list(replies["rating"]) == expected and list(replies["annotators"]) == [3, 1]
    assert len(per_annotator) == 4


@pytest.mark.parametrize("change, words", [
    (lambda t: t[1].update(annotator="u1"), "annotator 'u1' rated this reply already"),
    (lambda t: t[1].update(reference="other"), "the references differ"),
    (lambda t: t[1].update(rating="n/a"), "is not a finite number"),
])
def test_a_wrong_row_is_one_line_naming_it(change, words):
    table = rows(("1", "yo", "a", "u1", 1), ("1", "yo", "a", "u2", 2))
    change(table)
    with pytest.raises(UserError) as err:
        rated_replies(table, ["row 1", "row 2"])
    assert words in str(err.value) and "row 2" in str(err.value) and "\n" not in str(err.value)


def test_usr_layout_leaves_the_ground_truth_as_the_reference():
    data = json.loads(USR.read_text())
    table = usr_ratings(USR)
    assert len(table) == 3 * 4 * len(data) and "Original Ground Truth" not in set(table["model"])
    first = data[0]["responses"]
    assert set(table[table["item"] == "1"]["reference"]) == {first[0]["response"].strip()}
    assert list(table[(table["item"] == "1") & (table["model"] == first[1]["model"])]["rating"]) == first[1]["Overall"]


def test_correlate_on_per_annotator_ratings_equals_aggregating_by_hand(tmp_path, capsys):
    long = usr_ratings(USR)
    long.to_csv(tmp_path / "long.csv", index=False)
    by_hand = (long.groupby(["item", "model", "response"], sort=False)
               .agg(context=("context", "first"), reference=("reference", "first"), rating=("rating", "median"))
               .reset_index())
    by_hand.to_csv(tmp_path / "by_hand.csv", index=False)
    # the BLEU docs/reproductions.md uses for USR (unsmoothed, untokenised: coco-caption's counts)
    common = ["--metrics", "f1,bleu", "--bleu-smoothing", "none", "--bleu-tokenize", "none", "--bootstrap", "100"]
    assert main(["metrics", "correlate", "--ratings", str(tmp_path / "long.csv"), "--aggregate", "median",
                 "-o", str(tmp_path / "long"), *common]) == 0
    out = capsys.readouterr().out
    assert "72 per-annotator ratings of 24 replies by 3 annotators" in out and "by the median" in out
    assert "Krippendorff's alpha (interval)" in out and "p=" in out
    assert main(["metrics", "correlate", "--ratings", str(tmp_path / "by_hand.csv"), "-o", str(tmp_path / "hand"),
                 *common]) == 0
    assert "one per reply (24 replies" in capsys.readouterr().out
    for level in ("response", "system"):
        got = pd.read_csv(tmp_path / "long" / f"correlations_{level}.csv")
        assert got.equals(pd.read_csv(tmp_path / "hand" / f"correlations_{level}.csv"))
    got = pd.read_csv(tmp_path / "long" / "correlations_response.csv").set_index("metric")
    assert 0 <= got.loc["f1", "pearson_single_p"] <= 1
    run = json.loads((tmp_path / "long" / "run.json").read_text())
    agreement = run["ratings_aggregation"]["annotator_agreement"]
    assert run["ratings_aggregation"]["aggregate"] == "median" and agreement["level"] == "interval"
    ratings = long.pivot_table(index=["item", "model"], columns="annotator", values="rating").to_numpy().T
    import krippendorff
    assert agreement["krippendorff_alpha"] == pytest.approx(krippendorff.alpha(reliability_data=ratings,
                                                                               level_of_measurement="interval"))


def test_p_values_are_scipys():
    from parlai_acute.metrics import correlation

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"model": [f"m{k % 5}" for k in range(50)], "rating": rng.normal(size=50)})
    table["x_single"] = table["rating"] + rng.normal(size=50)
    row = correlation.response_level(table, ["x_single"], resamples=50).iloc[0]
    assert row["pearson_p"] == pytest.approx(stats.pearsonr(table["x_single"], table["rating"]).pvalue)
    assert row["spearman_p"] == pytest.approx(stats.spearmanr(table["x_single"], table["rating"]).pvalue)


def test_system_level_p_values_are_exact_over_few_systems():
    """Three systems in the same order by metric and by people: chance alone gives that (or its
    mirror) in 2 of the 6 pairings, so p = 1/3, not scipy's t approximation's ~0."""
    from parlai_acute.metrics import correlation

    table = pd.DataFrame({"model": ["a", "a", "b", "b", "c", "c"], "rating": [1, 2, 3, 3, 5, 6],
                          "x_single": [0.1, 0.2, 0.25, 0.3, 0.9, 0.8]})
    row = correlation.system_level(table, ["x_single"], resamples=0).iloc[0]
    assert row["spearman"] == 1 and row["spearman_p"] == pytest.approx(1 / 3)
    # Pearson: the model means (0.15, 0.275, 0.85) are unevenly spaced, so the reversed pairing's |r| is
    # smaller than the observed one: only the observed pairing of the 6 is as extreme
    assert row["pearson_p"] == pytest.approx(1 / 6)
    many = pd.DataFrame({"model": [f"m{k}" for k in range(12)], "rating": np.arange(12.0)})
    many["x_single"] = many["rating"] + np.sin(np.arange(12))
    row = correlation.system_level(many, ["x_single"], resamples=0).iloc[0]
    assert row["pearson_p"] == pytest.approx(stats.pearsonr(many["x_single"], many["rating"]).pvalue)
