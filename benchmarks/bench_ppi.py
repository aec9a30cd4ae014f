"""Prediction-powered inference (parlai_acute.stats.ppi) with simulated judges.

People's answers are 0/1 with rate 0.6 (a win rate, a pick rate, a sensibleness rate); the
judge answers 2,000 further items and the 200 items people answered. ``ppi_width_ratio``:
PPI++ interval width / people-only width with the same 200 human answers, for a judge that
agrees with people on 90% of items (target <= 0.7), with its coverage of the true rate over
the simulated runs printed beside it; the biased (agrees 80%, says "yes" 20 points more
often) and useless (random) judges' ratios and coverages too.
"""
import numpy as np

RUNS, N, BIG_N, RATE = 20_000, 200, 2_000, 0.6


def judge_answers(rng, truth, kind):
    if kind == "good":
        return np.where(rng.random(truth.shape) < 0.9, truth, 1 - truth)
    if kind == "biased":
        agree = np.where(rng.random(truth.shape) < 0.8, truth, 1 - truth)
        return np.maximum(agree, rng.random(truth.shape) < 0.25)
    return (rng.random(truth.shape) < 0.5).astype(float)


def run():
    from parlai_acute.stats.ppi import ppi_mean

    rng = np.random.default_rng(0)
    rows = {}
    for kind in ("good", "biased", "useless"):
        y = (rng.random((RUNS, N)) < RATE).astype(float)
        hidden = (rng.random((RUNS, BIG_N)) < RATE).astype(float)
        res = ppi_mean(y, judge_answers(rng, y, kind), judge_answers(rng, hidden, kind))
        rows[kind] = {"ratio": float(np.median((res["upper"] - res["lower"]) / (res["people_upper"] - res["people_lower"]))),
                      "coverage": float(((res["lower"] <= RATE) & (RATE <= res["upper"])).mean()),
                      "people_coverage": float(((res["people_lower"] <= RATE) & (RATE <= res["people_upper"])).mean()),
                      "effective_n": float(np.median(res["effective_n"]))}
    good = rows["good"]
    yield {"name": "ppi_width_ratio", "value": round(good["ratio"], 3), "target": 0.7,
           "coverage": round(good["coverage"], 4), "effective_human_judgments": round(good["effective_n"], 1),
           "people_only_coverage": round(good["people_coverage"], 4),
           **{f"{k}_{m}": round(v[m], 4) for k, v in rows.items() if k != "good" for m in ("ratio", "coverage")},
           "runs": RUNS, "human": N, "judge_only": BIG_N, "rate": RATE, "seed": 0}
