"""``ssa power``: variance components of a static SSA pilot whose workers and contexts are crossed,
and the workers and contexts a design needs (issue 23, item 3)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from parlai_acute.errors import UserError
from parlai_acute.ssa import power as ssa_power
from parlai_acute.ssa.labels import labels_table, write_labels


def crossed_pilot(worker_half: float, context_half: float, workers: int = 100, contexts: int = 200,
                  labels_per_item: int = 5, seed: int = 0) -> pd.DataFrame:
    """Two models answer every context; each reply is labelled by ``labels_per_item`` distinct workers
    drawn from the pool. P(sensible) = 0.5 +- (u_worker + v_context) (+ for model b, - for a), with
    u ~ U(-worker_half, worker_half) and v ~ U(-context_half, context_half): a worker's taste for b
    over a and a context that suits b, of variances worker_half^2 / 3 and context_half^2 / 3 on the
    signed scale the plan uses."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(-worker_half, worker_half, workers)
    v = rng.uniform(-context_half, context_half, contexts)
    rows = []
    for c in range(contexts):
        for model, sign in (("a", -1.0), ("b", 1.0)):
            chosen = rng.choice(workers, labels_per_item, replace=False)
            for w in chosen:
                sensible = bool(rng.random() < 0.5 + sign * (u[w] + v[c]))
                rows.append({"item": f"{model}:{c}", "model": model, "worker": f"w{w}", "sensible": sensible,
                             "specific": sensible and bool(rng.random() < 0.6), "source": "static",
                             "context_id": f"ctx{c}", "decision_seconds": 20.0 + w % 7})
    return labels_table(rows)


def test_components_recover_the_simulated_worker_and_context_variances():
    for worker_half, context_half, seed in ((0.3, 0.15, 1), (0.15, 0.3, 2)):
        comp = ssa_power.pilot_components(crossed_pilot(worker_half, context_half, seed=seed))
        true_w, true_c = worker_half ** 2 / 3, context_half ** 2 / 3
        assert 0.5 * true_w < comp["worker"] < 2 * true_w, (comp, true_w)
        assert 0.5 * true_c < comp["context"] < 2 * true_c, (comp, true_c)
        assert comp["residual"] > 0.15  # binary labels: most of the variance is the label's own noise
        assert comp["workers"] == 100 and comp["contexts"] == 200 and comp["pairs"] == 1


def test_no_worker_or_context_variance_gives_components_near_zero():
    comp = ssa_power.pilot_components(crossed_pilot(0.0, 0.0, seed=3))
    assert comp["worker"] < 0.004 and comp["context"] < 0.01
    assert comp["residual"] == pytest.approx(0.25, abs=0.02)


def test_more_worker_variance_asks_for_more_workers():
    base = {"total": 0.25, "residual": 0.22, "context": 0.005, "per_worker": 20.0}
    low = ssa_power.crossed_table([0.1], {**base, "worker": 0.005}, contexts=[200])[0]["rows"][0]
    high = ssa_power.crossed_table([0.1], {**base, "worker": 0.03}, contexts=[200])[0]["rows"][0]
    assert high["workers"] > low["workers"] >= 6
    # and from simulated pilots, at the same number of contexts
    few = ssa_power.crossed_table([0.1], ssa_power.pilot_components(crossed_pilot(0.05, 0.1, seed=4)),
                                  contexts=[500])[0]["rows"][0]
    many = ssa_power.crossed_table([0.1], ssa_power.pilot_components(crossed_pilot(0.35, 0.1, seed=4)),
                                   contexts=[500])[0]["rows"][0]
    assert many["workers"] > few["workers"]


def test_more_context_variance_raises_the_contexts_floor():
    plans = [ssa_power.crossed_table([0.1], ssa_power.pilot_components(crossed_pilot(0.1, half, seed=5)))[0]
             for half in (0.05, 0.35)]
    assert plans[1]["contexts_min"] > plans[0]["contexts_min"] >= 6
    # below the floor no number of workers is enough, and the row says how many contexts are
    short = [r for r in plans[1]["rows"] if r["contexts"] < plans[1]["contexts_min"]]
    assert short and all(r["workers"] is None for r in short)
    assert f"at least {plans[1]['contexts_min']} contexts are needed" in short[-1]["why"]


def test_neither_facet_goes_below_what_the_test_needs():
    comp = {"total": 0.25, "worker": 0.0, "context": 0.0, "residual": 0.25, "per_worker": 400.0}
    plan = ssa_power.crossed_table([0.4], comp, contexts=[5, 10])[0]
    assert plan["contexts_min"] == 6
    assert plan["rows"][0]["workers"] is None and "fewer than 6 contexts" in plan["rows"][0]["why"]
    assert plan["rows"][1]["workers"] >= 6


def test_without_a_pilot_the_normal_approximation_labels_per_model():
    table = ssa_power.sample_size_table([0.1, 0.2])
    assert table["labels_per_model"].iloc[0] > 3 * table["labels_per_model"].iloc[1]
    assert 380 <= table["labels_per_model"].iloc[0] <= 400  # two rates 0.5 vs 0.6 at 80% power: about 388
    with pytest.raises(UserError) as err:
        ssa_power.sample_size_table([0.6])
    assert err.value.params == ("delta", "base_rate") and "\n" not in str(err.value)


def test_bad_pilots_say_which_parameter_in_one_line():
    pilot = crossed_pilot(0.1, 0.1, workers=20, contexts=12, labels_per_item=3, seed=6)
    one_model = pilot[pilot["model"] == "a"]
    # every worker labels replies to one context only: workers do not repeat across contexts
    nested = pilot.assign(worker=pilot["worker"] + "@" + pilot["context_id"])
    for bad, words in ((one_model, "one model"), (nested, "more than one context")):
        with pytest.raises(UserError) as err:
            ssa_power.pilot_components(bad)
        assert err.value.params == ("pilot",) and words in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(UserError) as err:
        ssa_power.crossed_table([0.1], ssa_power.pilot_components(pilot), per_worker=0.5)
    assert err.value.params == ("per_worker",)


def test_command_prints_the_plan_and_writes_json(tmp_path, capsys):
    from parlai_acute.scripts.main import main

    path = tmp_path / "pilot.csv"
    write_labels(path, crossed_pilot(0.2, 0.2, workers=40, contexts=60, seed=7))
    out_json = tmp_path / "plan.json"
    assert main(["ssa", "power", "--delta", "0.1", "0.2", "--pilot", str(path), "--measure", "sensibleness",
                 "--json", str(out_json), "--pay-per-hour", "15"]) == 0
    out = capsys.readouterr().out
    assert "worker" in out and "contexts whatever the workers" in out and "labels/reply" in out
    result = json.loads(out_json.read_text())
    assert result["seed"] == 0 and result["parlai_acute_version"]
    plans = result["crossed"][0]["plans"]
    assert [p["delta"] for p in plans] == [0.1, 0.2] and plans[0]["contexts_min"] >= plans[1]["contexts_min"]
    assert result["cost"]["plans"]
    assert main(["ssa", "power", "--delta", "0.1"]) == 0
    assert "only a pilot gives" in capsys.readouterr().out
    assert main(["ssa", "power", "--pilot", str(path), "--labels-per-worker", "0"]) == 2
    assert "--labels-per-worker" in capsys.readouterr().err


def test_without_worker_or_context_variance_the_plan_is_the_independent_labels():
    """The signed outcome's mean is half the difference: with neither facet varying, the crossed plan's
    labels must match the two-sample normal approximation's (0.25 residual = a rate of one half), up
    to the t the plan takes at its df."""
    from scipy import stats

    comp = {"total": 0.25, "worker": 0.0, "context": 0.0, "residual": 0.25, "per_worker": 10.0}
    for delta, contexts in ((0.05, 200), (0.1, 100)):  # enough labels for one per reply: no raise; small
        # differences, where Cohen's arcsine h and the linear scale agree
        row = ssa_power.crossed_table([delta], comp, contexts=[contexts])[0]["rows"][0]
        independent = int(ssa_power.sample_size_table([delta])["labels"].iloc[0])
        # the plan's t on min(workers, contexts) - 1 df asks a few labels more than the normal
        t = stats.t.ppf(0.975, row["df"]) + stats.t.ppf(0.8, row["df"])
        z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
        assert row["labels"] == pytest.approx(independent * (t / z) ** 2, rel=0.04) and row["labels_per_reply"] > 1
    # 500 contexts need 1000 labels for one label per reply: workers are raised to it
    row = ssa_power.crossed_table([0.2], comp, contexts=[500])[0]["rows"][0]
    assert row["labels"] == 1000 and row["labels_per_reply"] == 1.0


def test_majority_plan_scales_the_analysis_variance_of_the_pilot():
    """The majority plan's variance at the pilot's own contexts and workers is the variance the
    analysis' split gives the pilot (up to a worker's share of labels being uneven), and more
    contexts always lower it; at a plan's row the formula meets the power's t target."""
    from scipy import stats

    from parlai_acute.stats import crossed_designs as cd
    from parlai_acute.stats.inference import difference_split_tests, scaled_votes
    from parlai_acute.stats.planned_power import _ssa_pilot_table
    from parlai_acute.stats.power import split_plan

    sim = cd.simulate("ssa-static", 60, 0.5, 1, 7, workers=30, inner=5)
    comp = ssa_power.majority_components(_ssa_pilot_table(sim, 60))
    assert comp["labels_per_reply"] == 5 and comp["contexts"] == 60 and comp["workers"] == 30
    column, is_b, item = sim["column"], sim["is_b"], sim["label_item"]
    part = scaled_votes(2 * column[item] + is_b[item], sim["vote"], sim["pivotal"])
    se = difference_split_tests(column, is_b, sim["value"], sim["context"], item, sim["worker"], part, 1)["se"][0]
    k, c, w = 5, 60, 30
    var = comp["context_var"] / c + comp["worker_cov"] * (4 * k * k / w - 2 * k / c)
    assert var == pytest.approx(se ** 2, rel=0.1)
    row = split_plan(0.2, comp["context_var"], comp["worker_cov"], 5, [200])["rows"][0]
    planned = comp["context_var"] / 200 + comp["worker_cov"] * (4 * k * k / row["workers"] - 2 * k / 200)
    q = stats.t.ppf(0.975, row["df"]) + stats.t.ppf(0.8, row["df"])
    assert planned <= (0.2 / q) ** 2 and row["labels"] == 2 * 200 * 5
