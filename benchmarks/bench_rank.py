"""``metrics rank`` at the speed of llama.cpp: perplexity and hits@1/20 with the embedded SmolLM2.

* ``rank_tokens_per_second``: candidate tokens scored per second by ``metrics rank``'s path
  (the agent built from the default model string, prompts formatted and tokenised, every
  candidate's log-probabilities, the ranking) on ConvAI2-style static contexts, 20 candidates
  plus the parrot, end token scored; ``ratio`` = that / llama.cpp evaluating the same token
  sequences alone (the same prompt ids and candidate ids, in the same batches, no
  probabilities computed), target >= 0.8. The two are timed one after the other; ``cpu_ratio``
  is the same comparison in CPU seconds of this process, which a busy machine moves less.
* ``metrics_rank_seconds``: the seconds ``metrics rank`` takes for 60 contexts x 20 candidates,
  scaled from the contexts timed here (the machine is shared by several agents: measuring
  all 60 twice would take minutes); it was 490 s through the Hugging Face wrapper.
"""
import os
import time

CONTEXTS = 20  # the fewest with 19 distinct distractors each
FULL = 60
CANDIDATES = 20
TARGET = 0.8
BEFORE_S = 490.0
ROUNDS = 1  # each side once: 20 contexts x 21 candidates take minutes on the shared machine


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.metrics.inputs import load_items
    from parlai_acute.metrics.ranking import RankConfig, candidate_sets, rank, scorer_of
    from parlai_acute.metrics.replies import build_agent
    from parlai_acute.scripts.metrics_rank import default_model

    start = time.perf_counter()
    agent = build_agent(default_model())
    load_s = time.perf_counter() - start
    items = load_items(None, "static_contexts", limit=CONTEXTS)
    config = RankConfig(candidates=CANDIDATES, bootstrap=1000)
    score_fn, _ = scorer_of(agent, config.with_end)
    scorer = agent.scorer
    # the token sequences metrics rank evaluates, for the engine alone
    sequences = []
    for item, cands in zip(items, candidate_sets(items, config)):
        texts = [cands["gold"]] + cands["distractors"] + ([cands["parrot"]] if cands["parrot"] else [])
        targets = scorer.targets(texts, config.with_end)
        prompt = scorer.prompt(item.context, agent.system, room=max(len(t) for t in targets) + 1)
        sequences.append((prompt.ids, targets))
    scored = sum(len(t) for _, targets in sequences for t in targets)
    score_fn(items[0].context, [items[1].reference])  # warm: the first call
    rank_s = engine_s = float("inf")
    for _ in range(ROUNDS):
        scorer._cached = []
        start, cpu = time.perf_counter(), time.process_time()
        table, summary = rank(items, score_fn, config)
        rank_s, rank_cpu = min(rank_s, time.perf_counter() - start), time.process_time() - cpu
        scorer._cached = []
        start, cpu = time.perf_counter(), time.process_time()
        for prompt_ids, targets in sequences:
            scorer.logprobs(prompt_ids, targets, want=False)
        engine_s, engine_cpu = min(engine_s, time.perf_counter() - start), time.process_time() - cpu
    assert summary["contexts"] == CONTEXTS
    ratio = (scored / rank_s) / (scored / engine_s)
    yield {"name": "rank_tokens_per_second", "value": round(scored / rank_s, 1), "unit": "tokens/s",
           "ratio": round(ratio, 3), "target": TARGET, "engine_tokens_per_second": round(scored / engine_s, 1),
           "cpu_ratio": round(engine_cpu / rank_cpu, 3), "rank_cpu_seconds": round(rank_cpu, 1),
           "engine_cpu_seconds": round(engine_cpu, 1), "load_average": round(os.getloadavg()[0], 1),
           "contexts": CONTEXTS, "candidates": CANDIDATES + 1, "scored_tokens": scored,
           "context_tokens": sum(len(p) for p, _ in sequences), "engine": "llama.cpp", "threads": 1}
    per_context = rank_s / CONTEXTS
    yield {"name": "metrics_rank_seconds", "value": round(load_s + per_context * FULL, 1), "unit": "s",
           "before": BEFORE_S, "contexts": FULL, "candidates": CANDIDATES,
           "cpu_seconds": round(rank_cpu / CONTEXTS * FULL, 1), "load_average": round(os.getloadavg()[0], 1),
           "measured": f"{CONTEXTS} contexts in {rank_s:.1f} s ({rank_cpu:.1f} s of CPU), scaled to {FULL}; "
                       f"model load {load_s:.1f} s"}
