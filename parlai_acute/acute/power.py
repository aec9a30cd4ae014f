"""Sample size for ACUTE-Eval: judgments needed to detect a win rate different from ``p0``, and
what a budget of judgments detects.

The test is the two-sided exact binomial test of model A's win rate against ``p0`` (0.5); the
power primitives are protocol-neutral (:mod:`parlai_acute.stats.power`). Here are the tables
``parlai-acute acute power`` prints and records (one row per difference, one row per budget), and
a pilot's judgments turned into the outcomes whose within-worker correlation the plan needs.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.stats.power import (detectable_delta_exact, detectable_delta_normal,
                                      required_n_exact)

__all__ = ["sample_size_table", "detectable_table", "pilot_outcomes", "pilot_facets", "CONVERSATION_STEPS"]

#: Conversations per model the two-facet plan is printed for (beside the fewest that can do).
CONVERSATION_STEPS = (10, 20, 50, 100, 200, 500)


def sample_size_table(deltas, p0: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """One row per difference: exact n (stays), first n, normal-approximation n."""
    rows = []
    for delta in deltas:
        res = required_n_exact(p0 + delta, p0, alpha, power)
        rows.append({"p0": p0, "p1": p0 + delta, "delta": delta, "alpha": alpha, "power": power,
                     "n_exact": res["n"], "n_exact_first": res["n_first"], "power_at_n_exact": res["power_at_n"],
                     "n_normal": math.ceil(res["n_normal"] - 1e-9), "scanned_to": res["scanned_to"]})
    return pd.DataFrame(rows)


def detectable_table(budgets, p0: float = 0.5, alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """One row per budget of judgments: smallest detectable difference, exact and normal."""
    rows = []
    for n in budgets:
        rows.append({"n": n, "p0": p0, "alpha": alpha, "power": power,
                     "delta_exact": detectable_delta_exact(n, p0, alpha, power),
                     "delta_normal": detectable_delta_normal(n, p0, alpha, power)})
    return pd.DataFrame(rows)


def _pilot(df: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, pd.Series, np.ndarray, np.ndarray]:
    """A pilot's kept judgments (the analysis' own quality control, no cap), the earlier-named model
    of each matchup, the matchup's name, the outcome centred per matchup (+1 when the later-named
    model won, -1 when it lost, 0 a tie: half a win, the test's own score) and the worker per
    matchup (the cluster)."""
    from parlai_acute.acute.analysis import AnalysisConfig, apply_exclusions
    from parlai_acute.stats.winrates import scored

    kept = apply_exclusions(df, AnalysisConfig(bootstrap=0, max_per_worker=max(1, len(df))))[0]
    if kept.empty:
        raise UserError("the pilot has no judgments left after quality control; check its workers")
    first, second, score = scored(kept)
    first, second = first.astype(str), second.astype(str)
    a, b = np.where(first < second, first, second), np.where(first < second, second, first)
    matchup = pd.Series(np.char.add(np.char.add(a, " vs "), b))
    value = pd.Series(np.where(first == b, 2 * score - 1, 1 - 2 * score))
    worker = (kept["worker"].astype(str).reset_index(drop=True) + "|" + matchup).to_numpy()
    return kept, a, matchup, (value - value.groupby(matchup).transform("mean")).to_numpy(), worker


def pilot_outcomes(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(outcome, cluster) per kept judgment of a pilot: +1 when the later-named model of the
    matchup won, -1 when it lost, 0 for a tie (half a win: the test's own score), centred per
    matchup; cluster = (worker, matchup). The same quality control as the analysis, so the
    correlation is that of the judgments the test will see."""
    _, _, _, centred, worker = _pilot(df)
    return centred, worker


def pilot_facets(df: pd.DataFrame) -> dict:
    """A pilot's outcomes with both sampled facets, for the two-facet plan: value (+1 when the
    later-named model won, -1 when it lost, 0 a tie; centred per matchup), worker (per matchup),
    and the conversation of each side (per matchup); ``reused``: some conversation served more
    than one judgment (without reuse the conversation facet cannot be told from the residual)."""
    kept, a, matchup, centred, worker = _pilot(df)
    left = kept["model_left"].astype(str).to_numpy() == a
    dl, dr = kept["dialogue_left"].astype(str).to_numpy(), kept["dialogue_right"].astype(str).to_numpy()
    conv_a = matchup + "|" + np.where(left, dl, dr)
    conv_b = matchup + "|" + np.where(left, dr, dl)
    reused = bool(conv_a.duplicated().any() or conv_b.duplicated().any())
    return {"value": centred, "worker": worker, "conversations": [conv_a.to_numpy(), conv_b.to_numpy()], "reused": reused}
