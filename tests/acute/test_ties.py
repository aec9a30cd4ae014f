"""Ties in ACUTE-Eval (issue 24): the judgments table holds a tie and "both bad", every surface
counts a tie as half a win through the one definition (acute/estimands.py), the analysis reports
win, tie and loss rates and Davidson's tie-aware ranking beside Bradley-Terry."""
from __future__ import annotations

import pandas as pd
import pytest

from parlai_acute.acute.judgments import judgments_table, read_judgments, write_judgments
from parlai_acute.acute.simulate import simulate_judgments
from parlai_acute.errors import UserError


def judgment(**fields) -> dict:
    row = {"worker": "w1", "model_left": "a", "model_right": "b", "dialogue_left": "a-1", "dialogue_right": "b-1",
           "winner": "a", "reason": "more fun", "question_key": "engaging", "is_onboarding": False}
    return {**row, **fields}


def test_a_table_without_the_outcome_column_is_all_wins():
    table = judgments_table([judgment()])
    assert table.loc[0, "outcome"] == "win" and table.loc[0, "loser"] == "b" and table.loc[0, "winner_side"] == "left"


@pytest.mark.parametrize("outcome", ["tie", "both_bad"])
def test_a_tie_has_no_winner_and_reads_back_as_written(tmp_path, outcome):
    table = judgments_table([judgment(winner="", outcome=outcome), judgment(outcome="")])
    assert list(table["outcome"]) == [outcome, "win"]
    assert list(table.loc[0, ["winner", "loser", "winner_side"]]) == ["", "", ""]
    for name in ("j.csv", "j.jsonl"):
        write_judgments(tmp_path / name, table)
        assert read_judgments(tmp_path / name).equals(table)


@pytest.mark.parametrize("fields, words", [
    ({"outcome": "draw"}, "field 'outcome' must be one of win, tie, both_bad"),
    ({"outcome": "tie"}, "a tie has no winner"),
    ({"winner": ""}, "(a tie: set field 'outcome' to tie or both_bad)"),
])
def test_a_wrong_outcome_is_one_line_naming_the_field(fields, words):
    with pytest.raises(UserError) as err:
        judgments_table([judgment(**fields)])
    assert words in str(err.value) and "\n" not in str(err.value)


def test_a_live_task_saves_a_tie_as_an_outcome_without_a_choice():
    from parlai_acute.acute.judgments import judgments_from_unit_data

    pairing = {"dialogue_ids": ["a-1", "b-1"], "speakers_to_eval": ["a", "b"]}
    units = [{"worker_name": "w1", "unit_id": "1", "data": {"comparisons": [
        {"pairing": pairing, "left": 1, "choice": "", "outcome": "tie", "reason": "same", "question_key": "q"},
        {"pairing": pairing, "left": 0, "choice": "b", "reason": "better", "question_key": "q"},
        {"pairing": pairing, "left": 0, "choice": "", "reason": "", "question_key": "q"}]}}]  # unanswered
    table = judgments_from_unit_data(units)
    assert list(table["outcome"]) == ["tie", "win"] and list(table["winner"]) == ["", "b"]


def test_simulated_ties_follow_davidsons_model():
    table = simulate_judgments({"a": 0.0, "b": 0.0}, 4000, seed=1, tie=1.0, both_bad=0.25)
    ties = table["outcome"] != "win"
    assert abs(ties.mean() - 1 / 3) < 0.03  # equal strengths: nu / (2 + nu)
    assert abs((table["outcome"] == "both_bad").sum() / ties.sum() - 0.25) < 0.04
    assert (table.loc[ties, "winner"] == "").all()
    judgments_table(table)  # valid as a table
    assert simulate_judgments({"a": 0.0, "b": 1.0}, 50, seed=3).equals(
        simulate_judgments({"a": 0.0, "b": 1.0}, 50, seed=3, tie=0.0))


# --- the statistics: a tie is half a win; Davidson's model fits ties as ties ---------------------------------

def tied_table(seed: int = 2, n: int = 600, workers: int = 30, tie: float = 1.0) -> pd.DataFrame:
    return simulate_judgments({"a": 0.5, "b": 0.0, "c": -0.5}, n, seed=seed, workers=workers, tie=tie, both_bad=0.3)


def test_matchups_count_a_tie_as_half_a_win_in_the_worker_test_too():
    import numpy as np

    from parlai_acute.stats.winrates import matchups

    table = tied_table()
    m = matchups(table, cluster="worker", min_clusters=5).set_index(["model_a", "model_b"])
    for (a, b), row in m.iterrows():
        pair = table[table["model_left"].isin([a, b]) & table["model_right"].isin([a, b])]
        ties = (pair["outcome"] != "win").sum()
        assert row["ties"] == ties and row["n"] == len(pair)
        assert row["winrate_b"] == pytest.approx(((pair["winner"] == b).sum() + ties / 2) / len(pair))
        assert row["ci_low"] < row["winrate_b"] < row["ci_high"]
    # all ties: no evidence either way, whatever the number of workers
    even = table.assign(winner="", loser="", winner_side="", outcome="tie")
    m = matchups(even, cluster="worker")
    assert (m["winrate_b"] == 0.5).all() and (m["pvalue"] >= 0.5).all() and (m["pvalue_exact"] == 1).all()
    assert m["ci_low"].isna().all() and m["reason"].str.contains("same mean difference").all()  # said in words
    assert np.isfinite(m["ci_low_exact"]).all()


def test_ordinary_bradley_terry_takes_a_tie_as_half_a_win():
    from parlai_acute.stats.bradley_terry import bradley_terry, fit_counts
    from parlai_acute.stats.winrates import outcome_matrices

    table = tied_table()
    wins, ties, models = outcome_matrices(table)
    assert (ties == ties.T).all() and ties.sum() // 2 == (table["outcome"] != "win").sum()
    ranking = bradley_terry(table, bootstrap=50, cluster="worker").set_index("model")
    expected = fit_counts(wins + ties / 2)
    assert ranking.loc[models, "strength"].to_numpy() == pytest.approx(expected)
    assert (ranking["ci_low"] < ranking["strength"]).all() and (ranking["strength"] < ranking["ci_high"]).all()


def test_davidson_is_the_maximum_of_its_likelihood_and_recovers_the_tie_parameter():
    import numpy as np
    from scipy import optimize

    from parlai_acute.stats.davidson import davidson, fit_davidson
    from parlai_acute.stats.winrates import outcome_matrices

    table = tied_table(n=6000, workers=60)
    wins, ties, models = outcome_matrices(table)
    theta, tau = fit_davidson(wins, ties, alpha=0.0)

    def minus_loglik(x):  # the model written out judgment-type by judgment-type
        th, nu = np.append(x[:-1], -x[:-1].sum()), np.exp(x[-1])
        total = 0.0
        for i in range(3):
            for j in range(3):
                if i != j:
                    pi, pj = np.exp(th[i]), np.exp(th[j])
                    denom = pi + pj + nu * np.sqrt(pi * pj)
                    total += wins[i, j] * np.log(pi / denom) + (ties[i, j] / 2) * np.log(nu * np.sqrt(pi * pj) / denom)
        return -total

    best = optimize.minimize(minus_loglik, np.zeros(3), method="BFGS").x
    assert theta == pytest.approx(np.append(best[:-1], -best[:-1].sum()), abs=1e-4)
    assert tau == pytest.approx(best[-1], abs=1e-4)
    assert np.exp(tau) == pytest.approx(1.0, abs=0.1)  # simulated with nu = 1
    ranking, tie = davidson(table, bootstrap=100)
    assert list(ranking["model"]) == ["a", "b", "c"]
    assert tie["nu_low"] < tie["nu"] < tie["nu_high"] and "workers" in tie["interval"]
    assert tie["tie_if_equal"] == pytest.approx(tie["nu"] / (2 + tie["nu"]))
    # many workers: the sandwich, which agrees with the worker bootstrap
    many = davidson(table.assign(worker=[f"w{i % 600}" for i in range(len(table))]), bootstrap=200)[1]
    boot = davidson(table.assign(worker=[f"w{i % 150}" for i in range(len(table))]), bootstrap=200)[1]
    assert "sandwich" in many["interval"]
    assert many["nu_high"] - many["nu_low"] == pytest.approx(boot["nu_high"] - boot["nu_low"], rel=0.35)


@pytest.mark.parametrize("change, words", [
    ({"outcome": "win"}, "no judgment is a tie"),
    ({"outcome": "tie", "winner": "", "loser": "", "winner_side": ""}, "every judgment is a tie"),
])
def test_davidson_without_a_tie_or_without_a_win_says_why(change, words):
    from parlai_acute.stats.davidson import davidson

    table = simulate_judgments({"a": 0.0, "b": 0.5}, 40, seed=1).assign(**change)
    with pytest.raises(UserError, match=words):
        davidson(table)


def test_win_tie_and_loss_rates_with_intervals():
    from parlai_acute.stats.winrates import OUTCOME_SHARES, outcome_rates

    table = tied_table()
    rates = outcome_rates(table, resamples=200)
    assert (rates["won_b"] + rates["tie_rate"] + rates["won_a"]).to_numpy() == pytest.approx(1.0)
    for share in OUTCOME_SHARES:
        assert (rates[f"{share}_low"] >= 0).all() and (rates[f"{share}_high"] <= 1).all()
        assert (rates[f"{share}_low"] < rates[f"{share}_high"]).all()
        assert rates[f"{share}_interval"].str.contains("bootstrap of whole workers").all()
    few = outcome_rates(tied_table(workers=3), resamples=200)
    assert few["tie_rate_interval"].str.contains("Clopper-Pearson").all()


def test_a_tie_is_its_own_label_in_agreement_and_picks_no_side():
    from parlai_acute.stats.agreement import label_counts
    from parlai_acute.stats.winrates import side_bias

    table = tied_table()
    counts = label_counts(table)
    assert list(counts.columns) == [0, 1, 2] and counts[2].sum() > 0
    assert side_bias(table)["n"] == (table["outcome"] == "win").sum()


def test_the_analysis_reports_ties_and_writes_them(tmp_path):
    import json

    from parlai_acute import api
    from parlai_acute.acute.analysis import write_outputs

    result = api.analyze("acute", tied_table(), warn=False, bootstrap=50, max_per_worker=100)
    q = result.questions[0]
    assert q.outcomes is not None and q.tie_ranking is not None and q.tie_parameter["nu"] > 0
    paths = write_outputs(result, tmp_path / "out", report=False)
    assert {"outcomes.csv", "ranking_ties.csv", "ranking_ties.json"} <= set(paths)
    saved = json.loads((tmp_path / "out" / "ranking_ties.json").read_text())
    assert saved["questions"][0]["tie_parameter"]["model"].startswith("Davidson")
    forced = api.analyze("acute", simulate_judgments({"a": 0.0, "b": 1.0}, 60, seed=0), warn=False, bootstrap=50)
    assert forced.questions[0].outcomes is None  # the paper's forced choice: as it was
    assert "outcomes.csv" not in write_outputs(forced, tmp_path / "forced", report=False)


# --- other people's data: no cap, no reasons, Chatbot Arena battles -------------------------------------------

def test_no_cap_keeps_every_judgment_and_zero_stays_refused(tmp_path, capsys):
    from parlai_acute import api
    from parlai_acute.scripts.main import main

    table = simulate_judgments({"a": 0.0, "b": 1.0}, 60, seed=0, workers=3, reason="")
    capped = api.analyze("acute", table, warn=False, bootstrap=0, min_reason_chars=0)
    assert len(capped.kept) == 3  # the protocol's default: one per worker and pair
    free = api.analyze("acute", table, warn=False, bootstrap=0, min_reason_chars=0, max_per_worker="none")
    assert len(free.kept) == 60 and free.cap == "none"
    rules = {r["reason"]: r for r in free.exclusion_summary()}
    assert rules["over per-worker cap"]["setting"].startswith("off") and rules["over per-worker cap"]["judgments"] == 0
    assert rules["never gave a reason"]["setting"] == "off, min_reason_chars=0: no reasons were collected"
    with pytest.raises(UserError, match="min_reason_chars"):  # no reasons and the rule on: it says what to set
        api.analyze("acute", table, warn=False, bootstrap=0)
    with pytest.raises(UserError, match="max_per_worker must be at least 1, got 0"):
        api.analyze("acute", table, warn=False, bootstrap=0, max_per_worker=0)
    with pytest.raises(UserError, match="max_per_worker must be a whole number of at least 1 or 'none'"):
        api.analyze("acute", table, warn=False, bootstrap=0, max_per_worker="all")
    write_judgments(tmp_path / "j.csv", table)
    assert main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "-o", str(tmp_path / "zero"),
                 "--max-per-worker", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--max-per-worker must be at least 1, got 0" in err
    assert main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "-o", str(tmp_path / "all"),
                 "--max-per-worker", "all"]) == 2
    assert "--max-per-worker must be a whole number of at least 1, or 'none' for no cap" in capsys.readouterr().err
    assert main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "-o", str(tmp_path / "out"),
                 "--max-per-worker", "none", "--min-reason-chars", "0", "--no-report", "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "60 judgments kept, 0 excluded" in out and "per-worker cap: none" in out
    assert "never gave a reason 0 (off, min_reason_chars=0: no reasons were collected)" in out
    assert "over per-worker cap 0 (off, max_per_worker='none': no cap)" in out


def write_battles(path, n=300, jsonl=False):
    import json

    from parlai_acute.acute.simulate import arena_battles

    battles = arena_battles({"gpt-4": 1.0, "claude-2": 0.6, "vicuna-13b": 0.0}, n, seed=0)
    path.write_text("".join(json.dumps(b) + "\n" for b in battles) if jsonl else json.dumps(battles))
    return battles


@pytest.mark.parametrize("jsonl", [False, True])
def test_arena_battles_map_onto_the_judgments_table(tmp_path, jsonl):
    from parlai_acute.acute.imports import arena_judgments

    battles = write_battles(tmp_path / "battles.json", jsonl=jsonl)
    table = arena_judgments(tmp_path / "battles.json")
    assert len(table) == len(battles)
    for battle, row in zip(battles, table.to_dict("records")):
        assert (row["model_left"], row["model_right"], row["worker"]) == (battle["model_a"], battle["model_b"],
                                                                          battle["judge"])
        assert row["outcome"] == {"model_a": "win", "model_b": "win", "tie": "tie",
                                  "tie (bothbad)": "both_bad"}[battle["winner"]]
        assert row["winner"] == {"model_a": battle["model_a"], "model_b": battle["model_b"]}.get(battle["winner"], "")
        assert row["pair_id"] == battle["question_id"] and row["timestamp"] == battle["tstamp"]
    english = arena_judgments(tmp_path / "battles.json", languages=["English"], max_turns=1)
    kept = [b for b in battles if b["language"] == "English" and b["turn"] <= 1]
    assert list(english["pair_id"]) == [b["question_id"] for b in kept]


def test_arena_import_command_then_analyze(tmp_path, capsys):
    from parlai_acute.scripts.main import main

    battles = write_battles(tmp_path / "battles.json")
    assert main(["acute", "import", "--arena", str(tmp_path / "battles.json"), "-o", str(tmp_path / "j.csv")]) == 0
    out = capsys.readouterr().out
    ties = sum(b["winner"] == "tie" for b in battles)
    assert f"{len(battles)} battles" in out and f"{ties} ties" in out
    assert main(["acute", "analyze", "--judgments", str(tmp_path / "j.csv"), "-o", str(tmp_path / "out"),
                 "--max-per-worker", "none", "--min-reason-chars", "0", "--no-report", "--bootstrap", "50"]) == 0
    out = capsys.readouterr().out
    assert f"{len(battles)} judgments kept" in out and "Davidson" in out and "tie parameter nu" in out


@pytest.mark.parametrize("record, words", [
    ({"model_a": "x", "model_b": "y", "judge": "u"}, "missing field 'winner'"),
    ({"model_a": "x", "model_b": "y", "judge": "u", "winner": "draw"}, "field 'winner' is 'draw'"),
])
def test_a_wrong_battle_is_one_line_naming_the_record(tmp_path, record, words):
    import json

    from parlai_acute.acute.imports import arena_judgments

    (tmp_path / "b.json").write_text(json.dumps([record]))
    with pytest.raises(UserError) as err:
        arena_judgments(tmp_path / "b.json")
    assert words in str(err.value) and "record 1" in str(err.value) and "\n" not in str(err.value)


def test_the_stop_rule_and_adaptive_selection_count_a_tie_as_half_a_win():
    from parlai_acute import api
    from parlai_acute.acute.estimands import headline
    from parlai_acute.monitoring.stopping import StopRule

    table = simulate_judgments({"alpha": 3.0, "beta": 0.0}, 200, seed=1, workers=200, tie=0.6)
    rule = StopRule("acute", {"alpha": 0.05}, [("alpha", "beta")])
    decision = None
    for row in table.to_dict("records"):
        decision = decision or rule.add([row])
    assert decision and decision["stopped"] == "decided"
    judged = table.iloc[:decision["judgments"]]
    assert (judged["outcome"] != "win").any()
    head = headline(api.analyze("acute", judged, warn=False, bootstrap=0))
    expected = head[head["measure"] == "win rate"]["estimate"].iloc[0]
    assert decision["comparisons"]["beta vs alpha"]["estimate"] == pytest.approx(expected)


def test_the_live_scheduler_hands_a_stored_tie_to_adaptive_selection():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mephisto"))
    from acute_task_helpers import make_pairings

    from parlai_acute.mephisto_tasks.acute.scheduler import Scheduler

    pairings = make_pairings(3, xss_in=None)
    history = [{"worker": "w1", "pair_id": "a0|b0", "is_onboarding": False, "models": ["model_a", "model_b"],
                "winner": "", "outcome": "tie", "timestamp": 1.0}]
    sched = Scheduler(pairings, comparisons_per_unit=2, max_per_worker=3, use_onboarding=False, history=history,
                      selection="adaptive", stop={"alpha": 0.05})
    (row,) = sched.judgments
    assert row["outcome"] == "tie" and row["winner"] == ""
    assert sched.stop.judgments() == 1 and sched.decision is None  # the stop rule read the tie
    assert len(sched.assign("w2")) == 2  # adaptive selection weighs pairs with the tie as half a win each


def test_a_pilot_with_ties_scores_a_tie_as_the_test_does():
    import numpy as np

    from parlai_acute.acute.power import pilot_outcomes

    table = simulate_judgments({"a": 0.0, "b": 1.0}, 200, seed=0, workers=20, tie=2.0)
    values, clusters = pilot_outcomes(table)
    raw = np.where(table["outcome"] != "win", 0.0, np.where(table["winner"] == "b", 1.0, -1.0))
    assert values == pytest.approx(raw - raw.mean())  # one matchup: +1, 0 (a tie), -1, centred
    assert set(clusters) == {f"w{i}|a vs b" for i in range(20)}
