"""Confidence sequences and sequential decisions (parlai_acute.stats.sequential).

Calibration is checked the way it is used: seeded simulations looked at after every
observation, with cluster random effects, count how often the sequence ever excluded the
truth (time-uniform miscoverage), which must stay at or below alpha up to Monte Carlo error.
"""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

from parlai_acute.errors import UserError
from parlai_acute.stats import sequential as sq

ALPHA = 0.05


def ever_rejected(x, m, bets):
    return sq.sequential_test(x, m, ALPHA, bets) >= 0


def mc_limit(runs, alpha=ALPHA):
    """alpha plus three Monte Carlo standard errors."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


@pytest.mark.parametrize("bets", ["mixture", "plugin"])
def test_time_uniform_coverage_of_a_rate_away_from_one_half(bets):
    rng = np.random.default_rng(1)
    x = (rng.random((1500, 400)) < 0.8).astype(float)  # e.g. an SSA sensibleness rate of 0.8
    assert ever_rejected(x, 0.8, bets).mean() <= mc_limit(1500)
    assert ever_rejected(x, 0.6, bets).mean() > 0.95  # and it does learn


@pytest.mark.parametrize("design", [
    {"size": 10, "cluster_sd": 1.5, "outcome": "binary"},      # per-turn PM-SOBA, dialogue taste
    {"size": 10, "cluster_sd": 3.0, "outcome": "binary"},      # very strong dialogue effects
    {"size": 6, "cluster_sd": 1.5, "outcome": "difference"},  # per-turn SATA pick differences
])
def test_null_false_positive_rate_with_cluster_effects_looked_at_after_every_cluster(design):
    rng = np.random.default_rng(2)
    x = sq.simulate_cluster_means(rng, 1500, 150, design["size"], 0.5, design["cluster_sd"], design["outcome"])
    bets = sq.bets_for([design["size"]])
    assert ever_rejected(x, 0.5, bets).mean() <= mc_limit(1500)


def test_acute_workers_of_varied_sizes_keep_the_level_and_judgments_as_units_do_not():
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 20, 120)  # workers contribute different numbers of judgments
    means = sq.simulate_cluster_means(rng, 800, 120, sizes, 0.5, cluster_sd=1.5)
    assert ever_rejected(means, 0.5, "plugin").mean() <= mc_limit(800)
    # the same workers' judgments treated as independent: the guarantee is lost
    judgments = np.random.default_rng(4).random((800, 120, 5)) < means[..., None]
    assert ever_rejected(judgments.reshape(800, -1).astype(float), 0.5, "mixture").mean() > 0.2


def test_mixture_bets_on_binary_outcomes_are_the_beta_binomial_mixture():
    k, n = 37, 60
    x = np.r_[np.ones(k), np.zeros(n - k)]
    ours = sq.log_capital(x, 0.5, bets="mixture")[-1]
    exact = sq.beta_mixture_log_factor(k, n, 0.5, *sq.PRIOR)
    assert ours == pytest.approx(exact, abs=0.05)  # quadrature over the Beta prior
    # and the closed form itself against numerical integration of the mixture
    integral, _ = integrate.quad(lambda q: q ** k * (1 - q) ** (n - k) * stats.beta.pdf(q, 5, 5), 0, 1)
    assert exact == pytest.approx(math.log(integral) - n * math.log(0.5), rel=1e-8)


def test_normal_mixture_boundary_is_where_the_mixture_martingale_reaches_one_over_alpha():
    rho = sq.normal_mixture_rho(25.0)
    for t in (10, 100, 1000):
        v = t * 0.25
        s = sq.normal_mixture_halfwidth(t, ALPHA, 0.5, rho) * t
        assert sq.normal_mixture_log_martingale(s, v, rho) == pytest.approx(math.log(1 / ALPHA))
    # rho tuned for a time is tightest there
    w = lambda r: sq.normal_mixture_halfwidth(100, ALPHA, 0.5, r)  # noqa: E731
    assert w(sq.normal_mixture_rho(25.0)) <= min(w(1.0), w(100.0))


def test_width_shrinks_at_the_known_rate():
    """Half-widths of a CS shrink like sqrt(log t / t): x16 observations divide the width by ~3.5 (not 4)."""
    hw = sq.normal_mixture_halfwidth(np.array([1000, 16000]), ALPHA, 0.5, v_opt=1000)
    assert 3.0 < hw[0] / hw[1] < 4.0
    rng = np.random.default_rng(5)
    x = (rng.random(16000) < 0.5).astype(float)
    cs = sq.confidence_sequence(x, ALPHA)
    looks, width = cs["looks"], cs["upper"] - cs["lower"]
    w1, w16 = width[np.searchsorted(looks, 999)], width[-1]
    assert 2.7 < w1 / w16 < 4.2  # sqrt(16 log 1000 / log 16000) = 3.4, with grid and sampling noise
    assert np.all(np.diff(width) <= 1e-12)  # running intersection: never widens


def test_confidence_sequence_covers_and_matches_the_pointwise_test():
    rng = np.random.default_rng(6)
    x = rng.beta(2, 5, 300)  # continuous outcomes, mean 2/7
    for bets in ("mixture", "plugin"):
        cs = sq.confidence_sequence(x, ALPHA, bets=bets)
        assert np.all(cs["lower"] <= 2 / 7) and np.all(cs["upper"] >= 2 / 7)
        inside = (cs["lower"][-1] + 0.01 < 0.45 < cs["upper"][-1] - 0.01)
        assert inside == (sq.sequential_test(x, 0.45, ALPHA, bets) < 0)
    scaled = sq.confidence_sequence(2 * x - 1, ALPHA, lo=-1, hi=1)  # differences in [-1, 1]
    assert scaled["lower"][-1] == pytest.approx(2 * sq.confidence_sequence(x, ALPHA)["lower"][-1] - 1)


def test_many_distinct_cluster_means_are_binned_conservatively():
    rng = np.random.default_rng(7)
    x = rng.beta(3, 3, 3000)  # > BINS distinct values
    binned = sq.confidence_sequence(x, ALPHA)
    exact = sq.confidence_sequence(np.round(x, 2), ALPHA)  # < BINS distinct values
    assert binned["lower"][-1] < 0.5 < binned["upper"][-1]
    assert binned["upper"][-1] - binned["lower"][-1] == pytest.approx(exact["upper"][-1] - exact["lower"][-1], abs=0.01)


def test_cluster_stream_and_decide_on_a_tidy_table():
    rng = np.random.default_rng(8)
    dialogues = np.repeat(np.arange(80), 10)
    taste = rng.normal(0, 1, 80)[dialogues]
    df = pd.DataFrame({"dialogue": dialogues, "a_won": rng.random(800) < special.expit(1.2 + taste),
                       "timestamp": np.arange(800.0)})
    stream = sq.cluster_stream(df, "a_won", "dialogue", "timestamp")
    assert len(stream) == 80 and stream["judgments"].eq(10).all()
    assert stream["judgments_so_far"].tolist() == list(range(10, 801, 10))
    out = sq.decide(stream, ALPHA)
    assert out["decided"] == "above" and out["bets"] == "plugin" and out["lower"] > 0.5
    assert out["decided_at_judgments"] <= 800 and out["more"] is None
    tie = sq.decide(sq.cluster_stream(df.assign(a_won=rng.random(800) < 0.5), "a_won", "dialogue"), ALPHA)
    assert tie["decided"] == "undecided" and tie["lower"] < 0.5 < tie["upper"]
    assert tie["more"] is None or tie["more"] > 0
    empty = sq.decide(sq.cluster_stream(df.head(0), "a_won", "dialogue"))
    assert empty["decided"] == "undecided" and empty["estimate"] is None


def test_bad_input_is_refused_in_one_line():
    with pytest.raises(UserError, match="must lie in"):
        sq.confidence_sequence([0.2, 1.5])
    with pytest.raises(UserError, match="alpha"):
        sq.log_capital(np.zeros(3), 0.5, alpha=1.5)
    with pytest.raises(UserError, match="bets"):
        sq.log_capital(np.zeros(3), 0.5, bets="kelly")


def test_ssa_rate_with_conversation_effects_is_covered_at_every_look():
    """Interactive SSA: a model's sensibleness rate, items clustered in conversations with their
    own log-odds shift; the estimand is the mean over conversations of their rate."""
    rate, sd = 0.75, 1.0
    truth, _ = integrate.quad(lambda u: special.expit(special.logit(rate) + u) * stats.norm.pdf(u, 0, sd), -12, 12)
    rng = np.random.default_rng(9)
    x = sq.simulate_cluster_means(rng, 1500, 120, 8, rate, cluster_sd=sd)
    assert ever_rejected(x, truth, "plugin").mean() <= mc_limit(1500)
    assert ever_rejected(x, truth - 0.12, "plugin").mean() > 0.9


def test_cluster_stream_matches_a_pandas_group_by_with_missing_clusters_values_and_times():
    """The stream is built with numpy; pandas' group-by is the independent reference: clusters in
    the order they completed (ties in order of first row), a missing value left out of the mean but
    counted in the size, a row without a cluster in none, a missing time as the earliest."""
    rng = np.random.default_rng(5)

    def reference(df, order):
        at = df[order].fillna(-np.inf) if order else pd.Series(np.arange(len(df), dtype=float), index=df.index)
        work = df.assign(_at=at)
        grouped = work.groupby("c", sort=False).agg(mean=("v", "mean"), judgments=("v", "size"), done=("_at", "max"))
        grouped = grouped.sort_values("done", kind="stable").reset_index()
        grouped["judgments_so_far"] = np.searchsorted(np.sort(at.to_numpy()), grouped["done"].to_numpy(), side="right")
        return grouped.rename(columns={"c": "cluster"})[["cluster", "mean", "judgments", "judgments_so_far"]]

    for trial in range(300):
        n = int(rng.integers(1, 60))
        df = pd.DataFrame({"c": [f"w{k}" for k in rng.integers(0, 12, n)], "v": rng.choice([0.0, 0.5, 1.0, 0.3], n),
                           "t": rng.choice([1.0, 2.0, 3.0, np.nan, 5.0], n)})
        df.loc[rng.random(n) < 0.15, "c"] = None
        df.loc[rng.random(n) < 0.1, "v"] = np.nan
        for order in ("t", None):
            pd.testing.assert_frame_equal(sq.cluster_stream(df, "v", "c", order), reference(df, order))
