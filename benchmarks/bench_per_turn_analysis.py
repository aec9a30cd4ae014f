"""Per-turn analysis speed: MM-SATA, 4 models, 100,000 turns from 10,000 dialogues, 1,000
dialogue-bootstrap resamples; exclusions and flags, pick rates with exact and bootstrap
intervals, Cochran's Q, six McNemar pairs with Holm, position bias. Target < 5 s.

The table is built and validated once (``turns_table``, timed separately as
``validate_seconds``); the timed part is :func:`parlai_acute.per_turn.analysis.analyze`.
"""
import time

TARGET_S = 5.0


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.per_turn.analysis import AnalysisConfig, analyze
    from parlai_acute.per_turn.simulate import simulate_turns
    from parlai_acute.per_turn.turns import turns_table

    quality = {"model_a": 0.3, "model_b": 0.1, "model_c": 0.0, "model_d": -0.2}
    raw = simulate_turns(quality, "mm", "sata_user", dialogues=10_000, turns_per_dialogue=10, workers=1_000,
                         dialogue_sd=0.5, seed=0, validate=False)
    start = time.perf_counter()
    df = turns_table(raw)
    validate = time.perf_counter() - start
    config = AnalysisConfig(bootstrap=1000, seed=0)
    analyze(df.head(4000), config)  # warm up imports
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = analyze(df, config)
        best = min(best, time.perf_counter() - start)
    group = result.designs[0].groups[0]
    assert group.turns == 100_000 and group.dialogues == 10_000 and group.boot_means.shape == (1000, 4)
    yield {"name": "perturn_analysis_seconds", "value": round(best, 3), "unit": "s", "target": TARGET_S,
           "ratio": round(best / TARGET_S, 3), "turns": 100_000, "dialogues": 10_000, "models": 4,
           "bootstrap": 1000, "validate_seconds": round(validate, 3)}
