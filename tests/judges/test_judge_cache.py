"""The judge cache: stable keys, concurrent writers in several processes, nothing half-written."""
import multiprocessing

from parlai_acute.judges.cache import JudgeCache, cache_key


def _writer(path, start, n):
    cache = JudgeCache(path)
    for i in range(start, start + n):
        cache.put(cache_key("k", i), {"text": f"answer {i}", "n": i})


def test_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "c.sqlite")
    JudgeCache(path)
    procs = [multiprocessing.get_context("fork").Process(target=_writer, args=(path, s, 150)) for s in (0, 150, 300)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = JudgeCache(path)
    assert len(cache) == 450
    assert all(cache.get(cache_key("k", i)) == {"text": f"answer {i}", "n": i} for i in range(450))
    assert cache.hits == 450 and cache.get(cache_key("k", 999)) is None and cache.misses == 1


def test_keys_depend_on_every_part():
    base = cache_key("judge-call@1", {"spec": "a", "decoding": {"inference": "greedy"}}, "text", "sys", "prompt")
    assert base == cache_key("judge-call@1", {"decoding": {"inference": "greedy"}, "spec": "a"}, "text", "sys", "prompt")
    assert base != cache_key("judge-call@1", {"spec": "a", "decoding": {"inference": "sample"}}, "text", "sys", "prompt")
    assert base != cache_key("judge-call@1", {"spec": "a", "decoding": {"inference": "greedy"}}, "logprobs", "sys", "prompt")
    assert base != cache_key("judge-call@1", {"spec": "a", "decoding": {"inference": "greedy"}}, "text", "sys", "prompt!")
