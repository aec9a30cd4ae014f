"""SSA analysis: every statistic against an independent computation."""
import itertools
import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from parlai_acute.scripts.main import main
from parlai_acute.ssa.analysis import SSAConfig, analyze, majority_labels
from parlai_acute.ssa.outputs import write_outputs
from parlai_acute.ssa.labels import labels_table, write_labels
from parlai_acute.ssa.simulate import simulate_labels

MODELS = {"alpha": (0.9, 0.6), "beta": (0.8, 0.45), "gamma": (0.95, 0.1)}


@pytest.fixture(scope="module")
def labels():
    return simulate_labels(MODELS, contexts=40, labels_per_item=5, workers=30, seed=3)


@pytest.fixture(scope="module")
def result(labels):
    return analyze(labels, SSAConfig(bootstrap=300, seed=7))


def test_majority_and_rates_match_a_plain_count(labels, result):
    by_item = {}
    for r in labels.itertuples():
        by_item.setdefault(r.item, []).append((r.model, r.sensible, r.specific))
    for model in MODELS:
        votes = [v for v in by_item.values() if v[0][0] == model]
        sens = [sum(s for _, s, _ in v) > len(v) / 2 for v in votes]
        spec = [sum(p for _, _, p in v) > len(v) / 2 for v in votes]
        row = result.models.set_index("model").loc[model]
        assert row["items"] == len(votes) == 40
        assert row["sensibleness"] == pytest.approx(np.mean(sens))
        assert row["specificity"] == pytest.approx(np.mean(spec))
        assert row["ssa"] == pytest.approx((np.mean(sens) + np.mean(spec)) / 2)
        low, high = proportion_confint(sum(spec), len(spec), alpha=0.05, method="beta")
        assert (row["specificity_exact_low"], row["specificity_exact_high"]) == pytest.approx((low, high))
        mine = labels[labels["model"] == model]
        assert row["label_specificity"] == pytest.approx(mine["specific"].mean())
    assert result.models["ssa"].is_monotonic_decreasing


def test_bootstrap_equals_a_loop_over_resampled_contexts(labels, result):
    """Same draws (numpy's generator, seed 7), computed one resample at a time with pandas."""
    items = result.items
    clusters = pd.unique(items["cluster"])
    draws = np.random.default_rng(7).integers(0, len(clusters), size=(300, len(clusters)))
    ssa = {m: [] for m in MODELS}
    by_cluster = {c: g for c, g in items.groupby("cluster")}
    for row in draws:
        sample = pd.concat([by_cluster[clusters[i]] for i in row])
        for m, g in sample.groupby("model"):
            ssa[m].append((g["sensible"].mean() + g["specific"].mean()) / 2)
    for m in MODELS:
        low, high = np.percentile(ssa[m], [2.5, 97.5])
        row = result.models.set_index("model").loc[m]
        assert (row["ssa_boot_low"], row["ssa_boot_high"]) == pytest.approx((low, high))


def test_pairs_fisher_and_holm(result):
    models = result.models.set_index("model")
    spec = result.pairs[result.pairs["measure"] == "specificity"]
    expected = []
    for p in spec.itertuples():
        a, b = models.loc[p.model_a], models.loc[p.model_b]
        table = [[a["specific_items"], a["items"] - a["specific_items"]],
                 [b["specific_items"], b["items"] - b["specific_items"]]]
        expected.append(stats.fisher_exact(table).pvalue)
        assert p.diff == pytest.approx(b["specificity"] - a["specificity"])
    assert spec["fisher_pvalue"].to_numpy() == pytest.approx(expected)
    order = np.argsort(expected)
    holm, running = np.empty(len(expected)), 0.0
    for rank, i in enumerate(order):  # Holm step-down by hand
        running = max(running, min(1.0, (len(expected) - rank) * expected[i]))
        holm[i] = running
    assert spec["fisher_p_holm"].to_numpy() == pytest.approx(holm)
    gamma_vs_alpha = spec[(spec["model_a"] == "alpha") & (spec["model_b"] == "gamma")].iloc[0]
    assert gamma_vs_alpha["diff"] < 0 and gamma_vs_alpha["fisher_p_holm"] < 0.01


def test_agreement_against_krippendorff_and_pair_counts(labels, result):
    for question in ("sensible", "specific"):
        row = result.agreement.set_index("question").loc[question]
        matrix = labels.pivot(index="worker", columns="item", values=question).astype(float)
        assert row["krippendorff_alpha"] == pytest.approx(
            krippendorff.alpha(reliability_data=matrix.to_numpy(), level_of_measurement="nominal"))
        agree = total = 0
        for _, group in labels.groupby("item"):
            for x, y in itertools.combinations(group[question].tolist(), 2):
                agree, total = agree + (x == y), total + 1
        assert row["percent_agreement"] == pytest.approx(agree / total)
        assert row["alpha_low"] < row["krippendorff_alpha"] < row["alpha_high"]


def test_ties_count_as_no_and_are_reported():
    rows = [{"item": "x", "model": "m", "worker": w, "sensible": s, "specific": p}
            for w, s, p in (("a", True, True), ("b", False, False), ("c", True, True), ("d", True, False))]
    rows += [{"item": "y", "model": "m", "worker": "a", "sensible": True, "specific": True}]
    res = analyze(labels_table(rows), SSAConfig(bootstrap=50))
    items = res.items.set_index("item")
    assert bool(items.loc["x", "sensible"]) and not bool(items.loc["x", "specific"])
    assert bool(items.loc["x", "specific_tie"])
    assert any("tie" in n for n in res.notes)
    row = res.models.iloc[0]
    assert row["specificity"] == 0.5 and row["sensibleness"] == 1.0
    # every resample agrees on sensibleness 1.0: no zero-width bootstrap interval, the exact one stands
    assert np.isnan(row["sensibleness_boot_low"]) and row["sensibleness_exact_low"] < 0.5


def test_conversations_are_the_clusters_of_interactive_items():
    rng = np.random.default_rng(0)
    rows = []
    for conv in range(12):
        good = conv % 2 == 0  # replies of one conversation share their fate
        for turn in range(8):
            for w in ("w1", "w2", "w3"):
                sensible = bool(good or rng.random() < 0.2)
                rows.append({"item": f"c{conv}:{turn}", "model": "bot", "worker": w, "sensible": sensible,
                             "specific": sensible and bool(rng.random() < 0.5), "source": "interactive",
                             "conversation": f"c{conv}", "turn": turn})
    df = labels_table(rows)
    res = analyze(df, SSAConfig(bootstrap=400, seed=1))
    row = res.models.iloc[0]
    assert row["clusters"] == 12 and row["conversations"] == 12 and row["items"] == 96
    boot_width = row["sensibleness_boot_high"] - row["sensibleness_boot_low"]
    exact_width = row["sensibleness_exact_high"] - row["sensibleness_exact_low"]
    assert boot_width > 1.5 * exact_width  # 96 items, but only 12 independent conversations


def test_outputs_are_strict_json_and_record_the_run(labels, tmp_path):
    path = tmp_path / "labels.csv"
    write_labels(path, labels)
    out = tmp_path / "out"
    assert main(["ssa", "analyze", "--labels", str(path), "--outdir", str(out), "--bootstrap", "100",
                 "--seed", "5"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["seed"] == 5 and run["parlai_acute_version"] and run["config"]["bootstrap"] == 100
    results = json.loads((out / "results.json").read_text(), parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert {m["model"] for m in results["models"]} == set(MODELS)
    models = pd.read_csv(out / "models.csv")
    assert set(models["model"]) == set(MODELS)
    page = (out / "report.html").read_text()
    assert "percentile cluster bootstrap" in page and "Clopper-Pearson" in page


def test_cli_errors_are_one_line(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["ssa", "analyze", "--labels", str(empty), "--outdir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "is empty" in err and "\n" not in err
    db = tmp_path / "no.db"
    assert main(["ssa", "analyze", "--task-name", "t", "--mephisto-db", str(db), "--outdir", str(tmp_path / "o")]) == 2
    assert "\n" not in capsys.readouterr().err.strip()


def test_task_name_reads_through_the_labelling_store_or_says_why_not(tmp_path, capsys):
    """A real (empty) Mephisto database: an unknown task, or one with no labels stored, is one
    line and exit 2."""
    from mephisto.abstractions.databases.local_database import LocalMephistoDB

    db = tmp_path / "data" / "database.db"
    db.parent.mkdir()
    LocalMephistoDB(str(db))
    assert main(["ssa", "analyze", "--task-name", "nothing-here", "--mephisto-db", str(db),
                 "--outdir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no Mephisto task named 'nothing-here' (known: none)" in err
    from mephisto.abstractions.databases.local_database import LocalMephistoDB as DB

    DB(str(db)).new_task("empty-run", "parlai_acute_ssa_label")
    assert main(["ssa", "analyze", "--task-name", "empty-run", "--mephisto-db", str(db),
                 "--outdir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Mephisto task 'empty-run' has no stored labels yet" in err


def test_interactive_pairs_permute_whole_conversations_and_say_when_too_few():
    rng = np.random.default_rng(3)
    rows = []
    for conv in range(10):
        model = "alpha" if conv < 5 else "beta"
        rate = 0.9 if model == "beta" else 0.4
        for turn in range(6):
            sensible = bool(rng.random() < rate)
            rows.append({"item": f"c{conv}:{turn}", "model": model, "worker": f"w{conv}", "sensible": sensible,
                         "specific": sensible and bool(rng.random() < 0.5), "source": "interactive",
                         "conversation": f"c{conv}", "turn": turn})
    df = labels_table(rows)
    pairs = analyze(df, SSAConfig(bootstrap=0)).pairs.set_index("measure")
    sens = pairs.loc["sensibleness"]
    assert sens["unit"] == "conversation" and sens["clusters"] == 10
    assert "permutation test of the model of whole conversations (exact, 252 arrangements" in sens["cluster_method"]
    items = majority_labels(df)
    by_conv = items.groupby("conversation")["sensible"].mean()
    assert sens["cluster_estimate"] == pytest.approx(items[items.model == "beta"].sensible.mean()
                                                     - items[items.model == "alpha"].sensible.mean())
    assert sens["cluster_low"] < sens["cluster_estimate"] < sens["cluster_high"]
    assert (by_conv.iloc[5:].min() > by_conv.iloc[:5].max()) == (sens["cluster_pvalue"] == pytest.approx(2 / 252))
    # four conversations: no permutation of them can reach p < 0.05 -- no mark, and how many more
    few = analyze(df[df["item"].str.match(r"c[0-1]:|c[5-6]:")], SSAConfig(bootstrap=0))
    row = few.pairs.set_index("measure").loc["ssa"]
    assert row["mark"] == "" and np.isnan(row["cluster_pvalue"]) and "3 more" in row["cluster_note"]
    assert any(note.startswith("FEW CONVERSATIONS") for note in few.notes)
