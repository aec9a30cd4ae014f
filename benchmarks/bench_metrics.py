"""Automatic metrics speed: reference-based scores and log analytics.

* ``metrics_score_seconds``: every reference-based metric (F1, sentence and corpus
  BLEU-1..4, ROUGE-L, METEOR, sentence and corpus chrF, the three embedding metrics,
  single and multi-reference, diversity) on 10,000 replies with 5 references each,
  1,000 bootstrap resamples; target < 60 s. Texts are real turns of chitchat-dataset.
* ``metrics_logs_seconds``: the ConvAI2-style analytics of 1,000 conversations of 12
  turns (target < 5 s), rare-word counts from the chitchat corpus (built once, outside the clock).
* ``metrics_correlate_seconds``: ``parlai-acute metrics correlate`` on USR-sized data (300
  rated replies of 5 systems, 3 annotators each, their mean the rating) with every metric in
  every variant (sacrebleu and coco BLEU, rouge-score and coco ROUGE-L, nltk METEOR and
  METEOR 1.5, chrF, F1, embeddings, CIDEr-D), 1,000 bootstrap resamples, the report
  written; target < 30 s, the METEOR 1.5 jar's start (loading its paraphrase table) outside
  the clock. Timed warm, as ``metrics_score_seconds`` (a first, cold run loads the libraries,
  WordNet and the embeddings: ``cold_seconds``); ``cpu_seconds`` (this process and the jar)
  says what the wall time is on a busy machine.
"""
import os
import random
import time

SCORE_TARGET_S = 60.0
LOGS_TARGET_S = 5.0
CORRELATE_TARGET_S = 30.0


def _turns():
    from parlai_acute.tasks import sources

    return [t for conv in sources.chitchat("train") for t in conv.turns]


def bench_score(turns):
    from parlai_acute.metrics.inputs import Item
    from parlai_acute.metrics.score import ScoreConfig, score

    rng = random.Random(0)
    items = [Item(str(k), [rng.choice(turns)], [rng.choice(turns) for _ in range(5)]) for k in range(10_000)]
    replies = {it.id: [rng.choice(turns)] for it in items}
    score(items[:50], {k: replies[k] for k in list(replies)[:50]}, ScoreConfig(bootstrap=10))  # load libraries, WordNet
    start = time.perf_counter()
    result = score(items, replies, ScoreConfig(bootstrap=1000, seed=0))
    seconds = time.perf_counter() - start
    assert len(result.per_item) == 10_000
    return {"name": "metrics_score_seconds", "value": round(seconds, 2), "unit": "s", "target": SCORE_TARGET_S,
            "ratio": round(seconds / SCORE_TARGET_S, 3), "replies": 10_000, "references_each": 5,
            "metrics": len(result.summary), "bootstrap": 1000}


def bench_logs(turns):
    from parlai_acute.logs import episode_from_dict
    from parlai_acute.metrics.loganalytics import LogsConfig, analyse_episodes
    from parlai_acute.metrics.wordcounts import default_counts

    rng = random.Random(1)
    episodes = []
    for k in range(1000):
        dialog = [[{"id": "model_a", "text": rng.choice(turns)}, {"id": "localHuman", "text": rng.choice(turns)}]
                  for _ in range(6)]
        episodes.append(episode_from_dict({"dialog": dialog}, f"bench:{k + 1}"))
    counts = default_counts()
    start = time.perf_counter()
    table = analyse_episodes({"bench": episodes}, LogsConfig(), counts)
    seconds = time.perf_counter() - start
    assert table["utterances"].sum() == 12_000
    return {"name": "metrics_logs_seconds", "value": round(seconds, 3), "unit": "s", "target": LOGS_TARGET_S,
            "ratio": round(seconds / LOGS_TARGET_S, 3), "conversations": 1000, "turns_each": 12}


def bench_correlate(turns):
    import contextlib
    import csv
    import io
    import tempfile
    from pathlib import Path

    from parlai_acute.metrics import coco
    from parlai_acute.scripts.main import main

    rng = random.Random(2)
    with tempfile.TemporaryDirectory() as tmp:
        ratings = Path(tmp) / "ratings.csv"
        with open(ratings, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["context", "response", "reference", "model", "rating"])
            for k in range(300):
                votes = [rng.randint(1, 5) for _ in range(3)]  # 3 annotators, averaged as USR's tables
                writer.writerow([rng.choice(turns), rng.choice(turns), rng.choice(turns), f"system{k % 5}",
                                 sum(votes) / 3])
        coco.running_jar().scores(["warm up"], [["warm up"]])  # the jar's start, outside the clock
        argv = ["metrics", "correlate", "--ratings", str(ratings), "--metrics",
                "f1,bleu,rouge,meteor,chrf,embedding,cider", "--bleu-variant", "sacrebleu,coco",
                "--rouge-variant", "rouge-score,coco", "--meteor-variant", "nltk,1.5", "--bootstrap", "1000",
                "-o", str(Path(tmp) / "out")]
        jar = coco.running_jar().proc.pid
        runs = []
        for _ in range(2):  # cold (imports, WordNet, the embeddings loaded), then warm as bench_score's
            start, cpu = time.perf_counter(), time.process_time() + _cpu_seconds(jar)
            with contextlib.redirect_stdout(io.StringIO()):
                code = main(argv[:-1] + [str(Path(tmp) / f"out{len(runs)}")])
            runs.append((time.perf_counter() - start, time.process_time() + _cpu_seconds(jar) - cpu))
            assert code == 0
        (cold, cold_cpu), (seconds, cpu) = runs
        rows = sum(1 for _ in open(Path(tmp) / "out1" / "correlations_response.csv")) - 1
    return {"name": "metrics_correlate_seconds", "value": round(seconds, 2), "unit": "s",
            "target": CORRELATE_TARGET_S, "ratio": round(seconds / CORRELATE_TARGET_S, 3), "replies": 300,
            "annotators": 3, "metric_columns": rows, "bootstrap": 1000, "cpu_seconds": round(cpu, 2),
            "cold_seconds": round(cold, 2), "cold_cpu_seconds": round(cold_cpu, 2),
            "load_average": round(os.getloadavg()[0], 1)}


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of another process, here the METEOR jar, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run():
    import parlai_acute  # noqa: F401

    turns = _turns()
    yield bench_score(turns)
    yield bench_logs(turns)
    yield bench_correlate(turns)
