"""Calibration of the headline marks (issue 15): seeded A/A studies -- two or three equal
models, each dialogue (conversation) with its own taste for each model, weak (sd 0.5) and
strong (sd 2 on the logit scale), dialogues of uneven length -- at 8, 20 and 60 clusters.
The mark must fire 5 +/- 2 % of the time at alpha 0.05, where the per-turn exact tests
fire 15-40 %. With 2000 replicates the Monte Carlo standard error is 0.5 points.

The studies are arrays (:func:`~parlai_acute.per_turn.simulate.simulate_pick_arrays`), and
the p-values come from the same vectorised functions the analyses call
(``sign_flip_pvalues`` is what ``paired_cluster_tests`` runs); the last test checks that
the per-turn analysis of a real turns table gives the very same p-value. Power beside a
cluster-level permutation reference, and the larger table: benchmarks/
bench_inference_calibration.py and docs/inference.md."""
import numpy as np
import pytest

from parlai_acute.per_turn.analysis import AnalysisConfig, analyze, choice_matrix
from parlai_acute.per_turn.simulate import simulate_pick_arrays, simulate_turns
from parlai_acute.ssa.simulate import simulate_conversation_verdicts
from parlai_acute.stats.inference import omnibus_pvalues, permutation_pvalues, sign_flip_pvalues

REPLICATES, PATTERNS, ALPHA = 2000, 2000, 0.05
LOW, HIGH = 0.03, 0.07


def pair_pvalues(picks, i, j):
    sums = (picks[..., j].astype(float) - picks[..., i]).sum(axis=2).T  # (dialogues, replicates)
    return sign_flip_pvalues(sums, n_resamples=PATTERNS, seed=1)


def studies(k, protocol, dialogues, sd, quality=None, replicates=REPLICATES):
    return simulate_pick_arrays(k, protocol, dialogues, 10, replicates, dialogue_sd=sd,
                                common_sd=0.0 if protocol == "soba" else sd, quality=quality, ragged=True,
                                seed=1000 * dialogues + int(10 * sd) + k)


@pytest.mark.parametrize("protocol", ["soba", "sata_user"])
@pytest.mark.parametrize("dialogues", [8, 20, 60])
@pytest.mark.parametrize("sd", [0.5, 2.0])
def test_pm_mark_holds_its_level(protocol, dialogues, sd):
    picks, _ = studies(2, protocol, dialogues, sd)
    rate = float(np.mean(pair_pvalues(picks, 0, 1) < ALPHA))
    assert LOW <= rate <= HIGH, rate


@pytest.mark.parametrize("protocol", ["soba", "sata_user"])
@pytest.mark.parametrize("dialogues", [8, 20, 60])
def test_mm_marks_and_omnibus_hold_their_level(protocol, dialogues):
    picks, present = studies(3, protocol, dialogues, 2.0)
    family = np.array([pair_pvalues(picks, i, j) for i, j in ((0, 1), (0, 2), (1, 2))])
    one_pair = float(np.mean(family[0] < ALPHA))
    # Holm: some pair marked iff the smallest p-value times the number of pairs is below alpha
    any_after_holm = float(np.mean(family.min(axis=0) * len(family) < ALPHA))
    assert LOW <= one_pair <= HIGH, one_pair
    # Holm keeps the family-wise rate at or below 5 % (1.6 % for SATA at 8 dialogues: at most 5 % is all it promises)
    assert 0.01 <= any_after_holm <= HIGH, any_after_holm
    per = picks[:1000].sum(axis=2).astype(float)  # (replicates, dialogues, models)
    omnibus, _, _ = omnibus_pvalues(per, n_resamples=400, seed=2)
    rate = float(np.mean(omnibus < ALPHA))
    assert 0.025 <= rate <= 0.075, rate  # 1000 replicates: standard error 0.7 points


@pytest.mark.parametrize("conversations", [8, 20, 60])
@pytest.mark.parametrize("sd", [0.5, 2.0])
def test_interactive_ssa_mark_holds_its_level(conversations, sd):
    verdicts = simulate_conversation_verdicts((0.6, 0.6), conversations // 2, 10, REPLICATES, conversation_sd=sd,
                                              seed=conversations + int(10 * sd))
    sums = verdicts.sum(axis=2).T.astype(float)
    p = permutation_pvalues(sums, np.full(conversations, 10.0), np.arange(conversations) >= conversations // 2,
                            n_resamples=PATTERNS, seed=1)
    # 8 conversations split 4 / 4 have 35 distinct splits (each with its mirror image): the largest level a
    # test can hold below 5 % is 1 / 35 = 2.9 %, and the layer never goes above its level (item 4 of issue 23)
    low = 0.02 if conversations == 8 else LOW
    assert low <= float(np.mean(p < ALPHA)) <= HIGH


def test_the_exact_per_turn_test_does_not_and_the_mark_has_power():
    """The secondary per-turn binomial fires far too often on the same studies; at a real
    effect the mark's power matches the reference permutation of dialogue means."""
    from parlai_acute.stats.paired import binomial_test

    picks, _ = studies(2, "soba", 20, 2.0, replicates=500)
    a_only, b_only = picks[..., 0].sum(axis=(1, 2)), picks[..., 1].sum(axis=(1, 2))
    naive = np.mean([binomial_test(int(b), int(a + b)) < ALPHA for a, b in zip(a_only, b_only)])
    assert naive > 0.25
    picks, present = studies(2, "soba", 60, 1.0, quality=[0.0, 0.5], replicates=1000)
    sums = (picks[..., 1].astype(float) - picks[..., 0]).sum(axis=2).T
    power = np.mean(sign_flip_pvalues(sums, n_resamples=PATTERNS, seed=1) < ALPHA)
    reference = np.mean(sign_flip_pvalues(sums / present.sum(axis=1)[:, None], n_resamples=PATTERNS, seed=1) < ALPHA)
    assert power > 0.5 and abs(power - reference) < 0.05, (power, reference)


def test_the_per_turn_analysis_mark_is_this_test():
    df = simulate_turns({"A": 0.0, "B": 0.4}, "pm", "soba", dialogues=20, dialogue_sd=1.0, seed=5)
    config = AnalysisConfig(bootstrap=0, seed=3, permutations=2000, cluster="dialogue")
    pair = analyze(df, config).designs[0].comparisons.iloc[0]
    picks, _, clusters = choice_matrix(df, ["A", "B"], "dialogue")
    sums = np.bincount(clusters, weights=picks[:, 1].astype(float) - picks[:, 0])
    assert pair.cluster_pvalue == pytest.approx(sign_flip_pvalues(sums, n_resamples=2000, seed=3)[0])
    assert pair.clusters == 20 and pair.cluster_low < pair["diff"] < pair.cluster_high


@pytest.mark.parametrize("clusters", [5, 6, 7, 9, 10])
def test_no_mark_above_its_level_at_few_clusters(clusters):
    """Issue 23 item 4: the worst case for a sign-flip test is cluster totals that are all
    distinct (continuous; many judgments per worker). The textbook mid-p, which counts the
    observed pattern and its mirror image half, then fires 6.25 % at 5 and 6 clusters and
    5.08 % at 9 and 10; the p-value of the layer stays at or below 5 % (and 1 % for '**')
    at every size, and at 5 clusters it cannot mark at all. 40,000 seeded studies per size
    (standard error 0.11 points at 5 %)."""
    rng = np.random.default_rng(clusters)
    sums = rng.normal(size=(clusters, 40_000)) * rng.integers(1, 12, size=(clusters, 1))
    p = sign_flip_pvalues(sums)
    for alpha in (ALPHA, ALPHA / 5):
        assert float(np.mean(p < alpha)) <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / 40_000)
    # the textbook mid-p on the same studies (what the layer reported before) does fire above 5 %
    signs = 1.0 - 2.0 * ((np.arange(2 ** clusters)[:, None] >> np.arange(clusters)[None, :]) & 1)
    stat, observed = np.abs(signs @ sums), np.abs(sums.sum(axis=0))
    textbook = ((stat > observed + 1e-9).sum(axis=0) + 0.5 * (np.abs(stat - observed) <= 1e-9).sum(axis=0)) / 2 ** clusters
    if clusters in (5, 6, 9, 10):
        assert float(np.mean(textbook < ALPHA)) > ALPHA + 0.0005
    if clusters == 5:
        assert not (p < ALPHA).any()


@pytest.mark.parametrize("protocol", ["soba", "sata_user"])
@pytest.mark.parametrize("dialogues", [5, 6])
def test_per_turn_mark_at_five_and_six_dialogues(protocol, dialogues):
    """The same at the sizes the issue names, on 0/1 per-turn picks (ties of the data still
    count half, so the test is not as conservative as the plain p-value)."""
    picks, _ = studies(2, protocol, dialogues, 2.0, replicates=20_000)
    rate = float(np.mean(pair_pvalues(picks, 0, 1) < ALPHA))
    assert rate <= ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / 20_000)
    assert rate == 0.0 if dialogues == 5 else rate > 0.025
