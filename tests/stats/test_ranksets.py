"""Rank-sets and a decided top k (parlai_acute.stats.ranksets, parlai_acute.monitoring.status.top_k): right
when the pairwise decisions are, simultaneous coverage by simulation, fewer judgments adaptively."""
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from parlai_acute.errors import UserError
from parlai_acute.scripts.main import main
from parlai_acute.stats.ranksets import (mixture_log_wealth, pairwise_critical, rank_sets, simulate_top_k,
                                         simultaneous_ahead, top_k)
from parlai_acute.stats.sequential import log_capital
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.monitoring.status import top_k as status_top_k, top_k_lines

sys.path.insert(0, str(Path(__file__).parent))
from test_ppi import _bt_items, judge  # noqa: E402  the PPI tests' simulated items and judges


def _ahead(n, pairs):
    out = np.zeros((n, n), bool)
    for i, j in pairs:
        out[i, j] = True
    return out


def test_top_k_needs_every_pair_across_the_boundary_and_rank_sets_count_the_certain_ones():
    across = [(i, j) for i in (0, 1) for j in (2, 3, 4)]
    state = top_k(_ahead(5, across), 2)
    assert state["decided"] and state["top"].tolist() == [True, True, False, False, False]
    assert not top_k(_ahead(5, across[:-1]), 2)["decided"]  # model 1 vs 4 still open
    # chains do not count: 0 > 1 > 2 > ... decides only the adjacent pairs, not the top 1
    chain = _ahead(4, [(0, 1), (1, 2), (2, 3)])
    assert not top_k(chain, 1)["decided"]
    lower, upper = rank_sets(chain)
    assert lower.tolist() == [1, 2, 2, 2] and upper.tolist() == [3, 3, 3, 4]
    with pytest.raises(UserError, match="1 <= k < number of models"):
        top_k(chain, 4)


def test_mixture_wealth_from_counts_is_the_sequence_bettors():
    x = (np.random.default_rng(0).random(80) < 0.65).astype(float)
    assert np.allclose(log_capital(x, 0.5), mixture_log_wealth(np.cumsum(x), np.arange(1, 81)))


def test_decided_top_3_is_rarely_wrong_and_adaptive_needs_far_fewer_judgments():
    strengths = np.array([1.0, 0.8, 0.6, 0.4, 0.2, 0.0, -0.2, -0.4])  # the 3rd and 4th 0.2 log-odds apart
    alpha = 0.2
    ad = simulate_top_k(strengths, 3, True, runs=300, alpha=alpha, seed=1)
    un = simulate_top_k(strengths, 3, False, runs=100, alpha=alpha, seed=1)
    assert ad["decided_share"] == 1 and un["decided_share"] == 1
    assert ad["error_rate"] <= alpha and un["error_rate"] <= alpha
    assert ad["median"] < 0.5 * un["median"]


def test_wrong_decisions_would_show_in_the_error_rate():
    """Equal models have no top k: every decision is an error, and the anytime-valid tests keep
    them to at most alpha however often they are looked at."""
    res = simulate_top_k(np.zeros(2), 1, True, runs=2000, alpha=0.2, batch=1, budget=5_000, seed=2)
    assert res["decided_share"] <= 0.2 + 3 * np.sqrt(0.2 * 0.8 / 2000)  # one pair: no Bonferroni slack (0.157)


def _rank_runs(kind, runs=150, seed=11):
    from parlai_acute.stats.ppi import bradley_terry_rank_sets, ppi_bradley_terry

    rng = np.random.default_rng(seed)
    theta = np.array([0.9, 0.45, 0.0, -0.45, -0.9])
    rank = np.argsort(np.argsort(-theta)) + 1
    crit, _ = pairwise_critical(5, 0.05)
    out = {"covered": [], "people_covered": [], "intervals": [], "size": [], "people_size": []}
    for _ in range(runs):
        a, b, y = _bt_items(rng, theta, 300)
        au, bu, yu = _bt_items(rng, theta, 3000)
        res = ppi_bradley_terry(a, b, y, judge(rng, y, kind), au, bu, judge(rng, yu, kind), 5)
        sets = bradley_terry_rank_sets(res)
        out["covered"].append(((sets["rank_lower"] <= rank) & (rank <= sets["rank_upper"])).all())
        out["people_covered"].append(((sets["people_rank_lower"] <= rank) & (rank <= sets["people_rank_upper"])).all())
        dg = np.diag(res["cov"])
        sd = np.sqrt(np.maximum(dg[:, None] + dg[None, :] - 2 * res["cov"], 0)) + np.eye(5)
        err = (res["strength"][:, None] - res["strength"][None, :]) - (theta[:, None] - theta[None, :])
        out["intervals"].append((np.abs(err) <= crit * sd).all())
        out["size"].append(np.mean(sets["rank_upper"] - sets["rank_lower"] + 1))
        out["people_size"].append(np.mean(sets["people_rank_upper"] - sets["people_rank_lower"] + 1))
    return {k: np.mean(v) for k, v in out.items()}


@pytest.mark.parametrize("kind", ["good", "useless"])
def test_ppi_rank_sets_cover_the_true_ranking_and_a_good_judge_narrows_them(kind):
    res = _rank_runs(kind)
    # the simultaneous pairwise intervals under the rank-sets hold together at about 1 - alpha ...
    assert res["intervals"] >= 0.95 - 0.035
    # ... so the true ranks lie in every model's rank-set at once at least as often
    assert res["covered"] >= res["intervals"] and res["people_covered"] >= 0.95 - 0.035
    if kind == "good":
        assert res["size"] < 0.85 * res["people_size"]
    else:
        assert abs(res["size"] - res["people_size"]) < 0.1


def test_simultaneous_ahead_is_one_sided_and_skips_the_diagonal():
    theta = np.array([1.0, 0.0, -1.0])
    ahead = simultaneous_ahead(theta, np.eye(3) * 0.01)
    assert ahead.tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    assert not simultaneous_ahead(theta, np.eye(3) * 10).any()


def test_status_top_k_from_a_battles_table(tmp_path, capsys):
    strengths = {"a": 1.5, "b": 1.2, "c": 0.0, "d": -0.2, "e": -0.4}
    many = simulate_judgments(strengths, 4000, seed=3, workers=400, worker_sd=0.5)
    res = status_top_k(many, 2)
    [q] = res["questions"]
    assert res["decided"] and q["decided"] and q["top"] == ["a", "b"] and q["undecided"] == []
    assert res["pairs"] == 10 and res["per_pair_alpha"] == pytest.approx(0.005)
    few = status_top_k(many.iloc[:150], 2)
    assert not few["decided"] and few["questions"][0]["undecided"]
    assert all(set(u["models"]) & {"a", "b"} and u["judgments"] > 0 for u in few["questions"][0]["undecided"])
    assert "undecided" in "\n".join(top_k_lines(few)) and "DECIDED" in "\n".join(top_k_lines(res))
    # a model never judged still counts in the correction and is not in a decided set
    assert status_top_k(many, 2, models=[*strengths, "z"])["per_pair_alpha"] == pytest.approx(0.05 / 15)

    from parlai_acute.acute.judgments import write_judgments

    write_judgments(tmp_path / "j.csv", many)
    assert main(["status", "--table", str(tmp_path / "j.csv"), "--top-k", "2", "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "[engaging] top 2: a, b  DECIDED" in out and "rank-sets" in out
    assert json.loads((tmp_path / "s.json").read_text())["top_k"]["questions"][0]["top"] == ["a", "b"]
    assert main(["status", "--table", str(tmp_path / "j.csv"), "--top-k", "5"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--top-k 5 needs 1 <= --top-k < number of models (5" in err


def test_top_k_is_refused_for_other_protocols(tmp_path, capsys):
    from parlai_acute.ssa.labels import write_labels
    from parlai_acute.ssa.simulate import simulate_labels

    write_labels(tmp_path / "labels.csv", simulate_labels({"a": (0.8, 0.6), "b": (0.5, 0.3)}, contexts=20, seed=0))
    assert main(["status", "--table", str(tmp_path / "labels.csv"), "--top-k", "1"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--top-k ranks ACUTE-Eval models and these are ssa data" in err
