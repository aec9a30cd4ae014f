"""No output that cannot be true, on any surface, on small and degenerate data (issue 22, item 2).

Every analyze command of every protocol and ``metrics score`` run on tiny inputs (one or two
clusters, every judgment one way, a single item, identical replies). On the terminal, in every
CSV, in results.json and in report.html: no "nan" or "inf"; every interval [low, high] has
low < high and lies in the quantity's range; an estimate printed with an interval lies inside
it. A run that fails part way leaves its output directory as it was. Tables are written here
by hand and read through the command line only, so the test depends on no module's location.
"""
from __future__ import annotations

import csv
import json
import re
from html.parser import HTMLParser

import pytest

from parlai_acute.scripts.main import main

NUMBER = r"[-+]?\d+(?:\.\d+)?"
NOT_A_NUMBER = re.compile(r"\b(nan|inf|infinity)\b", re.I)
BOUNDS = re.compile(rf"\[({NUMBER})(%?), ({NUMBER})%?\]")
WITH_ESTIMATE = re.compile(rf"(?<![\w.])({NUMBER})(%?) \[({NUMBER})%?, ({NUMBER})%?\]")


def honest_text(text: str, where: str) -> None:
    """No nan/inf; every shown interval has width and holds the estimate shown with it."""
    bad = NOT_A_NUMBER.search(text)
    assert not bad, f"{where}: {bad.group(0)!r} in ...{text[max(bad.start() - 80, 0):bad.end() + 40]}..."
    for match in BOUNDS.finditer(text):
        low, percent, high = float(match[1]), match[2], float(match[3])
        assert low < high, f"{where}: zero-width or reversed interval {match[0]}"
        if percent:
            assert 0 <= low and high <= 100, f"{where}: a percentage outside [0, 100]: {match[0]}"
    for match in WITH_ESTIMATE.finditer(text):
        estimate, low, high = float(match[1]), float(match[3]), float(match[4])
        assert low <= estimate <= high, f"{where}: the estimate is outside its interval: {match[0]}"


class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("style", "script")

    def handle_endtag(self, tag):
        self.skip -= tag in ("style", "script")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def page_text(path) -> str:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return " | ".join(parser.parts)  # cells apart: a count in one cell is no estimate of the next


def _pairs(columns) -> list[tuple[str, str]]:
    """(low, high) column pairs: names equal but for low <-> high."""
    return [(c, c.replace("low", "high")) for c in columns if "low" in c and c.replace("low", "high") in columns]


def honest_outputs(outdir, stdout: str, ranges: dict[tuple[str, str], tuple[float, float]]) -> None:
    """Every surface of one run; ``ranges``: (file, low column) -> the quantity's range."""
    honest_text(stdout, "stdout")
    for name, low in ranges:  # each range names a column the run wrote
        assert low in (outdir / name).read_text(encoding="utf-8").splitlines()[0].split(","), (name, low)
    for path in sorted(outdir.rglob("*.csv")):
        text = path.read_text(encoding="utf-8")
        bad = NOT_A_NUMBER.search(text)
        assert not bad, f"{path.name}: {bad.group(0)!r}"
        rows = list(csv.DictReader(text.splitlines()))
        for low, high in _pairs(rows[0].keys() if rows else []):
            span = ranges.get((path.name, low))
            for row in rows:
                if not row[low] and not row[high]:
                    continue
                lo, hi = float(row[low]), float(row[high])
                assert lo < hi, f"{path.name} {low}/{high}: [{lo}, {hi}]"
                if span:
                    assert span[0] - 1e-9 <= lo and hi <= span[1] + 1e-9, f"{path.name} {low}: [{lo}, {hi}] not in {span}"
    results = outdir / "results.json"
    if results.exists():
        data = json.loads(results.read_text(), parse_constant=lambda c: pytest.fail(f"bare {c} in results.json"))
        for obj in _objects(data):
            for low, high in _pairs(list(obj)):
                if isinstance(obj[low], (int, float)) and isinstance(obj[high], (int, float)):
                    assert obj[low] < obj[high], f"results.json {low}: [{obj[low]}, {obj[high]}]"
    if (outdir / "report.html").exists():
        honest_text(page_text(outdir / "report.html"), "report.html")


def _objects(data):
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from _objects(value)
    elif isinstance(data, list):
        for value in data:
            yield from _objects(value)


def run(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def write_csv(path, rows: list[dict]):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


# ----------------------------------------------------------------------------- ACUTE-Eval

def judgments(workers: int, per_worker: int, winner=lambda w, k: "a") -> list[dict]:
    rows = []
    for w in range(workers):
        for k in range(per_worker):
            left, right = ("a", "b") if k % 2 == 0 else ("b", "a")
            rows.append({"worker": f"w{w}", "model_left": left, "model_right": right,
                         "dialogue_left": f"{left}:{k}", "dialogue_right": f"{right}:{k}", "winner": winner(w, k),
                         "reason": "it says more", "question_key": "engaging", "is_onboarding": False,
                         "timestamp": float(100 * w + k)})
    return rows


@pytest.mark.parametrize("name, rows", [
    ("one worker, all one side", judgments(1, 6)),
    ("two workers, split", judgments(2, 4, lambda w, k: "a" if w == 0 else "b")),
    ("a single judgment", judgments(1, 1)),
])
def test_acute_analyze_on_degenerate_judgments(tmp_path, capsys, name, rows):
    path = write_csv(tmp_path / "judgments.csv", rows)
    out = run(capsys, "acute", "analyze", "--judgments", path, "-o", tmp_path / "out", "--bootstrap", "50",
              "--max-per-worker", "20", *([] if name == "one worker, all one side" else ["--no-report"]))
    honest_outputs(tmp_path / "out", out, {("matchups.csv", "ci_low"): (0, 1), ("matchups.csv", "ci_low_exact"): (0, 1)})
    assert "no interval" in out


# ----------------------------------------------------------------------------- per-turn

def turns(dialogues: int, per_dialogue: int, pick=lambda d, t: "a") -> list[dict]:
    rows = []
    for d in range(dialogues):
        for t in range(per_dialogue):
            picked = pick(d, t)
            for position, model in enumerate(("a", "b")):
                rows.append({"dialogue": f"d{d}", "worker": f"w{d}", "turn": t, "setting": "pm",
                             "protocol": "sata_random", "model_set": "a|b", "model": model, "position": position,
                             "picked": model == picked, "continued": model == picked, "incomplete": False,
                             "worker_message": "tell me about your weekend plans", "decision_seconds": 10.0,
                             "timestamp": 1000.0 + 10 * d + t})
    return rows


@pytest.mark.parametrize("name, rows", [
    ("one dialogue, all one side", turns(1, 5)),
    ("two dialogues", turns(2, 3, lambda d, t: "a" if d == 0 else "b")),
    ("a single turn", turns(1, 1)),
])
def test_per_turn_analyze_on_degenerate_turns(tmp_path, capsys, name, rows):
    path = write_csv(tmp_path / "turns.csv", rows)
    out = run(capsys, "per-turn", "analyze", "--turns", path, "-o", tmp_path / "out", "--bootstrap", "50",
              *([] if name == "one dialogue, all one side" else ["--no-report"]))
    honest_outputs(tmp_path / "out", out, {("models.csv", "ci_low"): (0, 1), ("models.csv", "boot_low"): (0, 1),
                                           ("pairs.csv", "cluster_low"): (-1, 1)})


# ----------------------------------------------------------------------------- SSA

def labels(workers: int, items: int, sensible=lambda w, i: True) -> list[dict]:
    return [{"item": f"{model}:{i}", "model": model, "worker": f"w{w}", "sensible": sensible(w, i),
             "specific": sensible(w, i)} for w in range(workers) for i in range(items) for model in ("a", "b")]


@pytest.mark.parametrize("name, rows", [
    ("one worker, all sensible", labels(1, 4)),
    ("two workers who disagree", labels(2, 3, lambda w, i: w == 0)),
    ("a single item per model", labels(1, 1)),
])
def test_ssa_analyze_on_degenerate_labels(tmp_path, capsys, name, rows):
    path = write_csv(tmp_path / "labels.csv", rows)
    out = run(capsys, "ssa", "analyze", "--labels", path, "-o", tmp_path / "out", "--bootstrap", "50",
              *([] if name == "one worker, all sensible" else ["--no-report"]))
    ranges = {("models.csv", f"{q}_boot_low"): (0, 1) for q in ("sensibleness", "specificity", "ssa")}
    ranges.update({("models.csv", f"{q}_exact_low"): (0, 1) for q in ("sensibleness", "specificity")})
    honest_outputs(tmp_path / "out", out, {**ranges, ("pairs.csv", "cluster_low"): (-1, 1)})


# ----------------------------------------------------------------------------- ConvAI2

def ratings(workers: int, dialogues: int, score=lambda w, d, m: 3) -> list[dict]:
    return [{"dialogue": f"{model}{w}-{d}", "worker": f"w{w}", "model": model, "question": "engagingness",
             "score": score(w, d, model), "persona_choice_correct": True}
            for w in range(workers) for d in range(dialogues) for model in ("a", "b")]


@pytest.mark.parametrize("name, rows", [
    ("one worker, identical ratings", ratings(1, 3)),
    ("two workers", ratings(2, 2, lambda w, d, m: 4 if m == "a" else 1)),
    ("a single rating per model", ratings(1, 1)),
])
def test_convai2_analyze_on_degenerate_ratings(tmp_path, capsys, name, rows):
    path = write_csv(tmp_path / "ratings.csv", rows)
    out = run(capsys, "convai2", "analyze", "--ratings", path, "-o", tmp_path / "out", "--bootstrap", "50",
              *([] if name == "one worker, identical ratings" else ["--no-report"]))
    honest_outputs(tmp_path / "out", out, {("likert.csv", "boot_low"): (1, 4), ("differences.csv", "ci_low"): (-3, 3),
                                           ("persona.csv", "ci_low"): (0, 1)})


# ----------------------------------------------------------------------------- multi-reference

def collection(path, contexts: int, replies: list[str]):
    dialogues = [[{"text": f"Hi there, number {c}", "responses": list(replies)}, {"text": "Hello friend"}]
                 for c in range(contexts)]
    path.write_text("".join(json.dumps(d) + "\n" for d in dialogues), encoding="utf-8")
    return path


@pytest.mark.parametrize("name, contexts, replies", [
    ("a single context", 1, ["Hello friend", "Hello pal", "Hey you", "Hi!"]),
    ("identical replies", 3, ["Hello friend"] * 4),
    ("one reply per context", 2, ["Hello pal"]),
])
def test_multiref_analyze_on_degenerate_collections(tmp_path, capsys, name, contexts, replies):
    path = collection(tmp_path / "refs.jsonl", contexts, replies)
    out = run(capsys, "multiref", "analyze", "--collection", f"4R1W={path}", "-o", tmp_path / "out", "--bootstrap",
              "50", *([] if name == "a single context" else ["--no-report"]))
    ranges = {("modes.csv", f"{m}_low"): (0, 1) for m in ("self_bleu4", "gt_bleu2", "gt_bleu4")}
    honest_outputs(tmp_path / "out", out, ranges)
    if name == "a single context":  # was "Self-BLEU-4 0.500 [nan, nan]"
        assert re.search(r"Self-BLEU-4 0\.\d{3} \(no interval\)", out)
        assert "no interval: 1 context: a bootstrap over contexts needs 2 or more" in out
    if name == "one reply per context":
        assert "Self-BLEU-4 undefined" in out and "Self-BLEU compares replies" in out


# ----------------------------------------------------------------------------- metrics score

@pytest.mark.parametrize("name, contexts, reply", [
    ("a single context", 1, "How about sushi?"),
    ("identical replies", 3, "I don't know."),
])
def test_metrics_score_on_degenerate_sets(tmp_path, capsys, name, contexts, reply):
    data = tmp_path / "set.jsonl"
    data.write_text("".join(json.dumps([{"text": f"Where should we eat tonight, {c}?",
                                         "responses": ["How about the Italian place?", "Let's cook at home."]},
                                        {"text": "What about sushi?"}]) + "\n" for c in range(contexts)),
                    encoding="utf-8")
    replies = tmp_path / "replies.jsonl"
    replies.write_text("".join(json.dumps({"id": f"{c + 1}:0", "reply": reply}) + "\n" for c in range(contexts)),
                       encoding="utf-8")
    out = run(capsys, "metrics", "score", "--data", data, "--replies", replies, "--metrics", "f1,bleu,rouge,chrf",
              "--bootstrap", "50", "-o", tmp_path / "out")
    ranges = {("summary.csv", f"{kind}_low"): (0, 1) for kind in ("single", "multi")}
    honest_outputs(tmp_path / "out", out, ranges)
    assert "no interval (" in out  # the reason in words, not an empty cell


# ----------------------------------------------------------------------------- all or nothing

def _tree(root) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))}


def _inputs(tmp_path) -> dict[str, list]:
    """One small run of each command that writes an output directory (its arguments but -o)."""
    return {
        "acute": ["acute", "analyze", "--judgments", write_csv(tmp_path / "j.csv", judgments(3, 4)),
                  "--bootstrap", "20"],
        "per-turn": ["per-turn", "analyze", "--turns", write_csv(tmp_path / "t.csv", turns(2, 3)), "--bootstrap", "20"],
        "ssa": ["ssa", "analyze", "--labels", write_csv(tmp_path / "l.csv", labels(2, 2)), "--bootstrap", "20"],
        "convai2": ["convai2", "analyze", "--ratings", write_csv(tmp_path / "r.csv", ratings(2, 2)),
                    "--bootstrap", "20"],
        "multiref": ["multiref", "analyze", "--collection",
                     f"4R1W={collection(tmp_path / 'c.jsonl', 2, ['Hello pal', 'Hi there'])}", "--bootstrap", "20"],
    }


@pytest.mark.parametrize("protocol", ["acute", "per-turn", "ssa", "convai2", "multiref"])
@pytest.mark.parametrize("existing", [False, True])
def test_a_run_that_fails_in_the_report_leaves_the_output_directory_as_it_was(tmp_path, capsys, monkeypatch,
                                                                              protocol, existing):
    """The report is written last but one; it fails after writing its figures: nothing of the run stays."""
    from parlai_acute.report.document import Report

    out = tmp_path / "out"
    if existing:  # an earlier run's outputs and a file of the user's
        out.mkdir()
        (out / "run.json").write_text('{"earlier": true}\n')
        (out / "notes.txt").write_text("mine\n")
    argv = _inputs(tmp_path)[protocol]
    before = _tree(tmp_path)
    written = Report.write

    def fails_half_way(self, outdir, *args, **kwargs):
        written(self, outdir, *args, **kwargs)  # every figure, table and the page written...
        raise OSError("disk full")  # ...then the run fails

    monkeypatch.setattr(Report, "write", fails_half_way)
    with pytest.raises(OSError, match="disk full"):
        main([str(a) for a in argv] + ["-o", str(out)])
    assert _tree(tmp_path) == before
    if existing:  # the same run succeeding: the files it writes replaced, the user's kept
        assert main([str(a) for a in argv] + ["-o", str(out), "--no-report"]) == 0
        assert (out / "notes.txt").read_text() == "mine\n" and "earlier" not in (out / "run.json").read_text()
    capsys.readouterr()


def test_acute_analyze_with_a_judge_table_is_one_output(tmp_path, capsys, monkeypatch):
    """`acute analyze --judge-table` left 17 files behind when the prediction-powered part failed."""
    import parlai_acute.scripts.ppi as ppi

    def fails(*args, **kwargs):
        raise KeyError("question")

    monkeypatch.setattr(ppi, "beside_analysis", fails)
    argv = _inputs(tmp_path)["acute"] + ["--judge-table", tmp_path / "j.csv", "-o", tmp_path / "out"]
    with pytest.raises(KeyError):
        main([str(a) for a in argv])
    assert not (tmp_path / "out").exists()
    assert capsys.readouterr().out == ""  # no line about a report that is not there
