"""Adaptive pair selection for rankings (parlai_acute.stats.adaptive) against uniform allocation.

Models of known Bradley-Terry strengths, evenly spaced from +2 to -2 log-odds; each run starts
with every pair judged once, then draws batches of pairs (adaptively, by expected reduction
of the goal's uncertainty, or uniformly) until every contrast the goal depends on is
significant at Bonferroni level 0.05. ``adaptive_ranking_savings``: median judgments to a
resolved top-3 of 30 models, adaptive / uniform (target <= 0.7); the share of runs whose
resolved answer was wrong (the error rate) is printed for both, and the same for 10 models
and for the full ranking of 10.

``adaptive_top_k_decided``: judgments until the top 3 is *decided* by anytime-valid pairwise
tests (the ``status --top-k`` / ``stop_top_k`` rule: each of the 3 decided ahead of every other
model by its own sequential test, Bonferroni over all pairs, alpha 0.05), adaptive (open pairs
across the current boundary) / uniform, for 10 and 30 models, with each design's empirical
error rate of the decided top 3 (must be <= alpha).
"""
import numpy as np


def _pair(strengths, goal, runs, batch, budget):
    from parlai_acute.stats.adaptive import simulate

    ad = simulate(strengths, goal, 3, True, runs=runs, batch=batch, budget=budget, seed=0)
    un = simulate(strengths, goal, 3, False, runs=runs, batch=batch, budget=budget, seed=0)
    return ad, un


def run():
    ad, un = _pair(np.linspace(2, -2, 30), "top-k", runs=20, batch=100, budget=400_000)
    ad10, un10 = _pair(np.linspace(1.5, -1.5, 10), "top-k", runs=40, batch=20, budget=100_000)
    adr, unr = _pair(np.linspace(1.5, -1.5, 10), "ranking", runs=40, batch=20, budget=100_000)
    yield {"name": "adaptive_ranking_savings", "value": round(ad["median"] / un["median"], 3), "target": 0.7,
           "adaptive_median": ad["median"], "uniform_median": un["median"],
           "adaptive_error_rate": ad["error_rate"], "uniform_error_rate": un["error_rate"],
           "models10_top3_ratio": round(ad10["median"] / un10["median"], 3),
           "models10_top3_medians": [ad10["median"], un10["median"]],
           "models10_top3_error_rates": [ad10["error_rate"], un10["error_rate"]],
           "models10_ranking_ratio": round(adr["median"] / unr["median"], 3),
           "models10_ranking_medians": [adr["median"], unr["median"]],
           "models10_ranking_error_rates": [adr["error_rate"], unr["error_rate"]],
           "resolved_share": min(ad["resolved_share"], un["resolved_share"]), "runs": 20, "seed": 0, "delta": 0.05}
    yield from top_k_rows()


def top_k_rows():
    from parlai_acute.stats.ranksets import simulate_top_k

    out = {}
    for models, spread in ((10, 1.5), (30, 2.0)):
        strengths = np.linspace(spread, -spread, models)
        ad = simulate_top_k(strengths, 3, True, runs=40, alpha=0.05, seed=0)
        un = simulate_top_k(strengths, 3, False, runs=40, alpha=0.05, seed=0)
        out[models] = {"ratio": round(ad["median"] / un["median"], 4), "adaptive_median": ad["median"],
                       "uniform_median": un["median"], "adaptive_error_rate": ad["error_rate"],
                       "uniform_error_rate": un["error_rate"],
                       "decided_share": min(ad["decided_share"], un["decided_share"])}
    yield {"name": "adaptive_top_k_decided", "value": out[30]["ratio"], "target": 0.7,
           **{f"models{m}_{key}": v for m, row in out.items() for key, v in row.items()},
           "error_rate_target": 0.05, "runs": 40, "seed": 0, "alpha": 0.05, "k": 3}
