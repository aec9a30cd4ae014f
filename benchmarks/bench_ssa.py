"""SSA analysis and ConvAI2 calibration speed.

* ``ssa_analysis_seconds``: 50,000 labels (10 models x 1,000 contexts x 5 labels, 200 workers),
  1,000 cluster-bootstrap resamples; majority labels, exact and bootstrap intervals for
  sensibleness, specificity and SSA, 45 pairs x 3 measures with Holm, agreement with alpha
  intervals, workers. Target < 3 s. The table is validated once (``validate_seconds``).
* ``likert_calibration_seconds``: the closed-form posterior of 20,000 ratings from 500
  annotators over 10 models. Target < 5 s, with the calibrated means within 0.02 of a
  long-run Gibbs sampler on the same data (``gibbs_max_abs_difference``).
"""
import time

import numpy as np

SSA_TARGET_S = 3.0
CALIBRATION_TARGET_S = 5.0


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.ssa.analysis import SSAConfig, analyze
    from parlai_acute.ssa.labels import labels_table
    from parlai_acute.ssa.simulate import simulate_labels
    from parlai_acute.stats.calibration import calibrate, gibbs

    models = {f"model_{k}": (0.6 + 0.035 * k, 0.3 + 0.05 * k) for k in range(10)}
    raw = simulate_labels(models, contexts=1000, labels_per_item=5, workers=200, seed=0, validate=False)
    start = time.perf_counter()
    df = labels_table(raw)
    validate = time.perf_counter() - start
    config = SSAConfig(bootstrap=1000, seed=0)
    analyze(df.head(2000), config)  # warm up imports
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = analyze(df, config)
        best = min(best, time.perf_counter() - start)
    assert len(df) == 50_000 and len(result.models) == 10 and len(result.pairs) == 135
    yield {"name": "ssa_analysis_seconds", "value": round(best, 3), "unit": "s", "target": SSA_TARGET_S,
           "ratio": round(best / SSA_TARGET_S, 3), "labels": 50_000, "models": 10, "bootstrap": 1000,
           "validate_seconds": round(validate, 3)}

    rng = np.random.default_rng(0)
    n, m, a = 20_000, 10, 500
    model, annotator = rng.integers(0, m, n), rng.integers(0, a, n)
    y = np.linspace(2.0, 3.2, m)[model] + rng.normal(0, 1, a)[annotator] + rng.normal(0, 1, n)
    calibrate(y[:100], model[:100], annotator[:100])  # warm up
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        cal = calibrate(y, model, annotator, models=m, annotators=a)
        best = min(best, time.perf_counter() - start)
    start = time.perf_counter()
    check = gibbs(y, model, annotator, iterations=2000, burn_in=500, chains=32, seed=1, models=m, annotators=a)
    gibbs_seconds = time.perf_counter() - start
    gap = float(np.abs(check["quality"] - cal.quality).max())
    yield {"name": "likert_calibration_seconds", "value": round(best, 4), "unit": "s", "target": CALIBRATION_TARGET_S,
           "ratio": round(best / CALIBRATION_TARGET_S, 5), "ratings": n, "annotators": a, "models": m,
           "gibbs_max_abs_difference": round(gap, 4), "gibbs_within_0.02": gap < 0.02,
           "gibbs_draws": check["draws"], "gibbs_seconds": round(gibbs_seconds, 2)}
