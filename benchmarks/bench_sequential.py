"""Anytime-valid early stopping (parlai_acute.stats.sequential) against the fixed designs.

Every simulated run is looked at after every judgment and stops at the first look where the
confidence sequence excludes "no difference" (alpha 0.05; the bettor
:func:`~parlai_acute.stats.sequential.bets_for` picks for the design), or when the
budget (5 x the fixed design) is spent.

* ``sequential_savings_0.2`` / ``sequential_savings_0.1``: median judgments to a decision /
  the judgments of the fixed exact-binomial design (``acute power`` / ``per-turn power
  --design pm-soba``) sized for a 0.1 difference (win rate 0.6) at alpha 0.05 and power 0.8
  (210), when the true win rate is 0.7 or 0.6; targets <= 0.35 and <= 1.0. Independent
  judgments (each its own cluster), as the fixed design assumes; the clustered figure
  (dialogues of 10 turns, dialogue log-odds sd 1) is printed beside it against the fixed
  design inflated by its design effect.
* ``sequential_false_positive``: share of null runs (equal models, dialogue taste sd 1.5 on
  the log-odds, 10 turns per dialogue, 100 dialogues) that declared a difference; target
  <= alpha. The per-judgment sequence on the same data (ignoring the dialogues) is printed
  beside it to show why the unit must be the dialogue.
* ``sequential_crossed_false_stop``: ACUTE with reused conversations (issue 23): a pool of 20
  conversation pairs (quality sd 1.0 on the log-odds) judged by 80 workers x 10 (taste sd 0.5),
  equal models, looked at after every 4 workers: share of runs the stop rule of ``status`` and the
  live tasks (the two-facet asymptotic sequence and the one-facet betting one) stopped with a
  difference; target <= alpha + 2 points (``_60``: a pool of 60 pairs, 120 workers, a look
  every 6). Beside it: the one-facet betting sequence alone
  (conversations held fixed, what status used before), the two-facet sequence alone, the
  Bonferroni-over-looks fixed test, and the fixed analysis once at the end (no peeking).
* ``sequential_ssa_crossed_false_stop``: static SSA with workers crossed with contexts (issue 23;
  ``ssa-static``: two models reply to 200 contexts, each reply labelled by 5 of a pool of 6
  workers, worker x model taste sd 1.0), equal models, looked at after every 10 contexts: share of
  runs the stop rule of ``status`` (the two-facet sequence with the analysis' split variance, and
  the disjoint rates over contexts) stopped with a difference; target <= alpha + 2 points
  (``_10``: a pool of 10 workers). Beside it the disjoint rates alone (workers held fixed, what
  status used before), the two-facet sequence alone and the fixed split test once at the end.
* ``sequential_ssa_rate_miss``: one model's rate, the same design at 6, 10 and 30 workers: share of
  runs whose status interval (two-facet) misses the population rate at some look (the worst of the
  three); beside it the sequence over contexts alone (workers fixed).
* ``sequential_ssa_crossed_power_<workers>_<effect>``: the same at a real difference (logit 0.8, 1.5).
* ``sequential_crossed_power_<pool>_<effect>``: the same designs (pools of 20 and 60 pairs) at a
  real difference (log-odds 0.8 and 1.5): the stop rule's power and median workers at the stop,
  beside the one-facet rule's (bought with its false stops) and the fixed analysis' at the end.
"""
import numpy as np

ALPHA, POWER, RUNS = 0.05, 0.8, 4000


def _to_decision(idx: np.ndarray, per_obs: int, budget_obs: int) -> np.ndarray:
    return np.where(idx >= 0, (idx + 1) * per_obs, budget_obs * per_obs)


def run():
    from parlai_acute.stats.power import required_n_exact
    from parlai_acute.stats.sequential import bets_for, sequential_test, simulate_cluster_means

    fixed = required_n_exact(0.6, 0.5, ALPHA, POWER)["n"]
    budget = 5 * fixed
    rng = np.random.default_rng(0)
    for delta, target in ((0.2, 0.35), (0.1, 1.0)):
        x = simulate_cluster_means(rng, RUNS, budget, 1, 0.5 + delta)
        n = _to_decision(sequential_test(x, 0.5, ALPHA), 1, budget)
        # clustered: dialogues of 10 turns; the fixed design needs its design effect too
        y = simulate_cluster_means(rng, RUNS // 4, budget // 2, 10, 0.5 + delta, cluster_sd=1.0)
        nc = _to_decision(sequential_test(y, 0.5, ALPHA, bets_for([10])), 10, budget // 2)
        icc = 1.0 / (1.0 + np.pi ** 2 / 3)  # latent-scale intra-dialogue correlation of sd 1
        fixed_clustered = fixed * (1 + 9 * icc)
        yield {"name": f"sequential_savings_{delta}", "value": round(float(np.median(n)) / fixed, 3),
               "target": target, "median_judgments": float(np.median(n)), "fixed_design": fixed,
               "mean_judgments": round(float(n.mean()), 1), "decided_share": round(float((n < budget).mean()), 4),
               "clustered_value": round(float(np.median(nc)) / fixed_clustered, 3),
               "clustered_median_judgments": float(np.median(nc)), "clustered_fixed_design": round(fixed_clustered),
               "runs": RUNS, "alpha": ALPHA, "power": POWER, "seed": 0}
    null = simulate_cluster_means(rng, RUNS, 100, 10, 0.5, cluster_sd=1.5)
    fp = float((sequential_test(null, 0.5, ALPHA, bets_for([10])) >= 0).mean())
    turns = simulate_cluster_means(rng, RUNS // 4, 100, 10, 0.5, cluster_sd=1.5)  # per-judgment stream below
    raw = np.random.default_rng(1).random((RUNS // 4, 100, 10)) < turns[..., None]
    naive = float((sequential_test(raw.reshape(RUNS // 4, -1).astype(float), 0.5, ALPHA) >= 0).mean())
    yield {"name": "sequential_false_positive", "value": round(fp, 4), "target": ALPHA, "runs": RUNS,
           "dialogues": 100, "turns_per_dialogue": 10, "dialogue_sd": 1.5,
           "per_judgment_ignoring_dialogues": round(naive, 4), "seed": 0}
    yield from crossed()
    yield from ssa_crossed()


def _rates(result: dict, clock: str = "workers") -> dict:
    names = {"stop rule": "stop_rule", "one-facet": "one_facet", "two-facet": "two_facet_alone",
             "bonferroni looks": "bonferroni_looks", "fixed once": "fixed_once_at_end"}
    out = {names[k]: round(v["rate"], 4) for k, v in result.items() if k in names}
    out |= {f"{names[k]}_median_{clock}": v[f"median_{clock}"] for k, v in result.items()
            if k in ("stop rule", "one-facet")}
    return out


def ssa_crossed(runs: int = 2000):
    """Rows for static SSA's two-facet stop rule (module docstring)."""
    from parlai_acute.stats.crossed_designs import peeking_ssa

    for workers, seed, suffix in ((6, 23, ""), (10, 25, "_10")):
        null = peeking_ssa(200, workers, 0.0, runs, seed=seed, every=10, alpha=ALPHA)
        yield {"name": f"sequential_ssa_crossed_false_stop{suffix}", "value": round(null["stop rule"]["rate"], 4),
               "target": ALPHA + 0.02, **_rates(null, "contexts"), "contexts": 200, "workers": workers,
               "labels_per_reply": 5, "look_every_contexts": 10, "runs": runs, "seed": seed}
    from parlai_acute.stats.crossed_designs import peeking_ssa_rate

    misses = {w: peeking_ssa_rate(200, w, runs // 2, seed=31, every=10, alpha=ALPHA) for w in (6, 10, 30)}
    yield {"name": "sequential_ssa_rate_miss", "value": round(max(m["two-facet"] for m in misses.values()), 4),
           "target": ALPHA + 0.02, **{f"two_facet_{w}": round(m["two-facet"], 4) for w, m in misses.items()},
           **{f"one_facet_{w}": round(m["one-facet"], 4) for w, m in misses.items()},
           "population_rate": round(misses[6]["truth"], 4), "contexts": 200, "workers": [6, 10, 30],
           "look_every_contexts": 10, "runs": runs // 2, "seed": 31}
    for workers in (6, 10):
        for effect in (0.8, 1.5):
            res = peeking_ssa(200, workers, effect, runs // 4, seed=24, every=10, alpha=ALPHA)
            yield {"name": f"sequential_ssa_crossed_power_{workers}_{effect}",
                   "value": round(res["stop rule"]["rate"], 4), **_rates(res, "contexts"), "contexts": 200,
                   "workers": workers, "look_every_contexts": 10, "effect_log_odds": effect, "runs": runs // 4,
                   "seed": 24}


def crossed(runs: int = 2000):
    """Rows for the two-facet stop rule (module docstring)."""
    from parlai_acute.stats.crossed_designs import peeking

    null = peeking(20, 80, 0.0, runs, seed=23, every=4, alpha=ALPHA)
    yield {"name": "sequential_crossed_false_stop", "value": round(null["stop rule"]["rate"], 4),
           "target": ALPHA + 0.02, **_rates(null), "components": null["components"], "pool": 20, "workers": 80,
           "judgments_per_worker": 10, "look_every_workers": 4, "conversation_sd": 1.0, "worker_sd": 0.5,
           "runs": runs, "seed": 23}
    wide = peeking(60, 120, 0.0, runs // 2, seed=25, every=6, alpha=ALPHA)
    yield {"name": "sequential_crossed_false_stop_60", "value": round(wide["stop rule"]["rate"], 4),
           "target": ALPHA + 0.02, **_rates(wide), "components": wide["components"], "pool": 60, "workers": 120,
           "look_every_workers": 6, "runs": runs // 2, "seed": 25}
    for pool, workers, every in ((20, 80, 4), (60, 120, 6)):
        for effect in (0.8, 1.5):
            res = peeking(pool, workers, effect, runs // 4, seed=24, every=every, alpha=ALPHA)
            yield {"name": f"sequential_crossed_power_{pool}_{effect}", "value": round(res["stop rule"]["rate"], 4),
                   **_rates(res), "pool": pool, "workers": workers, "look_every_workers": every,
                   "effect_log_odds": effect, "runs": runs // 4, "seed": 24}
