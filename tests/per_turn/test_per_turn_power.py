"""Per-turn sample sizes: the paper's closed form, exact powers against direct simulation of
statsmodels/scipy tests, the vectorised simulation against a loop over scipy, the CLI."""
import dataclasses
import json

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from parlai_acute.per_turn import power as pw
from parlai_acute.scripts.main import main
from parlai_acute.stats.multitest import holm
from parlai_acute.stats.power import required_n_exact


def test_paper_196_is_the_rounded_closed_form():
    assert pw.z_closed_form(0.1, rounded=True) == pytest.approx(196.0)
    assert pw.z_closed_form(0.1) == pytest.approx(196.22, abs=0.01)
    out = pw.plan(pw.Assumptions("pm-soba"))
    assert out["n"] == required_n_exact(0.6)["n"] and out["n_first"] == required_n_exact(0.6)["n_first"]


def test_vectorised_binomial_pvalues():
    for n in range(0, 25):
        for k in range(n + 1):
            expected = stats.binomtest(k, n).pvalue if n else 1.0
            assert pw.binomial_p_half(k, n) == pytest.approx(expected, rel=1e-9)


def test_pm_sata_exact_power_matches_simulated_statsmodels_mcnemar():
    a = pw.Assumptions("pm-sata", delta=0.2, base_rate=0.4, tie_win=0.15)
    n, reps = 60, 3000
    r = a.rates()
    rng = np.random.default_rng(5)
    cells = rng.multinomial(n, [r["tie_win"], r["a_only"], r["b_only"], r["tie_loss"]], size=reps)
    hits = np.mean([mcnemar([[c[0], c[1]], [c[2], c[3]]], exact=True).pvalue <= 0.05 for c in cells])
    assert pw.power_pm_sata(n, a) == pytest.approx(hits, abs=3 * np.sqrt(hits * (1 - hits) / reps))


def test_mm_soba_simulation_equals_a_scipy_loop_on_the_same_draws():
    a = pw.Assumptions("mm-soba", models=4, reps=100, seed=7)
    n = 200
    fast = pw.simulate_mm_soba(n, a)
    counts = np.random.default_rng(7).multinomial(n, [0.3, 0.2, 0.25, 0.25], size=100)
    pairs = [(0, 1)] + [(i, j) for i in range(4) for j in range(i + 1, 4) if (i, j) != (0, 1)]
    p = np.array([[stats.binomtest(int(c[j]), int(c[i] + c[j])).pvalue for i, j in pairs] for c in counts])
    # holm over rows is checked against statsmodels' multipletests in tests/stats/test_multitest.py
    found = int((holm(p)[:, 0] <= 0.05).sum())
    assert fast["power"] == pytest.approx(found / 100) and 0 < found < 100
    assert fast["omnibus_power"] == pytest.approx(np.mean([stats.chisquare(c).pvalue <= 0.05 for c in counts]))


def test_mm_sata_cochran_vectorised_matches_statsmodels():
    from statsmodels.stats.contingency_tables import cochrans_q
    a = pw.Assumptions("mm-sata", models=3, reps=100, seed=3, correlation=0.3)
    n = 40
    out = pw.simulate_mm_sata(n, a, chunk=100)
    rng = np.random.default_rng(3)
    threshold = stats.norm.ppf([0.6, 0.5, 0.5])
    shared = rng.standard_normal((100, n, 1))
    picks = np.sqrt(0.3) * shared + np.sqrt(0.7) * rng.standard_normal((100, n, 3)) < threshold
    q = np.mean([cochrans_q(p.astype(int)).pvalue <= 0.05 for p in picks])
    def pair_p(p, i, j):
        table = [[0, int((p[:, i] & ~p[:, j]).sum())], [int((~p[:, i] & p[:, j]).sum()), 0]]
        return mcnemar(table, exact=True).pvalue if table[0][1] + table[1][0] else 1.0

    raw = np.array([[pair_p(p, 0, 1), pair_p(p, 0, 2), pair_p(p, 1, 2)] for p in picks])
    pairwise = np.mean(holm(raw)[:, 0] <= 0.05)
    assert out["omnibus_power"] == pytest.approx(q)
    assert out["power"] == pytest.approx(pairwise)


def test_sm_exact_fisher_region_and_power():
    n = 14
    region = pw.fisher_rejects(n, 0.05)
    for k1 in range(n + 1):
        for k2 in range(n + 1):
            assert region[k1, k2] == (stats.fisher_exact([[k1, n - k1], [k2, n - k2]]).pvalue <= 0.05)
    a = pw.Assumptions("sm", delta=0.3, base_rate=0.4)
    k = np.arange(n + 1)
    direct = sum(stats.binom.pmf(x, n, 0.4) * stats.binom.pmf(y, n, 0.7) for x in k for y in k if region[x, y])
    assert pw.power_sm(n, a) == pytest.approx(direct)


def test_design_effect_and_budget_inverse():
    a = pw.Assumptions("pm-sata", turns_per_dialogue=10, icc=0.1)
    out = pw.plan(a)
    assert out["design_effect"] == pytest.approx(1.9)
    assert out["turns"] == int(np.ceil(out["n"] * 1.9)) and out["dialogues"] == int(np.ceil(out["turns"] / 10))
    assert pw.power_pm_sata(out["n"], a) >= 0.8 > pw.power_pm_sata(out["n"] - 1, a)
    back = pw.plan(dataclasses.replace(a, turns_per_dialogue=1, icc=0.0), budget=out["n"])
    assert back["detectable_delta"] == pytest.approx(0.1, abs=0.01)


def test_cli_power(tmp_path, capsys):
    assert main(["per-turn", "power", "--design", "pm-soba", "--json", str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    assert "196.0 turns" in out and "exact binomial test: 210 turns" in out and "assumptions: delta=0.1" in out
    saved = json.loads((tmp_path / "p.json").read_text())
    assert saved["n"] == 210 and saved["assumptions"]["alpha"] == 0.05 and "parlai_acute_version" in saved
    assert main(["per-turn", "power", "--design", "mm-sata", "--models", "2"]) == 2
    assert "--models must be at least 3" in capsys.readouterr().err
    assert main(["per-turn", "power", "--design", "sm", "--delta", "0.6"]) == 2
    assert "impossible rates" in capsys.readouterr().err


def test_tie_win_limits_the_delta_search():
    """`--design pm-sata --budget 667 --tie-win 0.3` failed with "impossible rates": the search went past
    the delta at which "neither picked" (1 - p - (p + delta) + tie_win) becomes negative."""
    a = pw.Assumptions("pm-sata", tie_win=0.3)
    out = pw.plan(a, budget=667)
    assert 0 < out["detectable_delta"] < 0.1 < pw._largest_delta(a) <= 0.3
    assert pw.power_pm_sata(667, dataclasses.replace(a, delta=out["detectable_delta"])) == pytest.approx(0.8, abs=1e-3)


def test_icc_anova_recovers_a_known_intra_cluster_correlation():
    from parlai_acute.stats.power import icc_anova

    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(400), rng.integers(5, 15, 400))  # unequal sizes
    y = rng.normal(0, 0.5, 400)[clusters] + rng.normal(0, 1, len(clusters))  # ICC 0.25 / 1.25 = 0.2
    assert icc_anova(y, clusters) == pytest.approx(0.2, abs=0.04)
    assert icc_anova(rng.normal(size=500), np.repeat(np.arange(50), 10)) < 0.05
    assert np.isnan(icc_anova([1.0, 2.0], ["a", "a"]))


def test_power_from_a_pilot_sees_the_dialogue_clustering(tmp_path, capsys):
    from parlai_acute.per_turn.simulate import simulate_turns
    from parlai_acute.stats.power import pilot_icc

    quality = {"a": 0.0, "b": 0.0}
    strong = simulate_turns(quality, "pm", "soba", dialogues=60, turns_per_dialogue=10, dialogue_sd=1.5, seed=1)
    none = simulate_turns(quality, "pm", "soba", dialogues=60, turns_per_dialogue=10, dialogue_sd=0.0, seed=1)
    clustered, flat = pilot_icc(*pw.pilot_outcomes(strong), resamples=200), pilot_icc(*pw.pilot_outcomes(none),
                                                                                        resamples=200)
    assert clustered["icc"] > 0.1 and clustered["icc_low"] > 0.02 and flat["icc"] < 0.05
    assert clustered["clusters"] == 60
    path = tmp_path / "pilot.jsonl"
    strong.to_json(path, orient="records", lines=True)
    assert main(["per-turn", "power", "--design", "pm-soba", "--pilot", str(path), "--json", str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    saved = json.loads((tmp_path / "p.json").read_text())
    assert "pilot" in out and "60 dialogues, 10.0 turns each" in out and "at the interval's upper end" in out
    assert saved["assumptions"]["icc"] == pytest.approx(saved["pilot"]["icc"]) and saved["design_effect"] > 1.9
    assert saved["dialogues"] == int(np.ceil(saved["turns"] / 10)) and saved["at_icc_high"]["turns"] > saved["turns"]


def test_a_plan_never_has_fewer_dialogues_than_the_cluster_test_needs():
    from parlai_acute.stats.inference import min_clusters

    out = pw.plan(pw.Assumptions("pm-soba", delta=0.45, turns_per_dialogue=20, icc=0.0))
    assert out["dialogues"] == min_clusters(0.05) and out["turns"] == 20 * min_clusters(0.05)


@pytest.mark.parametrize("design,setting,protocol,models", [
    ("pm-sata", "pm", "sata_random", 2), ("mm-soba", "mm", "soba", 4), ("mm-sata", "mm", "sata_user", 4),
    ("sm", "sm", "sm", 2)])
def test_every_design_is_planned_in_workers_when_workers_repeat(tmp_path, capsys, design, setting, protocol, models):
    """Dialogues nested in workers: PM and MM are planned for the sign-flip test over workers (MM at
    alpha / pairs, the level of Holm's first step), SM for the two-sample test of whole workers
    (workers per model, twice one model's variance); PM-SATA's outcome (+1 / 0 / -1) has mean delta,
    not PM-SOBA's twice delta."""
    from parlai_acute.per_turn.simulate import simulate_turns
    from parlai_acute.stats.power import nested_plan

    quality = {m: 0.0 for m in "ABCD"[:models]}
    turns = simulate_turns(quality, setting, protocol, dialogues=80, workers=20, dialogue_sd=0.8, seed=3)
    a = pw.Assumptions(design=design, delta=0.1, turns_per_dialogue=10, models=max(models, 3))
    plan = pw.nested_table(turns, a)
    comp = plan["components"]
    assert comp["outers"] == turns["worker"].nunique() and comp["inner"] > 0
    pairs = a.models * (a.models - 1) // 2 if setting == "mm" else 1
    assert plan["alpha_planned"] == pytest.approx(0.05 / pairs) and plan["two_sample"] == (setting == "sm")
    same = nested_plan(0.1, comp, [4], 10, 0.05 / pairs, 0.8, two_sample=setting == "sm")["rows"][0]
    row = next(r for r in plan["rows"] if r["dialogues_per_worker"] == 4)
    assert row["workers"] == same["workers"]  # the mean of the outcome is delta, as the design's test sees it
    paired = nested_plan(0.1, comp, [4], 10, 0.05, 0.8)["rows"][0]
    if setting == "mm":
        assert row["workers"] > paired["workers"]  # Holm's first step asks more
    if setting == "sm":
        assert row["df"] == 2 * (row["workers"] - 1) and row["workers"] > 1.6 * paired["workers"]
    path = tmp_path / "pilot.jsonl"
    turns.to_json(path, orient="records", lines=True)
    assert main(["per-turn", "power", "--design", design, "--models", str(max(models, 3)), "--pilot", str(path),
                 "--reps", "200", "--json", str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    assert "workers repeat across dialogues" in out and pw.NESTED_TEST[design] in out
    saved = json.loads((tmp_path / "p.json").read_text())
    assert saved["nested"]["rows"][2]["workers"] == row["workers"]


def test_a_pilot_without_repeating_workers_says_the_dialogue_plan_stands(tmp_path, capsys):
    from parlai_acute.per_turn.simulate import simulate_turns

    turns = simulate_turns({"A": 0.0, "B": 0.0}, "sm", "sm", dialogues=30, workers=10, dialogue_sd=0.5, seed=0)
    turns["worker"] = "w" + turns["dialogue"].astype(str)
    assert pw.nested_table(turns, pw.Assumptions(design="sm", turns_per_dialogue=10)) is None
    assert pw.nested_table(turns, pw.Assumptions(design="pm-soba", turns_per_dialogue=10)) is None  # no PM turns
    path = tmp_path / "pilot.jsonl"
    turns.to_json(path, orient="records", lines=True)
    assert main(["per-turn", "power", "--design", "sm", "--pilot", str(path)]) == 0
    assert "the plan over dialogues above is the plan" in capsys.readouterr().out
