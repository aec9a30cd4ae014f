"""Model judge speed: ACUTE items per second with the embedded SmolLM2 judge, and a cached rerun.

Five ACUTE comparisons (the package's gold pairs, shown as ordinary comparisons), each in
both orders, judged from text (greedy, up to 64 new tokens, no retries) with 4 prompts
decoded together; then the same items again through the same cache. Target: the fully
cached rerun at least 50x faster.
"""
import tempfile
import time

TARGET_SPEEDUP = 50.0


def gold_items():
    """(protocol, items): the package's five gold pairs as ordinary ACUTE comparisons ("engaging")."""
    from parlai_acute.acute.judge import AcuteProtocol
    from parlai_acute.acute.pairings import read_onboarding

    pairings = []
    for p in read_onboarding():
        p = dict(p, is_onboarding=False)
        p.pop("correct_answer")
        pairings.append(p)
    protocol = AcuteProtocol("engaging")
    return protocol, protocol.items(pairings)


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.judges.cache import JudgeCache
    from parlai_acute.judges.model import JudgeModel
    from parlai_acute.judges.runner import JudgeSettings, Runner

    protocol, items = gold_items()
    judge = JudgeModel(None, concurrency=4)
    settings = JudgeSettings(answer_from="text", retries=0)
    with tempfile.TemporaryDirectory() as tmp:
        cache = JudgeCache(f"{tmp}/cache.sqlite")
        start = time.perf_counter()
        first = Runner(judge, settings, cache)
        first.run(protocol, items)
        fresh = time.perf_counter() - start
        start = time.perf_counter()
        again = Runner(judge, settings, cache)
        again.run(protocol, items)
        cached = time.perf_counter() - start
    assert first.calls == 2 * len(items) and again.calls == 0 and again.cached_calls == 2 * len(items)
    yield {"name": "judge_items_per_second", "value": round(len(items) / fresh, 3), "unit": "items/s",
           "items": len(items), "orders_per_item": 2, "seconds": round(fresh, 2),
           "tokens": first.prompt_tokens + first.completion_tokens, "judge": judge.name, "answer_from": "text"}
    yield {"name": "judge_cached_rerun_speedup", "value": round(fresh / cached, 1), "unit": "x",
           "target": TARGET_SPEEDUP, "ratio": round(fresh / cached / TARGET_SPEEDUP, 2),
           "cached_seconds": round(cached, 4)}
