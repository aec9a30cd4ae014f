"""ACUTE-Eval analysis speed and memory, the full pipeline in memory (exclusions, the matchups'
tests over workers with Holm and exact secondary tests, Bradley-Terry with 1,000 worker-bootstrap
and judgment-bootstrap resamples, agreement).

* ``acute_analysis_seconds``: 50,000 judgments over 10 models, 2,000 workers; target < 3 s.
* ``acute_analysis_1m``: 1,000,000 judgments over 50 models, 20,000 workers (worker taste sd
  0.5), one run; target < 10 s (``value``) and < 2 GB peak memory of the analysis
  (``peak_rss_mb``: this process's peak resident memory, reset just before the analysis,
  so it counts the judgments table already in memory but not how it was made); ``cpu_s``: the
  analysis's CPU time (time.process_time), less sensitive than the wall clock to other jobs on
  the machine.
"""
import time

from benchmarks.memory import peak_rss_mb, reset_peak

TARGET_S = 3.0
TARGET_1M_S = 10.0
TARGET_1M_MB = 2048.0


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.acute.analysis import AnalysisConfig, analyze
    from parlai_acute.acute.simulate import simulate_judgments

    strengths = {f"model_{i}": 0.15 * i for i in range(10)}
    df = simulate_judgments(strengths, 50_000, seed=0, workers=2000)
    config = AnalysisConfig(bootstrap=1000, seed=0)
    analyze(df.head(2000), config)  # warm up imports and caches
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = analyze(df, config)
        best = min(best, time.perf_counter() - start)
    assert len(result.kept) == 50_000 and result.questions[0].ranking is not None
    yield {"name": "acute_analysis_seconds", "value": round(best, 3), "unit": "s", "target": TARGET_S,
           "ratio": round(best / TARGET_S, 3), "judgments": 50_000, "models": 10, "bootstrap": 1000}

    big = simulate_judgments({f"model_{i}": 0.03 * i for i in range(50)}, 1_000_000, seed=0, workers=20_000,
                             worker_sd=0.5)
    measured = reset_peak()
    start, cpu = time.perf_counter(), time.process_time()
    result = analyze(big, config)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = peak_rss_mb() if measured else float("nan")
    q = result.questions[0]
    assert len(result.kept) + len(result.excluded) == 1_000_000 and len(q.matchups) == 50 * 49 // 2
    yield {"name": "acute_analysis_1m", "value": round(seconds, 2), "unit": "s", "target": TARGET_1M_S,
           "ratio": round(seconds / TARGET_1M_S, 3), "cpu_s": round(cpu, 2), "peak_rss_mb": round(peak, 1),
           "peak_target_mb": TARGET_1M_MB,
           "judgments": 1_000_000, "models": 50, "workers": 20_000, "bootstrap": 1000,
           "marked_matchups": int((q.matchups["mark"] != "").sum()),
           "tests": sorted(set(q.matchups["test"].str.split(" \\(").str[0]))}
