"""One vocabulary for the command line: the same option names for the same ideas everywhere, old
spellings still accepted (with a note where the meaning moved), progress bars with an estimate."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_main_cli import leaves as command_leaves

from parlai_acute.scripts.main import build_parser, main


def leaves():
    """Every subcommand's path, e.g. ("ssa", "analyze")."""
    return [path for path, _ in command_leaves()]


def actions_of(path) -> list:
    """The option actions of a subcommand's parser."""
    parser = build_parser(list(path))
    for token in path:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[token]
    return [action for action in parser._actions if action.option_strings]


def options_of(path) -> dict[str, list[str]]:
    """dest -> option strings of a subcommand's parser."""
    found: dict[str, list[str]] = {}
    for action in actions_of(path):
        found.setdefault(action.dest, []).extend(action.option_strings)
    return found


def parse(*argv):
    return build_parser(list(argv)).parse_args(list(argv))


@pytest.mark.parametrize("path", [p for p in leaves() if p[-1] in ("analyze", "export")], ids=" ".join)
def test_every_analyze_and_export_reads_a_mephisto_run_the_same_way(path):
    opts = options_of(path)
    assert path == ("multiref", "analyze") or "--task-name" in opts["task_name"]  # multiref: export, then analyze
    if path[-1] == "analyze":
        assert opts["outdir"] == ["-o", "--output-dir", "--outdir"]
        assert "--no-report" in opts["no_report"] and "--confidence" in opts["confidence"]
        assert "--seed" in opts["seed"] and "--bootstrap" in opts["bootstrap"]
    else:
        assert opts["output"][:2] == ["-o", "--output"]


def test_directories_are_output_dir_and_files_output_everywhere():
    for path in leaves():
        opts = options_of(path)
        for dest, strings in opts.items():
            if "-o" in strings:
                assert strings[1] in ("--output-dir", "--output"), (path, strings)
                assert (strings[1] == "--output-dir") == (dest == "outdir"), (path, strings)


def test_interval_level_is_confidence_and_the_old_level_still_works(tmp_path, capsys):
    for path in leaves():
        opts = options_of(path)
        assert "level" not in opts, f"{' '.join(path)} still names the interval level --level"
    args = parse("metrics", "score", "--data", "x.jsonl", "--level", "0.9", "-o", "out")
    assert args.confidence == 0.9 and "--level is now spelled --confidence" in capsys.readouterr().err
    assert parse("metrics", "rank", "--limit", "7", "-o", "out").num_contexts == 7


def test_how_many_is_num_contexts_or_num_items_never_limit():
    for path in leaves():
        opts = options_of(path)
        visible = [o for strings in opts.values() for o in strings]
        assert "--limit" not in visible or any(o.startswith("--num-") for o in visible), path
    assert parse("judge", "acute", "--pairings", "p.jsonl", "--num-items", "3", "-o", "o").limit == 3
    assert parse("judge", "acute", "--pairings", "p.jsonl", "--limit", "4", "-o", "o").limit == 4


def test_parlai_names_are_accepted_where_a_parlai_user_would_type_them():
    args = parse("self-chat", "--selfchat-max-turns", "3", "--num-selfchats", "2", "--outfile", "x.jsonl")
    assert (args.max_turns, args.num_self_chats, args.outfile) == (3, 2, "x.jsonl")
    assert parse("acute", "fast", "--selfchat-max-turns", "4", "--workdir", "w").max_turns == 4
    assert parse("ssa", "generate", "--outfile", "items.jsonl").outfile == "items.jsonl"


def test_judge_is_always_a_model():
    for path in leaves():
        opts = options_of(path)
        if "judge" in opts:
            assert path[0] == "judge" and path[1] != "agreement", path
    assert "judge_table" in options_of(("judge", "agreement"))
    assert "order_mode" not in options_of(("judge", "ssa")) and "inconsistent" not in options_of(("judge", "ssa"))
    assert options_of(("judge", "acute"))["order_mode"] == ["--orders"]


def test_alpha_is_always_a_significance_level_and_confidence_always_an_interval_level():
    """--alpha: the level of marks or decisions (familywise), in every command that has one; never
    1 - confidence. --confidence: the level of every interval, ppi's too."""
    seen = {"alpha": 0, "confidence": 0}
    for path in leaves():
        for action in actions_of(path):
            if action.help == argparse.SUPPRESS:
                continue
            if "--alpha" in action.option_strings:
                assert action.dest == "alpha" and action.help.startswith("significance level of "), (path, action.help)
                seen["alpha"] += 1
            if "--confidence" in action.option_strings:
                assert action.dest == "confidence" and action.help.startswith("level of every interval"), path
                seen["confidence"] += 1
    assert seen["alpha"] >= 7 and seen["confidence"] >= 8
    assert "familywise" in next(a.help for a in actions_of(("status",)) if a.dest == "alpha")
    ppi = options_of(("ppi",))
    assert "--confidence" in ppi["confidence"] and "--alpha" in ppi["confidence"] and "alpha" not in ppi


def test_ppi_old_alpha_is_converted_with_a_note(capsys):
    args = parse("ppi", "--people", "p.csv", "--judge-table", "j.csv", "--alpha", "0.2")
    assert args.confidence == pytest.approx(0.8)
    assert "--alpha 0.2 was read as --confidence 0.8" in capsys.readouterr().err
    assert parse("ppi", "--people", "p.csv", "--judge-table", "j.csv").confidence == 0.95


def test_the_peoples_table_is_people_everywhere_and_human_still_works(capsys):
    tables = [path for path in leaves() if "people" in options_of(path)]
    assert sorted(tables) == [("judge", "agreement"), ("ppi",)]
    for path in leaves():  # --human never names a table (ssa generate's is a switch: label the real next turns)
        human = [a for a in actions_of(path) if "--human" in a.option_strings]
        assert all(a.nargs == 0 or a.help == argparse.SUPPRESS for a in human), path
    args = parse("judge", "agreement", "--protocol", "ssa", "--human", "l.csv", "--judge-table", "j.csv", "-o", "o")
    assert args.people == "l.csv" and "--human is now spelled --people" in capsys.readouterr().err


def test_status_and_ppi_write_a_results_directory_like_the_analyses():
    for path in (("status",), ("ppi",)):
        opts = options_of(path)
        assert opts["outdir"] == ["-o", "--output-dir", "--outdir"] and "--no-report" in opts["no_report"]
        assert "--json" in opts["json"]


def _items(path: Path) -> str:
    rows = [{"item": f"c{i}:m", "context": ["Hi! What do you do for fun?"], "reply": "I love hiking.", "model": "m"}
            for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_long_commands_show_a_progress_bar_with_an_estimate_only_when_asked_off_a_terminal(tmp_path):
    """stderr is a pipe here (not a terminal): no bar by default, a tqdm bar with --progress."""
    items = _items(tmp_path / "items.jsonl")
    base = [sys.executable, "-m", "parlai_acute.scripts.main", "judge", "ssa", "--items", items, "--judge",
            "tests.judges.scripted_judge:ScriptedJudgeAgent --script ssa", "--no-onboarding", "--no-cache",
            "--backoff", "0"]
    quiet = subprocess.run(base + ["-o", str(tmp_path / "a")], capture_output=True, text=True, timeout=300,
                           cwd=Path(__file__).resolve().parents[1])
    assert quiet.returncode == 0, quiet.stderr
    assert "judge calls" not in quiet.stderr
    shown = subprocess.run(base + ["-o", str(tmp_path / "b"), "--progress"], capture_output=True, text=True,
                           timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert shown.returncode == 0, shown.stderr
    bar = shown.stderr.replace("\r", "\n")
    assert "judge calls: 100%" in bar and "<00:00" in bar  # elapsed<remaining: the estimate
    assert "call/s" in bar or "s/call" in bar


def test_every_analyze_ends_with_its_report_path(tmp_path, capsys):
    """The last line of every ``analyze`` is where its report is (per-turn's said results.json)."""
    from parlai_acute.convai2.simulate import simulate_ratings
    from parlai_acute.per_turn.simulate import simulate_turns
    from parlai_acute.ssa.simulate import simulate_labels
    from parlai_acute.acute.simulate import simulate_judgments

    simulate_judgments({"a": 0.3, "b": -0.3}, 20, seed=0).to_csv(tmp_path / "j.csv", index=False)
    simulate_turns({"a": 0.6, "b": 0.4}, "pm", "soba", dialogues=6, seed=0).to_csv(tmp_path / "t.csv", index=False)
    simulate_labels({"a": (0.8, 0.5), "b": (0.6, 0.3)}, 6, seed=0).to_csv(tmp_path / "l.csv", index=False)
    simulate_ratings({"a": 3.0, "b": 2.5}, 6, 3, seed=0, rounded=True).to_csv(tmp_path / "r.csv", index=False)
    (tmp_path / "m.jsonl").write_text(json.dumps([{"text": "Hi?", "responses": ["Hello.", "Hey there.", "Hi!", "Yo."]},
                                                  {"text": "Hello."}]) + "\n")
    for argv in (["acute", "analyze", "--judgments", "j.csv"], ["per-turn", "analyze", "--turns", "t.csv"],
                 ["ssa", "analyze", "--labels", "l.csv"], ["convai2", "analyze", "--ratings", "r.csv"],
                 ["multiref", "analyze", "--collection", "4R1W=m.jsonl"]):
        outdir = tmp_path / argv[0]
        argv = [a if not a.endswith(("csv", "jsonl")) else a.replace(a.split("=")[-1], str(tmp_path / a.split("=")[-1]))
                for a in argv]
        assert main(argv + ["-o", str(outdir), "--bootstrap", "20"]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == f"report: {outdir / 'report.html'}", argv
