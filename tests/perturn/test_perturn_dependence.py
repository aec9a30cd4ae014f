"""Turns of one dialogue are not independent. Under the null (two equal models) with a
per-dialogue random effect, the per-turn binomial test rejects far more often than its
nominal 5%, while the dialogue-level cluster bootstrap stays near 5%; without the random
effect both are near 5% (so the excess is the dependence, not the test). Seeded."""
import numpy as np

from parlai_acute.perturn.analysis import choice_matrix
from parlai_acute.perturn.simulate import simulate_turns
from parlai_acute.stats import paired

REPS, DIALOGUES, TURNS, RESAMPLES = 250, 40, 10, 400


def rejection_rates(dialogue_sd: float, seed: int) -> tuple[float, float]:
    per_turn = cluster = 0
    rng = np.random.default_rng(seed)
    for rep in range(REPS):
        df = simulate_turns({"A": 0.0, "B": 0.0}, "pm", "soba", dialogues=DIALOGUES, turns_per_dialogue=TURNS,
                            dialogue_sd=dialogue_sd, seed=seed * 10_000 + rep, validate=False)
        picks, _, clusters = choice_matrix(df, ["A", "B"], "dialogue")
        per_turn += paired.binomial_test(int(picks[:, 1].sum()), len(picks)) < 0.05
        sums, counts = paired.cluster_sums(picks, clusters)
        boot = paired.cluster_bootstrap(sums, counts, RESAMPLES, rng)
        diff = picks[:, 1].mean() - picks[:, 0].mean()
        cluster += paired.bootstrap_pvalue(diff, (boot[:, 1] - boot[:, 0])[:, None])[0] < 0.05
    return per_turn / REPS, cluster / REPS


def test_per_turn_test_over_rejects_under_dialogue_effects_and_cluster_bootstrap_does_not():
    per_turn, cluster = rejection_rates(dialogue_sd=1.0, seed=1)
    # Monte Carlo standard error at 5% with 250 replicates is 1.4 points
    assert per_turn > 0.2, per_turn
    assert 0.015 <= cluster <= 0.09, cluster


def test_without_dialogue_effects_both_hold_their_level():
    per_turn, cluster = rejection_rates(dialogue_sd=0.0, seed=2)
    assert per_turn <= 0.09 and 0.015 <= cluster <= 0.09, (per_turn, cluster)
