"""Statistics computed side by side give the same numbers, and the same failure, as one after the other."""
import pandas as pd
import pytest

from parlai_acute import parallel
from parlai_acute.acute.analysis import AnalysisConfig, analyze
from parlai_acute.acute.simulate import simulate_judgments


def _question(monkeypatch, cores: int):
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: cores)
    df = simulate_judgments({"a": 0.0, "b": 0.4, "c": 0.8}, 600, seed=3, workers=12, dialogues_per_model=4,
                            worker_sd=0.5, tie=0.6)
    return analyze(df, AnalysisConfig(bootstrap=100, seed=1)).questions[0]


def test_side_by_side_analysis_equals_one_after_the_other(monkeypatch):
    alone, together = _question(monkeypatch, 1), _question(monkeypatch, 4)
    for name in ("ranking", "matchups", "outcomes", "tie_ranking"):
        pd.testing.assert_frame_equal(getattr(alone, name), getattr(together, name), check_exact=True)
    assert alone.agreement == together.agreement and alone.tie_parameter == together.tie_parameter


def test_the_first_failure_in_order_is_raised(monkeypatch):
    monkeypatch.setattr(parallel.os, "cpu_count", lambda: 4)
    ran = []

    def fail(name):
        def call():
            ran.append(name)
            raise ValueError(name)
        return call

    with pytest.raises(ValueError, match="^first$"):
        parallel.run_side_by_side({"ok": lambda: 1, "first": fail("first"), "second": fail("second")})
    assert sorted(ran) == ["first", "second"]  # the other calls still finished before it returned
    assert parallel.run_side_by_side({"a": lambda: 1, "b": lambda: 2}) == {"a": 1, "b": 2}
