"""The per-turn analysis on hand-built tables, each statistic checked against scipy/statsmodels
called directly; exclusions and flags; outputs and the `parlai-acute per-turn analyze` command."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import cochrans_q, mcnemar
from statsmodels.stats.multitest import multipletests

import parlai_acute
from parlai_acute.per_turn.analysis import AnalysisConfig, analyze
from parlai_acute.per_turn.outputs import write_outputs
from parlai_acute.per_turn.simulate import simulate_turns
from parlai_acute.per_turn.turns import turns_table, write_turns
from parlai_acute.scripts.main import main
from per_turn_helpers import table_rows, turn

# the hand-made tables below give every dialogue to one worker: the dialogue mechanics are tested with the unit
# fixed (cluster="auto" reads the design from the table: tests/stats/test_crossed_calibration.py)
CFG = AnalysisConfig(bootstrap=200, seed=1, cluster="dialogue")


def pm_sata_rows():
    # both 3, A only 5, B only 1, neither 2, over two dialogues
    spec = [("d1", ["A", "B"])] * 3 + [("d1", ["A"])] * 3 + [("d2", ["A"])] * 2 + [("d2", ["B"])] + [("d2", [])] * 2
    return table_rows(spec, models="AB", protocol="sata_random")


def test_pm_sata_table2_columns_and_mcnemar():
    result = analyze(turns_table(pm_sata_rows()), CFG)
    (design,) = result.designs
    assert design.label == "pm-sata_random"
    pair = design.comparisons.iloc[0]
    assert (pair.both, pair.a_only, pair.b_only, pair.neither) == (3, 5, 1, 2)
    assert (pair.tie_win, pair.win_a, pair.win_b, pair.tie_loss) == pytest.approx((3 / 11, 5 / 11, 1 / 11, 2 / 11))
    assert pair.pvalue == pytest.approx(mcnemar([[3, 5], [1, 2]], exact=True).pvalue)
    assert pair["diff"] == pytest.approx(4 / 11 - 8 / 11)
    models = design.groups[0].models_table.set_index("model")
    ci = stats.binomtest(8, 11).proportion_ci(0.95, method="exact")
    assert (models.loc["A", "ci_low"], models.loc["A", "ci_high"]) == pytest.approx((ci.low, ci.high))
    # two dialogues only: resampling them says nothing about other dialogues, so no bootstrap interval
    assert np.isnan(models.loc["A", "boot_low"])
    # and no calibrated cluster-aware test: no mark, and the row says how many dialogues are needed
    assert np.isnan(pair.cluster_pvalue) and pair.mark == "" and pair.clusters == 2
    assert pair.cluster_note == "only 2 dialogues: a calibrated test needs at least 6 (4 more)"
    few = analyze(turns_table(pm_sata_rows()), dataclasses.replace(CFG, min_clusters=2))
    boot = few.designs[0].groups[0].models_table.set_index("model")
    assert boot.loc["A", "boot_low"] <= 8 / 11 <= boot.loc["A", "boot_high"]


def test_pm_soba_binomial_and_holm_across_pairs():
    rows = []
    for i, (other, wins_a, wins_o) in enumerate([("B", 9, 3), ("C", 6, 6)]):
        spec = [(f"{other}{j % 3}", ["A"]) for j in range(wins_a)] + [(f"{other}{j % 3}x", [other]) for j in range(wins_o)]
        rows += table_rows(spec, models=sorted(["A", other]), protocol="soba")
    result = analyze(turns_table(rows), CFG)
    comp = result.designs[0].comparisons.set_index("model_b")
    p_b, p_c = stats.binomtest(3, 12).pvalue, stats.binomtest(6, 12).pvalue
    assert comp.loc["B", "pvalue"] == pytest.approx(p_b) and comp.loc["C", "pvalue"] == pytest.approx(p_c)
    assert comp["p_holm"].tolist() == pytest.approx(list(multipletests([p_b, p_c], method="holm")[1]))
    assert comp.loc["B", "test"] == "binomial"
    assert result.designs[0].rates()["A"] == pytest.approx(15 / 24)


def test_mm_soba_chisquare_and_pairwise_binomial_grid():
    spec = [(f"d{i % 4}", [m]) for i, m in enumerate("A" * 10 + "B" * 4 + "C" * 6)]
    result = analyze(turns_table(table_rows(spec, models="ABC", protocol="soba")), CFG)
    group = result.designs[0].groups[0]
    assert group.omnibus["test"] == "chisquare"
    assert group.omnibus["pvalue"] == pytest.approx(stats.chisquare([10, 4, 6]).pvalue)
    pairs = group.pairs.set_index(["model_a", "model_b"])
    raw = [stats.binomtest(4, 14).pvalue, stats.binomtest(6, 16).pvalue, stats.binomtest(6, 10).pvalue]
    assert pairs["pvalue"].tolist() == pytest.approx(raw)
    assert pairs["p_holm"].tolist() == pytest.approx(list(multipletests(raw, method="holm")[1]))
    from parlai_acute.per_turn.analysis import grid
    cells = grid(group.pairs).set_index(["row", "col"])
    assert cells.loc[("A", "B"), "winrate"] == pytest.approx(100 * 4 / 14)  # row A, column B: share won by B
    assert cells.loc[("B", "A"), "n"] == 14


def test_mm_sata_cochran_and_mcnemar():
    x = np.array([[1, 0, 0], [1, 1, 0], [1, 0, 1], [1, 0, 0], [0, 1, 0], [1, 1, 1], [1, 0, 0], [0, 0, 0], [1, 0, 1]])
    spec = [(f"d{i % 3}", [m for m, v in zip("ABC", row) if v]) for i, row in enumerate(x)]
    result = analyze(turns_table(table_rows(spec, models="ABC", protocol="sata_user")), CFG)
    group = result.designs[0].groups[0]
    assert group.omnibus["statistic"] == pytest.approx(cochrans_q(x).statistic)
    assert group.omnibus["pvalue"] == pytest.approx(cochrans_q(x).pvalue)
    pair = group.pairs.set_index(["model_a", "model_b"]).loc[("A", "C")]
    table = [[int((x[:, 0] & x[:, 2]).sum()), int((x[:, 0] & ~x[:, 2]).sum())],
             [int((~x[:, 0] & x[:, 2]).sum()), int((~x[:, 0] & ~x[:, 2]).sum())]]
    table = [[int(v) for v in r] for r in np.array(table)]
    assert pair.pvalue == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert group.models_table.set_index("model").loc["A", "rate"] == pytest.approx(7 / 9)


def test_sm_rates_and_comparisons():
    rows = (table_rows([(f"a{i % 5}", ["A"] if i < 16 else []) for i in range(20)], models="A", protocol="sm")
            + table_rows([(f"b{i % 5}", ["B"] if i < 8 else []) for i in range(20)], models="B", protocol="sm"))
    for r in rows:
        r["continued"] = True
    result = analyze(turns_table(rows), CFG)
    (design,) = result.designs
    assert design.label == "sm" and len(design.groups) == 2
    comp = design.comparisons.iloc[0]
    assert comp.fisher_pvalue == pytest.approx(stats.fisher_exact([[16, 4], [8, 12]]).pvalue)
    from statsmodels.stats.proportion import proportions_ztest
    assert comp.z_pvalue == pytest.approx(proportions_ztest([16, 8], [20, 20])[1])
    assert comp["diff"] == pytest.approx(-0.4) and comp.cluster_high < 0  # clearly different
    # every B dialogue picked less often than every A dialogue: the most extreme of the C(10, 5)
    # ways to split the 10 dialogues (and its mirror image, both counted fully): p = 2 / 252
    assert comp.cluster_pvalue == pytest.approx(2 / 252) and comp.mark == "**" and comp.clusters == 10
    ci = stats.binomtest(16, 20).proportion_ci(0.95, method="exact")
    assert design.groups[0].models_table.loc[0, "ci_low"] == pytest.approx(ci.low)


def test_position_bias_is_measured_and_tested():
    # SOBA: the worker always takes position 0, and the models rotate over positions
    rows = []
    for t in range(12):
        order = ["A", "B", "C"][t % 3:] + ["A", "B", "C"][:t % 3]
        rows += turn(f"d{t % 4}", t // 4, "ABC", picked=[order[0]], protocol="soba",
                     positions={m: i for i, m in enumerate(order)})
    group = analyze(turns_table(rows), CFG).designs[0].groups[0]
    assert group.positions["picked"].tolist() == [12, 0, 0]
    assert group.position_test["pvalue"] == pytest.approx(stats.chisquare([12, 0, 0]).pvalue)
    assert group.omnibus["pvalue"] == pytest.approx(1.0)  # each model picked 4 times


def test_exclusions_and_flags():
    rows = []
    for t in range(12):  # w1 always picks position 0
        rows += turn("d1", t, "AB", picked=["A"], protocol="soba", worker="w1", message=f"message number {t} here")
    rows += turn("d2", 0, "AB", picked=["B"], protocol="soba", worker="w2", decision=0.4, message="hello there you")
    rows += turn("d2", 1, "AB", picked=["A"], protocol="soba", worker="w2", message="ok")
    rows += turn("d2", 2, "AB", picked=["A"], protocol="soba", worker="w2", message="Hello  there YOU")
    rows += turn("d2", 3, "AB", picked=["A"], protocol="soba", worker="w2", incomplete=["B"], positions={"A": 0})
    df = turns_table(rows)
    res = analyze(df, CFG)
    flags = res.turns.set_index(["dialogue", "turn"])
    assert flags.loc[("d2", 3), "excluded_because"] == "incomplete turn"
    assert flags.loc[("d2", 0), "fast_decision"] and flags.loc[("d2", 1), "short_message"]
    assert flags.loc[("d2", 2), "repeated_message"] and not flags.loc[("d2", 0), "repeated_message"]
    assert flags.loc[("d1", 5), "same_position"] and not flags.loc[("d2", 0), "same_position"]
    assert sum(g.turns for g in res.designs[0].groups) == 15  # flags alone exclude nothing
    workers = res.workers().set_index("worker")
    assert workers.loc["w1", "flags"] == "same_position" and workers.loc["w1", "modal_position_share"] == 1.0
    res = analyze(df, AnalysisConfig(bootstrap=0, exclude=["same_position", "fast_decision", "repeated_message"]))
    summary = {r["reason"]: r["turns"] for r in res.exclusion_summary()}
    assert summary == {"incomplete turn": 1, "same position": 12, "fast decision": 1, "short message": 0,
                       "repeated message": 1}
    assert res.designs[0].groups[0].turns == 1 and len(res.excluded) == 30


def test_settings_side_by_side_and_consistency():
    q = {"A": 0.8, "B": 0.0, "C": -0.8}
    df = pd.concat([simulate_turns(q, "mm", "soba", dialogues=30, seed=1, run_id="mm"),
                    simulate_turns(q, "mm", "sata_random", dialogues=30, seed=2, run_id="sata")], ignore_index=True)
    df["dialogue"] = df["run_id"] + df["dialogue"]
    res = analyze(df, CFG)
    table = res.settings_table().set_index("model")
    assert list(table.columns[:2]) == ["mm-sata_random", "mm-soba"]
    assert table.loc["A", "mm-soba rank"] == 1 and table.loc["C", "mm-sata_random rank"] == 3
    cons = res.consistency().iloc[0]
    expected = stats.kendalltau(table["mm-sata_random"], table["mm-soba"]).statistic
    assert cons.kendall_tau == pytest.approx(expected) and cons.shared_pairs == 3
    sens = res.sensitivity().set_index("design")
    assert sens.loc["mm-soba", "comparisons"] == 3 and 0 <= sens.loc["mm-soba", "share_significant"] <= 1


def strict(text):
    def bad(constant):
        raise AssertionError(f"non-strict JSON constant {constant}")
    return json.loads(text, parse_constant=bad)


def test_outputs_are_strict_json_with_provenance(tmp_path):
    rows = pm_sata_rows() + turn("d9", 0, "AB", picked=[], incomplete=["A"], positions={"B": 0})
    res = analyze(turns_table(rows), CFG)
    paths = write_outputs(res, tmp_path)
    run = strict((tmp_path / "run.json").read_text())
    assert run["seed"] == 1 and run["parlai_acute_version"] == parlai_acute.__version__
    assert run["config"]["bootstrap"] == 200 and "pairs.csv" in run["outputs"]
    results = strict(paths["results.json"].read_text())
    group = results["designs"][0]["groups"][0]
    assert group["omnibus"]["statistic"] is None  # NaN written as null
    assert strict(paths["exclusions.json"].read_text())["excluded"][0] == {"reason": "incomplete turn", "turns": 1,
                                                                          "workers": 1}
    assert len(pd.read_csv(paths["turns.csv"])) == 22 and len(pd.read_csv(paths["excluded.csv"])) == 2
    assert set(pd.read_csv(paths["pairs.csv"])["design"]) == {"pm-sata_random"}
    grid = pd.read_csv(paths["winrate_grid.csv"], keep_default_na=False)
    assert set(grid["model_set"]) == {"A|B"}  # the pair's model set, not a 0.0 placeholder
    ci = stats.binomtest(1, 6).proportion_ci(0.95, method="exact")  # row A, column B: B alone picked in 1 of 6
    cell = grid.set_index(["row", "col"]).loc[("A", "B")]
    assert (cell["ci_low"], cell["ci_high"]) == pytest.approx((ci.low, ci.high))


def test_cli_analyze(tmp_path, capsys):
    write_turns(tmp_path / "t.csv", turns_table(pm_sata_rows()))
    code = main(["per-turn", "analyze", "--turns", str(tmp_path / "t.csv"), "--outdir", str(tmp_path / "out"),
                 "--bootstrap", "100", "--exclude", "fast_decision"])
    out = capsys.readouterr().out
    assert code == 0 and "11 of 11 turns kept" in out and "pm-sata_random" in out and "tie-win 27.3" in out
    assert strict((tmp_path / "out" / "run.json").read_text())["config"]["exclude"] == ["fast_decision"]
    (tmp_path / "bad.csv").write_text("dialogue\nx\n")
    assert main(["per-turn", "analyze", "--turns", str(tmp_path / "bad.csv"), "--outdir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing column 'worker'" in err
    assert main(["per-turn", "analyze", "--task-name", "t", "--mephisto-db", str(tmp_path / "no.db"),
                 "--outdir", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_report_escapes_text_names_intervals_and_labels_synthetic(tmp_path):
    q = {"<b>bold</b>": 0.5, "plain": 0.0, "third": -0.3}
    df = simulate_turns(q, "mm", "sata_random", dialogues=12, seed=4)
    paths = write_outputs(analyze(df, CFG), tmp_path)
    html = paths["report.html"].read_text()
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "SYNTHETIC or SIMULATED" in html and "dialogue-bootstrap interval (200 resamples)" in html
    assert "Clopper-Pearson" in html and (tmp_path / "figures" / "grid_mm-sata_random.svg").is_file()
    assert "report.html" in strict((tmp_path / "run.json").read_text())["outputs"]


def test_alpha_sets_the_marks_and_the_report_says_what_they_mean(tmp_path):
    from parlai_acute.per_turn.outputs import write_outputs

    df = simulate_turns({"A": 0.0, "B": 0.35}, "pm", "soba", dialogues=30, dialogue_sd=0.5, seed=4)
    strict = analyze(df, AnalysisConfig(bootstrap=0, alpha=0.01)).designs[0].comparisons.iloc[0]
    loose = analyze(df, AnalysisConfig(bootstrap=0, alpha=0.2)).designs[0].comparisons.iloc[0]
    assert strict.cluster_pvalue == loose.cluster_pvalue and 0.01 < loose.cluster_pvalue < 0.2
    assert strict.mark == "" and loose.mark == ("**" if loose.cluster_p_holm < 0.04 else "*")
    narrow = analyze(df, AnalysisConfig(bootstrap=0, confidence=0.8)).designs[0].comparisons.iloc[0]
    assert loose.cluster_low < narrow.cluster_low < narrow.cluster_high < loose.cluster_high
    paths = write_outputs(analyze(df, AnalysisConfig(bootstrap=0, alpha=0.2)), tmp_path)
    html = paths["report.html"].read_text()
    assert "* p &lt; 0.2, ** p &lt; 0.04" in html and "<h2>Methods</h2>" in html
    methods = (tmp_path / "report_methods.txt").read_text()
    assert "sign-flip" in methods and "Holm" in methods and parlai_acute.__version__ in methods
