"""Every ``parlai-acute`` command on the analysis core alone (``pip install .``, no extras): its
``--help``, and one cheap call on small files written here. Run as a script by whichever Python has
parlai_acute installed (a fresh venv, or the project's with the extras' packages blocked):
``python plain_commands.py DIR`` writes the files into DIR and prints one JSON line per call.

:data:`CALLS` is the install table: each call with the extras it needs (none: it must work on the
core; else it must stop with the one line naming ``pip install "parlai_acute[...]"`` and exit 2).
A call is the command's one cheap use unless marked as a second use of an option that needs more
than the command itself (``status --task-name`` reads a Mephisto run).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys

#: (argv, extras it needs, whether it is the command's main call: its needs are the command's NEEDS).
CALLS = [
    (["self-chat", "-m", "repeat_query", "-n", "1", "--max-turns", "1", "-o", "selfchat.jsonl"], ["models"], True),
    (["chat", "-m", "repeat_query", "-o", "chat.jsonl"], ["models"], True),
    (["demo", "--workdir", "demo"], ["live", "models"], True),
    (["ppi", "--people", "judgments.csv", "--judge-table", "judgments.csv"], [], True),
    (["serve", "--port", "0"], ["models"], True),
    (["status", "--table", "judgments.csv"], [], True),
    (["status", "--task-name", "a_task"], ["live"], False),
    (["acute", "pairings", "a=a.jsonl", "b=b.jsonl", "-n", "2", "-o", "pairings.jsonl"], [], True),
    (["acute", "launch", "--print-config"], ["live"], True),
    (["acute", "analyze", "--judgments", "judgments.csv", "-o", "acute_out", "--bootstrap", "20"], [], True),
    (["acute", "analyze", "--task-name", "a_task", "-o", "acute_task"], ["live"], False),
    (["acute", "export", "--task-name", "a_task", "-o", "exported.csv"], ["live"], True),
    (["acute", "power", "--delta", "0.1"], [], True),
    (["acute", "import", "--arena", "battles.jsonl", "-o", "imported.csv"], [], True),
    (["acute", "fast", "--workdir", "fast", "--model", "a=repeat_query", "--model", "b=repeat_query"],
     ["live", "models"], True),
    (["per-turn", "launch", "--print-config"], ["live", "models"], True),
    (["per-turn", "demo", "--workdir", "perturn_demo"], ["live", "models"], True),
    (["per-turn", "analyze", "--turns", "turns.csv", "-o", "perturn_out", "--bootstrap", "20"], [], True),
    (["per-turn", "export", "--task-name", "a_task", "-o", "exported.csv"], ["live"], True),
    (["per-turn", "power", "--design", "pm-soba", "--delta", "0.1"], [], True),
    (["judge", "acute", "--pairings", "pairings.jsonl", "-o", "judge_acute"], ["models"], True),
    (["judge", "per-turn", "--turns", "turns.csv", "-o", "judge_perturn"], ["models"], True),
    (["judge", "ssa", "--items", "items.jsonl", "-o", "judge_ssa"], ["models"], True),
    (["judge", "agreement", "--protocol", "acute", "--people", "judgments.csv", "--judge-table", "judgments.csv",
      "-o", "agreement", "--bootstrap", "20"], [], True),
    (["metrics", "score", "--data", "refs.jsonl", "--replies", "replies.jsonl", "-o", "score"], ["metrics"], True),
    (["metrics", "rank", "--data", "refs.jsonl", "-o", "rank"], ["models"], True),
    (["metrics", "logs", "a=a.jsonl", "--reference-corpus", "corpus.txt", "-o", "logs"], [], True),
    (["metrics", "logs", "a=a.jsonl", "-o", "logs_default"], ["models"], False),  # the default corpus
    (["metrics", "correlate", "--system-scores", "systems.csv", "-o", "correlate"], [], True),
    (["metrics", "correlate", "--ratings", "ratings_text.csv", "-o", "correlate_ratings"], ["metrics"], False),
    (["ssa", "launch", "--print-config"], ["live"], True),
    (["ssa", "generate", "--from-log", "a.jsonl", "--speaker", "bot", "-o", "items.jsonl"], [], True),
    (["ssa", "generate", "--model", "r=repeat_query", "--num-contexts", "1", "-o", "items_model.jsonl"],
     ["models"], False),
    (["ssa", "analyze", "--labels", "labels.csv", "-o", "ssa_out", "--bootstrap", "20"], [], True),
    (["ssa", "power", "--delta", "0.1"], [], True),
    (["ssa", "export", "--task-name", "a_task", "-o", "exported.csv"], ["live"], True),
    (["convai2", "analyze", "--ratings", "ratings.csv", "-o", "convai2_out", "--bootstrap", "20"], [], True),
    (["convai2", "export", "--task-name", "a_task", "-o", "exported.csv"], ["live"], True),
    (["multiref", "launch", "--print-config"], ["live"], True),
    (["review", "--task-name", "a_task"], ["live"], True),
    (["release", "--task-name", "a_task", "-o", "bundle"], ["live"], True),
    (["mephisto", "check"], ["live"], True),
    (["multiref", "export", "--task-name", "a_task", "-o", "exported.jsonl"], ["live"], True),
    (["multiref", "analyze", "--collection", "4R1W=refs.jsonl", "-o", "multiref_out", "--bootstrap", "20"],
     ["metrics"], True),
]


def write_inputs() -> None:
    """Small input files in the current directory, made by the core's own simulators."""
    from parlai_acute.convai2.simulate import simulate_ratings
    from parlai_acute.per_turn.simulate import simulate_turns
    from parlai_acute.ssa.simulate import simulate_labels
    from parlai_acute.acute.simulate import simulate_judgments

    simulate_judgments({"a": 0.3, "b": -0.3}, 40, seed=0, workers=10).to_csv("judgments.csv", index=False)
    from parlai_acute.acute.simulate import arena_battles

    with open("battles.jsonl", "w", encoding="utf-8") as out:
        out.writelines(json.dumps(b) + "\n" for b in arena_battles({"a": 0.3, "b": -0.3}, 20, seed=0))
    simulate_turns({"a": 0.6, "b": 0.4}, "pm", "soba", dialogues=6, seed=0).to_csv("turns.csv", index=False)
    simulate_labels({"a": (0.8, 0.5), "b": (0.6, 0.3)}, 6, seed=0).to_csv("labels.csv", index=False)
    simulate_ratings({"a": 3.0, "b": 2.5}, 6, 3, seed=0, rounded=True).to_csv("ratings.csv", index=False)
    for tag in "ab":
        with open(f"{tag}.jsonl", "w", encoding="utf-8") as out:
            for k in range(4):
                turns = [{"id": ("bot", "human")[i % 2], "text": f"{tag} says {k} {i} today", "episode_done": False}
                         for i in range(6)]
                out.write(json.dumps({"dialog": [turns[i:i + 2] for i in range(0, 6, 2)], "context": []}) + "\n")
    with open("refs.jsonl", "w", encoding="utf-8") as out:
        out.write(json.dumps([{"text": "Do you like hiking?", "responses": ["Yes, a lot.", "Not really.",
                                                                           "Sometimes.", "Yes, in the hills."]},
                              {"text": "Yes, I hike.", "responses": []}, {"text": "Nice!"}]) + "\n")
    with open("replies.jsonl", "w", encoding="utf-8") as out:
        out.write(json.dumps({"id": "0", "reply": "Yes, I do."}) + "\n")
    with open("corpus.txt", "w", encoding="utf-8") as out:
        out.write("a says today\nhello there\n")
    with open("systems.csv", "w", encoding="utf-8") as out:
        out.write("model,perplexity,ssa\na,10,0.7\nb,14,0.6\nc,20,0.45\nd,25,0.4\n")
    with open("ratings_text.csv", "w", encoding="utf-8") as out:
        out.write("response,rating,model,reference\nI am fine,5,a,I am fine thanks\nbananas,1,b,I am fine thanks\n"
                  "Paris it is,4,a,I live in Paris\nyellow,2,b,I live in Paris\n")


def run(argv: list[str]) -> tuple[object, str]:
    """(exit code, stderr) of ``parlai-acute ARGV`` run in this process (stdin empty: ``chat`` reads it)."""
    from parlai_acute.scripts.main import main

    out, err = io.StringIO(), io.StringIO()
    stdin, sys.stdin = sys.stdin, io.StringIO("")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
            except BaseException as exc:  # noqa: BLE001 -- what a user would see as a traceback
                code = f"{type(exc).__name__}: {exc}"
    finally:
        sys.stdin = stdin
    return code, err.getvalue()


def main(directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    os.chdir(directory)
    write_inputs()
    helped = set()
    for argv, needs, first in CALLS:
        command = argv[:2] if argv[0] in ("acute", "per-turn", "judge", "metrics", "ssa", "convai2", "multiref") \
            else argv[:1]
        row = {"command": " ".join(command), "argv": argv, "needs": needs, "main": first}
        if row["command"] not in helped:
            helped.add(row["command"])
            row["help"], _ = run([*command, "--help"])
        row["code"], row["stderr"] = run(argv)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
