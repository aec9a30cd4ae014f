"""A table's columns checked side by side give the same table, and the same error, as one after the other."""
import pandas as pd
import pytest

from parlai_acute import parallel
from parlai_acute.acute.judgments import judgments_table
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.errors import UserError


def _raw():
    df = simulate_judgments({"a": 0.0, "b": 0.4, "c": 0.8}, 300, seed=3, workers=12, tie=0.6).astype(object)
    df.loc[5, "worker"] = "  padded  "
    df.loc[7, "duration"] = "12.5"  # text that is a number
    df.loc[9, "is_onboarding"] = "False"
    return df


def _checked(monkeypatch, cores: int, df):
    monkeypatch.setattr(parallel, "cores", lambda: cores)
    return judgments_table(df)


def test_columns_side_by_side_equal_one_after_the_other(monkeypatch):
    alone, together = _checked(monkeypatch, 1, _raw()), _checked(monkeypatch, 4, _raw())
    pd.testing.assert_frame_equal(alone, together, check_exact=True)


def test_the_first_bad_row_is_named_either_way(monkeypatch):
    bad = _raw()
    bad.loc[40, "winner_side"] = "middle"
    bad.loc[80, "duration"] = "soon"
    messages = []
    for cores in (1, 4):
        with pytest.raises(UserError) as caught:
            _checked(monkeypatch, cores, bad)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "row 41" in messages[0], messages


def test_the_first_failure_in_order_is_raised(monkeypatch):
    monkeypatch.setattr(parallel, "cores", lambda: 4)
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
