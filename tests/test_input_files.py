"""Every command's input files through the one set of readers (jsonl.input_file/read_text,
table_files.read_rows, logs.read_log): a directory where a file belongs says "is a directory", an
empty file says "is empty", another protocol's table says what it is -- one line, exit 2, whatever
the command. And argparse's own errors (a wrong choice) are one line too."""
from __future__ import annotations

import pytest

from parlai_acute.scripts.main import main
from parlai_acute.ssa.simulate import simulate_labels
from parlai_acute.acute.simulate import simulate_judgments

#: (command, the file option's place as {csv} or {jsonl}: which kind of file it reads)
READERS = [
    ["acute", "analyze", "--judgments", "{csv}", "-o", "{out}"],
    ["acute", "analyze", "--judgments", "{good_judgments}", "--pairings", "{jsonl}", "-o", "{out}"],
    ["per-turn", "analyze", "--turns", "{csv}", "-o", "{out}"],
    ["ssa", "analyze", "--labels", "{jsonl}", "-o", "{out}"],
    ["convai2", "analyze", "--ratings", "{csv}", "-o", "{out}"],
    ["multiref", "analyze", "--references", "{csv}", "-o", "{out}"],
    ["multiref", "analyze", "--collection", "4R1W={jsonl}", "-o", "{out}"],
    ["status", "--table", "{csv}"],
    ["ppi", "--people", "{csv}", "--judge-table", "{csv}"],
    ["judge", "agreement", "--protocol", "ssa", "--people", "{csv}", "--judge-table", "{csv}", "-o", "{out}"],
    ["judge", "ssa", "--items", "{jsonl}", "-o", "{out}"],
    ["judge", "acute", "--pairings", "{jsonl}", "-o", "{out}"],
    ["acute", "pairings", "a={jsonl}", "b={jsonl}", "-o", "{out}/p.jsonl"],
    ["acute", "power", "--delta", "0.1", "--pilot", "{csv}"],
    ["per-turn", "power", "--design", "pm-soba", "--pilot", "{csv}"],
    ["metrics", "score", "--data", "{jsonl}", "--replies", "{jsonl}", "-o", "{out}"],
    ["metrics", "logs", "a={jsonl}", "-o", "{out}"],
    ["metrics", "logs", "a={good_log}", "--reference-corpus", "{jsonl}", "-o", "{out}"],
    ["metrics", "correlate", "--ratings", "{csv}", "-o", "{out}"],
    ["ssa", "generate", "--from-log", "{jsonl}", "--speaker", "bot", "-o", "{out}/items.jsonl"],
    ["ssa", "generate", "--contexts", "{csv}", "--model", "a=repeat_query", "-o", "{out}/items.jsonl"],
]


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "a_directory").mkdir()
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "empty.jsonl").write_text("\n")
    simulate_judgments({"a": 0.3, "b": -0.3}, 20, seed=0).to_csv(tmp_path / "judgments.csv", index=False)
    simulate_labels({"a": (0.8, 0.5), "b": (0.6, 0.3)}, 4, seed=0).to_csv(tmp_path / "labels.csv", index=False)
    (tmp_path / "log.jsonl").write_text('{"dialog": [[{"id": "bot", "text": "hi there"}, '
                                        '{"id": "human", "text": "hello"}]]}\n')
    return tmp_path


def _run(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("parlai-acute: error: "), (argv, code, err)
    return err


def _fill(argv, files, csv, jsonl):
    return [a.format(csv=csv, jsonl=jsonl, out=files / "out", good_judgments=files / "judgments.csv",
                     good_log=files / "log.jsonl") for a in argv]


@pytest.mark.parametrize("argv", READERS, ids=lambda a: " ".join(a[:3]))
def test_a_directory_where_a_file_belongs_says_so(argv, files, capsys):
    folder = files / "a_directory"
    err = _run(_fill(argv, files, folder, folder), capsys)
    assert f"{folder} is a directory, not a file" in err


@pytest.mark.parametrize("argv", [a for a in READERS if "--pairings" not in a], ids=lambda a: " ".join(a[:3]))
def test_an_empty_file_says_it_is_empty(argv, files, capsys):
    err = _run(_fill(argv, files, files / "empty.csv", files / "empty.jsonl"), capsys)
    assert " is empty" in err and "missing column" not in err


@pytest.mark.parametrize("argv", [
    ["status", "--table", "{judgments}", "--protocol", "ssa"],
    ["ppi", "--people", "{judgments}", "--judge-table", "{judgments}", "--protocol", "per-turn"],
    ["judge", "agreement", "--protocol", "ssa", "--people", "{judgments}", "--judge-table", "{judgments}", "-o", "x"],
    ["ssa", "analyze", "--labels", "{judgments}", "-o", "x"],
], ids=lambda a: " ".join(a[:2]))
def test_another_protocols_table_says_what_it_is(argv, files, capsys):
    err = _run([a.format(judgments=files / "judgments.csv") for a in argv], capsys)
    assert "is not a table of the" in err and "its columns are run_id, unit_id" in err
    assert "the acute protocol's table (one judgment per row)" in err


def test_a_table_no_protocol_reads_says_what_it_looks_like(files, capsys):
    (files / "ratings.csv").write_text("dialogue,worker,model,question,score\nd1,w1,a,engaging,3\n")
    err = _run(["status", "--table", str(files / "ratings.csv")], capsys)
    assert "its columns are dialogue, worker, model, question, score" in err
    assert "the convai2 protocol's table" in err


@pytest.mark.parametrize("argv,said", [
    (["status", "--table", "t.csv", "--protocol", "nope"],
     "argument --protocol: invalid choice: 'nope' (choose from 'acute', 'per-turn', 'ssa'); "
     "see `parlai-acute status --help`"),
    (["no-such-command"], "invalid choice: 'no-such-command' (choose from 'self-chat'"),
    (["acute", "analyze", "--judgments", "j.csv", "-o", "x", "--bogus"],
     "unrecognized arguments: --bogus; see `parlai-acute acute analyze --help`"),
])
def test_argparse_errors_are_one_line(argv, said, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and err.startswith("parlai-acute: error: ")
    assert said in err and "usage:" not in err


def test_columns_of_digits_are_read_as_the_plain_number_pattern_says():
    """table_files._digits_and_a_point, the shortcut past the regular expression for a CSV's seconds,
    accepts exactly the cells of digits and points that the pattern accepts (one point, a digit)."""
    import itertools
    import re

    import pyarrow as pa

    from parlai_acute.table_files import _PLAIN_NUMBER, _digits_and_a_point

    cells = ["".join(p) for size in (1, 2, 3) for p in itertools.product("1.", repeat=size)]
    for cell in cells:
        for kind in (pa.string(), pa.large_string()):
            array = pa.array(["30.0", cell, "7"], type=kind)
            assert _digits_and_a_point(array) == bool(re.match(_PLAIN_NUMBER, cell)), cell
            assert _digits_and_a_point(array.slice(1, 1)) == bool(re.match(_PLAIN_NUMBER, cell)), cell
    assert not _digits_and_a_point(pa.array(["1e5", "2"]))  # other characters: the pattern decides
