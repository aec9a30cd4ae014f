"""Automatic metrics speed: reference-based scores and log analytics.

* ``metrics_score_seconds``: every reference-based metric (F1, sentence and corpus
  BLEU-1..4, ROUGE-L, METEOR, sentence and corpus chrF, the three embedding metrics,
  single and multi-reference, diversity) on 10,000 replies with 5 references each,
  1,000 bootstrap resamples; target < 60 s. Texts are real turns of chitchat-dataset.
* ``metrics_logs_seconds``: the ConvAI2-style analytics of 1,000 conversations of 12
  turns (target < 5 s), rare-word counts from the chitchat corpus (built once, outside the clock).
"""
import random
import time

SCORE_TARGET_S = 60.0
LOGS_TARGET_S = 5.0


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


def run():
    import parlai_acute  # noqa: F401

    turns = _turns()
    yield bench_score(turns)
    yield bench_logs(turns)
