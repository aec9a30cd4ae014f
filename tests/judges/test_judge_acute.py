"""`parlai-acute judge acute`: scripted judges (our handling) and the embedded SmolLM2 (a real, weak judge)."""
from __future__ import annotations

import pandas as pd
import pytest

from judge_fixtures import SCRIPTED, comparison_pairings, read_jsonl, summary_of, three_model_pairings, write_pairings
from parlai_acute.acute.analysis import AnalysisConfig, analyze
from parlai_acute.acute.judgments import read_judgments
from parlai_acute.judges.parse import REMINDER, parse_reply
from parlai_acute.scripts.main import main


def judge(tmp_path, script, *extra, pairings=None, name="out"):
    path = write_pairings(tmp_path / "pairings.jsonl", pairings or three_model_pairings())
    outdir = tmp_path / name
    code = main(["judge", "acute", "--pairings", path, "--judge", f"{SCRIPTED} --script {script}",
                 "--cache", str(tmp_path / "cache.sqlite"), "--outdir", str(outdir), "--backoff", "0", *extra])
    assert code == 0
    return outdir


def test_order_invariant_judge_feeds_the_analysis_unchanged(tmp_path, capsys):
    outdir = judge(tmp_path, "longest", "--analyze")
    out = capsys.readouterr().out
    assert "6 comparisons: 6 consistent, 0 inconsistent" in out and "5/5 gold pairs right in every order: passed" in out
    df = read_judgments(outdir / "judgments.csv")  # the table people's judgments use
    assert len(df) == 6 and set(df["worker"]) == {"judge:tests.judges.scripted_judge:ScriptedJudgeAgent"}
    wins = df.groupby("winner").size().to_dict()
    assert wins == {"chatty": 4, "plain": 2}
    assert (outdir / "analysis" / "report.html").is_file() and "chatty" in (outdir / "analysis" / "results.json").read_text()
    raw = read_judgments(outdir / "raw_judgments.csv")
    assert len(raw) == 12 and (raw["winner_side"] == "left").sum() == 6  # both orders, no position bias
    summary = summary_of(outdir)
    assert summary["templates"] == ["acute_engaging@1"] and summary["seed"] == 0
    assert summary["judge_config"]["backend"] == "parlai" and summary["settings"]["order_mode"] == "rotations"
    assert summary["onboarding"]["passed"] and summary["onboarding"]["orders_correct"] == 10
    assert summary["position_bias"][0]["first_rate"] == 0.5


def test_first_position_judge_is_inconsistent_biased_and_fails_onboarding(tmp_path, capsys):
    outdir = judge(tmp_path, "first")
    out = capsys.readouterr().out
    assert "0 consistent, 6 inconsistent (6 followed the position; rule: drop)" in out
    assert "position bias: first position chosen 12/12 (100%" in out
    assert "FAILED (flagged" in out
    assert read_judgments(outdir / "raw_judgments.csv")["winner_side"].eq("left").all()
    assert pd.read_csv(outdir / "judgments.csv").empty  # dropped, never guessed
    summary = summary_of(outdir)
    assert summary["items"]["inconsistent_following_position"] == 6
    assert summary["position_bias"][0]["pvalue"] < 0.001
    assert not summary["onboarding"]["passed"] and summary["onboarding"]["orders_correct"] == 5
    items = read_jsonl(outdir / "items.jsonl")
    assert {i["status"] for i in items} == {"inconsistent"} and all(i["follows_position"] for i in items)

    # rule "tie": one judgment with outcome tie per item, and the analysis sees 50% in every matchup
    tied = judge(tmp_path, "first", "--inconsistent", "tie", name="tie")
    df = read_judgments(tied / "judgments.csv")
    assert len(df) == 6 and (df["outcome"] == "tie").all() and (df["winner"] == "").all()
    result = analyze(df, AnalysisConfig(bootstrap=0, max_per_worker=len(df)))
    assert (result.questions[0].matchups["winrate_b"] == 0.5).all()


def test_garbage_is_retried_then_missing(tmp_path, capsys):
    outdir = judge(tmp_path, "garbage", "--retries", "2", "--no-onboarding", "--num-items", "2")
    out = capsys.readouterr().out
    assert "2 missing (4 unparseable and 0 failed orders)" in out
    assert "calls: 12 made" in out  # 2 items x 2 orders x (1 + 2 retries)
    assert pd.read_csv(outdir / "judgments.csv").empty and pd.read_csv(outdir / "raw_judgments.csv").empty
    attempts = read_jsonl(outdir / "items.jsonl")[0]["orders"][0]["attempts"]
    assert len(attempts) == 3 and REMINDER in attempts[1]["prompt"] and REMINDER not in attempts[0]["prompt"]
    # the rerun asks nothing: every answer, unparseable ones too, is in the cache
    judge(tmp_path, "garbage", "--retries", "2", "--no-onboarding", "--num-items", "2", name="again")
    assert "calls: 0 made, 12 from cache" in capsys.readouterr().out


def test_bad_input_is_one_line(tmp_path, capsys):
    path = write_pairings(tmp_path / "p.jsonl", three_model_pairings())
    assert main(["judge", "acute", "--pairings", path, "--outdir", str(tmp_path / "o"), "--question", "funny"]) == 2
    assert "unknown question preset 'funny'" in capsys.readouterr().err
    assert main(["judge", "acute", "--pairings", path, "--outdir", str(tmp_path / "o"), "--judge",
                 f"{SCRIPTED} --script first", "--answer-from", "logprobs"]) == 2
    assert "--answer-from logprobs needs a llama.cpp" in capsys.readouterr().err
    assert main(["judge", "acute", "--pairings", str(tmp_path / "none.jsonl"), "--outdir", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------------------- the embedded judge, for real

def test_embedded_smollm2_judge_with_answer_token_probabilities(tmp_path, embedded_judge, capsys):
    gold = write_pairings(tmp_path / "gold.jsonl", [dict(p, is_onboarding=True, correct_answer="human_evaluated")
                                                    for p in comparison_pairings(2)])
    path = write_pairings(tmp_path / "p.jsonl", comparison_pairings(1))
    args = ["judge", "acute", "--pairings", path, "--onboarding", gold, "--answer-from", "logprobs",
            "--concurrency", "2", "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(tmp_path / "o")]
    assert main(args) == 0
    first = capsys.readouterr().out
    summary = summary_of(tmp_path / "o")
    assert summary["judge_config"]["weights"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert summary["judge_config"]["decoding"]["inference"] == "greedy"
    assert summary["costs"]["calls"] == 6 and summary["costs"]["prompt_tokens"] > 6 * 200
    assert summary["onboarding"]["orders"] == 4 and 0 <= summary["onboarding"]["orders_correct"] <= 4
    for item in read_jsonl(tmp_path / "o" / "items.jsonl"):
        for order in item["orders"]:
            probs = order["attempts"][0]["label_logprobs"]
            assert probs and set(probs) <= {"1", "2"}  # read from the answer token, not from prose
            assert order["verdict_positions"] == int(max(probs, key=probs.get)) - 1
            assert 0.5 <= order["probability"] <= 1
    assert main(args) == 0  # rerun: all from the cache, same answers
    assert "calls: 0 made, 6 from cache" in capsys.readouterr().out
    assert summary_of(tmp_path / "o")["onboarding"] == summary["onboarding"]
    print(first)


def test_embedded_smollm2_text_answers_are_parsed_strictly_or_missing(tmp_path, embedded_judge):
    path = write_pairings(tmp_path / "p.jsonl", comparison_pairings(1))
    assert main(["judge", "acute", "--pairings", path, "--no-onboarding", "--retries", "1", "--concurrency", "2",
                 "--judge", "-m parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 24",
                 "--cache", str(tmp_path / "c.sqlite"), "--outdir", str(tmp_path / "o")]) == 0
    assert summary_of(tmp_path / "o")["costs"]["prompt_tokens"] > 200  # llama.cpp's usage, through batch_act
    (item,) = read_jsonl(tmp_path / "o" / "items.jsonl")
    for order in item["orders"]:
        texts = [a["text"] for a in order["attempts"]]
        parsed = [parse_reply(t, "one", ["1", "2"], True) for t in texts]
        assert len(texts) <= 2 and all(p is None for p in parsed[:-1])
        if order["verdict_positions"] is None:
            assert parsed[-1] is None and len(texts) == 2  # retried, then missing: never guessed
        else:
            assert parsed[-1].value == str(order["verdict_positions"] + 1)


# ----------------------------------------------------------------------------- an endpoint on loopback

ENDPOINT = "-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url {url} --max-new-tokens 16"


def test_endpoint_judge_counts_tokens(tmp_path, llama_server, capsys):
    path = write_pairings(tmp_path / "p.jsonl", comparison_pairings(1))
    for mode in ("logprobs", "text"):
        assert main(["judge", "acute", "--pairings", path, "--no-onboarding", "--answer-from", mode, "--retries", "0",
                     "--judge", ENDPOINT.format(url=llama_server), "--cache", str(tmp_path / "c.sqlite"),
                     "--outdir", str(tmp_path / mode)]) == 0
        summary = summary_of(tmp_path / mode)
        assert summary["judge_config"]["backend"] == "openai"
        assert summary["judge_config"]["endpoint"] == llama_server + "/chat/completions"
        assert summary["costs"]["calls"] == 2 and summary["costs"]["prompt_tokens"] > 2 * 200
        assert summary["costs"]["completion_tokens"] > 0
    probs = [o["attempts"][0]["label_logprobs"] for o in read_jsonl(tmp_path / "logprobs" / "items.jsonl")[0]["orders"]]
    assert all(p and set(p) <= {"1", "2"} for p in probs)


def test_endpoint_timeouts_are_missing_reported_and_not_cached(tmp_path, flaky_proxy, capsys):
    from parlai_acute.judges.cache import JudgeCache

    slow = flaky_proxy(delay=2.0)
    path = write_pairings(tmp_path / "p.jsonl", comparison_pairings(1))
    spec = ENDPOINT.format(url=slow.url + "/v1") + " --openai-timeout 0.3 --openai-retries 0"
    assert main(["judge", "acute", "--pairings", path, "--no-onboarding", "--answer-from", "logprobs",
                 "--judge", spec, "--call-retries", "1", "--backoff", "0.01", "--cache", str(tmp_path / "c.sqlite"),
                 "--outdir", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "1 missing (0 unparseable and 2 failed orders)" in out and "did not answer within 0.3s" in out
    assert summary_of(tmp_path / "o")["costs"]["failed_calls"] == 2
    assert len(slow.bodies) == 4  # each order: one call and one retry
    assert len(JudgeCache(tmp_path / "c.sqlite")) == 0  # a rerun will ask again


def test_a_judge_may_answer_tie_where_the_study_allows_ties(tmp_path, capsys):
    from judge_fixtures import SCRIPTED as _  # noqa: F401  (the scripted judge answers "tie" only when offered)

    forced = read_judgments(judge(tmp_path, "close", "--no-onboarding", name="forced") / "judgments.csv")
    assert (forced["outcome"] == "win").all()  # the paper's forced choice: no tie is offered
    outdir = judge(tmp_path, "close", "--no-onboarding", "--allow-tie", name="ties")
    df = read_judgments(outdir / "judgments.csv")
    ties = df[df["outcome"] == "tie"]
    assert 0 < len(ties) < len(df) and (ties["winner"] == "").all() and (ties["winner_side"] == "").all()
    items = read_jsonl(outdir / "items.jsonl")
    tied = [i for i in items if i["verdict"] == "tie"]
    assert len(tied) == len(ties) and all(o["verdict"] == "tie" for i in tied for o in i["orders"])
    assert all("or tie if neither is better" in i["orders"][0]["attempts"][0]["prompt"] for i in items)
    summary = summary_of(outdir)
    assert summary["allow_tie"] is True and summary["templates"] == ["acute_engaging_tie@1"]
    # position bias counts the orders that picked a position, never a tie
    assert summary["position_bias"][0]["n"] == 2 * (len(df) - len(ties))
    result = analyze(df, AnalysisConfig(bootstrap=0, max_per_worker="none"))
    assert result.questions[0].matchups["ties"].sum() == len(ties)


def test_a_tie_template_needs_allow_tie_and_the_other_way_round():
    from parlai_acute.acute.judge import AcuteProtocol
    from parlai_acute.errors import UserError

    with pytest.raises(UserError) as err:
        AcuteProtocol(template_id="acute_engaging_tie")
    assert "offers a tie but allow_tie is False" in str(err.value)
    with pytest.raises(UserError):
        AcuteProtocol(template_id="acute_engaging@1", allow_tie=True)
    protocol = AcuteProtocol(allow_tie=True)
    assert parse_reply("Answer: tie\nReason: the same", "one", ["1", "2", "tie"], True).value == "tie"
    assert protocol.template.extra_labels == ("tie",)
