"""Static SSA status and stop rule when workers label replies to several contexts (issue 23):
workers x contexts crossed, both sampled.

* A/A, peeking after every 10 contexts: the disjoint rates over contexts (workers held fixed,
  what status used) declare a difference between equal models above alpha + 2 points; the rule
  status and the live stop rule now use (the two-facet sequence with the analysis' split variance,
  and the disjoint rates) at most alpha + 2 points;
* the simulation's vectorised one-facet sequence is status' own, number for number;
* the two-facet sequence's last look has the analysis' standard error (the same split variance);
* where each worker labels one context, status' numbers are unchanged (one facet); where workers
  cross contexts, each model's rate has a two-facet interval too, its sequence over contexts beside it;
* status and the stop rule name the design and the procedure and decide a clear difference.
"""
from __future__ import annotations

import numpy as np
import pytest

from parlai_acute.monitoring.status import status, status_lines
from parlai_acute.monitoring.stopping import StopRule
from parlai_acute.ssa.estimands import crossed_labels
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute.stats.crossed_designs import binary_mixture_sequence, peeking_ssa, peeking_ssa_rate
from parlai_acute.stats.inference import difference_split_tests
from parlai_acute.stats.sequential import confidence_sequence, split_sequence

ALPHA = 0.05


def test_peeking_at_equal_models_with_workers_across_contexts_stops_at_most_alpha_plus_two_points():
    # static SSA: 200 contexts, two models' replies each labelled by 5 of a pool of 6 workers (worker x model
    # taste sd 1.0), looked at after every 10 contexts
    rates = peeking_ssa(200, 6, 0.0, 400, seed=23, every=10, alpha=ALPHA)
    assert rates["one-facet"]["rate"] > ALPHA + 0.02  # a verdict about these 6 workers, not the models
    assert rates["stop rule"]["rate"] <= ALPHA + 0.02
    assert rates["two-facet"]["rate"] <= ALPHA + 0.02


def test_a_rate_watched_after_every_10_contexts_covers_the_population_rate():
    # one model's share, 200 contexts labelled by a pool of 6 workers: the sequence over contexts is about them
    miss = peeking_ssa_rate(200, 6, 300, seed=31, every=10, alpha=ALPHA)
    assert miss["two-facet"] <= ALPHA + 0.02 and miss["one-facet"] > 3 * ALPHA


def test_the_simulations_one_facet_sequence_is_status_own():
    x = (np.random.default_rng(3).random((12, 90)) < 0.65).astype(float)
    lower, upper = binary_mixture_sequence(x, 0.025)
    for r in range(len(x)):
        cs = confidence_sequence(x[r], 0.025)
        assert np.allclose(cs["lower"], lower[r]) and np.allclose(cs["upper"], upper[r])


def _crossed(models, contexts=120, workers=12, seed=0):
    return simulate_labels(models, contexts=contexts, labels_per_item=3, workers=workers, seed=seed)


def test_the_last_look_has_the_analysis_split_standard_error():
    labels = _crossed({"a": (0.6, 0.5), "b": (0.7, 0.5)})
    arrays = crossed_labels(labels)
    names = arrays["names"]
    is_b = names == "b"
    q = 0
    # every context at once: one look holding all items
    seq = split_sequence(np.zeros(len(names), int), is_b, arrays["values"][:, q], arrays["context"],
                         arrays["label_item"], arrays["worker"], arrays["votes"][:, q], arrays["pivots"][:, q],
                         [1], ALPHA, need=2)
    fixed = difference_split_tests(np.zeros(len(names), np.int64), is_b, arrays["values"][:, q], arrays["context"],
                                   arrays["label_item"], arrays["worker"], arrays["parts"][:, q], 1)
    assert seq["estimate"][0, 0] == pytest.approx(fixed["estimate"][0])
    assert seq["se"][0, 0] == pytest.approx(fixed["se"][0])
    assert seq["df"][0, 0] == pytest.approx(fixed["df"][0])
    assert seq["lower"][0, 0] < fixed["low"][0] and seq["upper"][0, 0] > fixed["high"][0]  # wider: every look


def test_status_names_the_design_and_decides_pairs_over_both_facets():
    labels = _crossed({"good": (0.9, 0.7), "bad": (0.3, 0.2)})
    result = status(labels)
    pairs = [r for r in result["rows"] if r.get("model_b")]
    assert result["design"]["facets"][1] == "worker" and result["design"]["two_facet"] == len(pairs) == 2
    for row in pairs:
        assert row["procedure"].startswith("two-facet asymptotic confidence sequence")
        assert "disjoint" in row["one_facet"]["procedure"] and row["levels"] == 12
        assert row["decided"] == row["one_facet"]["decided"] == "above" and row["lower"] > 0
    text = "\n".join(status_lines(result))
    assert "contexts and workers both as sampled" in text and "120 contexts x 12 workers" in text
    rule = StopRule("ssa", {"alpha": ALPHA}, [("bad", "good")])
    decision = rule.add(labels.to_dict("records"))
    assert decision["stopped"] == "decided" and "two-facet" in decision["method"]


def test_too_few_workers_give_no_verdict_about_the_models():
    row = next(r for r in status(_crossed({"good": (0.9, 0.7), "bad": (0.3, 0.2)}, workers=4))["rows"]
               if r.get("model_b"))
    assert row["decided"] == "undecided" and row["one_facet"]["decided"] == "above"
    assert "4 workers: a verdict about the models needs at least" in row["note"]
    assert (row["lower"], row["upper"]) == (-1.0, 1.0)


def test_one_worker_per_context_keeps_the_one_facet_numbers():
    labels = _crossed({"good": (0.8, 0.6), "bad": (0.5, 0.4)}, workers=12, seed=1)
    nested = labels.assign(worker=labels["worker"] + "@" + labels["context_id"])  # each worker one context
    rows = {(r["group"], r["comparison"]): r for r in status(nested)["rows"]}
    pair = rows[("sensibleness", "good vs bad")]
    assert "one_facet" not in pair and status(nested)["design"]["two_facet"] == 0
    good, bad = rows[("sensibleness", "good")], rows[("sensibleness", "bad")]
    assert pair["lower"] == pytest.approx(good["lower"] - bad["upper"])
    assert pair["upper"] == pytest.approx(good["upper"] - bad["lower"])
    # crossed: the sequence over contexts is kept, number for number, as one_facet beside the two-facet one
    crossed = {(r["group"], r["comparison"]): r for r in status(labels)["rows"]}
    rate = crossed[("sensibleness", "good")]
    assert "one_facet" not in good and rate["one_facet"]["lower"] == good["lower"]
    assert rate["one_facet"]["upper"] == good["upper"] and rate["procedure"].startswith("two-facet")


def test_a_rate_interval_over_both_facets_is_valid_at_every_look_and_says_when_it_cannot_be():
    labels = _crossed({"good": (0.9, 0.7), "bad": (0.3, 0.2)})
    rows = {(r["group"], r["comparison"]): r for r in status(labels)["rows"]}
    rate = rows[("sensibleness", "good")]
    assert 0 <= rate["lower"] < rate["estimate"] < rate["upper"] <= 1 and rate["levels"] == 12
    few = {(r["group"], r["comparison"]): r for r in status(_crossed({"good": (0.9, 0.7), "bad": (0.3, 0.2)},
                                                                     workers=4))["rows"]}
    rate = few[("sensibleness", "good")]
    assert (rate["lower"], rate["upper"]) == (0.0, 1.0) and "4 workers" in rate["note"]
