"""The one Holm correction (stats/multitest.py) against statsmodels' multipletests, with NaN
p-values (no test) left out of the family and left NaN, one family or one per row."""
import ast
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

import parlai_acute
from parlai_acute.stats.multitest import holm


def statsmodels_holm(p) -> np.ndarray:
    """What the package promises: statsmodels' Holm over the defined p-values, NaN elsewhere."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def test_one_family_is_statsmodels_holm():
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 12):
        p = rng.random(m) ** 3
        assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], rel=1e-12)
        assert np.array_equal(holm(p), multipletests(p, method="holm")[1])  # the same operations: equal bits
    tied = np.array([0.02, 0.01, 0.02, 0.5, 0.01])
    assert np.array_equal(holm(tied), multipletests(tied, method="holm")[1])
    # by hand: sorted .005*4=.02, .01*3=.03, .03*2=.06, .04*1=.04 -> running max .02 .03 .06 .06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1


def test_nan_p_values_stay_nan_and_are_not_counted_in_the_family():
    got = holm([0.01, np.nan, 0.04, np.nan])
    assert np.isnan(got[1]) and np.isnan(got[3])
    assert got[[0, 2]] == pytest.approx(multipletests([0.01, 0.04], method="holm")[1])  # a family of 2, not 4
    assert np.isnan(holm([np.nan, np.nan])).all() and holm([]).shape == (0,)


def test_families_in_rows_equal_statsmodels_row_by_row_nan_included():
    rng = np.random.default_rng(1)
    p = rng.random((40, 6)) ** 3
    p[rng.random(p.shape) < 0.2] = np.nan
    p[3] = np.nan  # a family with no test at all
    p[5, :] = 0.02  # ties
    expected = np.array([statsmodels_holm(row) for row in p])
    got = holm(p)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert got[np.isfinite(got)] == pytest.approx(expected[np.isfinite(expected)], rel=1e-12)


def test_more_dimensions_are_refused():
    with pytest.raises(ValueError, match="one family per row"):
        holm(np.zeros((2, 2, 2)))


def test_no_other_module_calls_multipletests():
    """One Holm: every other module adjusts p-values through stats.multitest.holm."""
    root = Path(parlai_acute.__file__).parent
    calls = []
    for path in root.rglob("*.py"):
        if path.name == "multitest.py" and path.parent.name == "stats":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "statsmodels.stats.multitest":
                calls.append(str(path.relative_to(root)))
    assert calls == []
