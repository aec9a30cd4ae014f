"""Overhead of our self-chat worlds, with an instant model (GenericBot) so only the world counts.

* ``world_utterances_per_s``: our seeded world (chitchat seeds, seed fields, WorldLogger)
  against ParlAI's own ``SelfChatWorld`` (``-t self_chat --seed-messages-from-file`` with
  the same real openings, so the agent does the same work). Utterances (seeded or
  generated, not contexts) per second, because ParlAI's world spends one parley of each
  conversation on a 'Hi!' context. Target: at least half ParlAI's rate (we add seed
  fields, per-episode seed lookup and the batch-capable parley).
* ``world_overhead_per_utterance_us``: the same as time per utterance; target 1000 us,
  under 1% of one SmolLM2 reply (about 0.25-0.45 s here), i.e. irrelevant for real runs.
* ``world_batched_utterances_per_s``: BatchSelfChatWorld at batch 8 against batch 1 (same
  conversations); the world work is the same, so the ratio should be about 1 or better.
* ``chitchat_first_load_s``: parsing chitchat-dataset's 40 MB JSON once per process.
"""
from __future__ import annotations

import tempfile
import time

GENERIC = "parlai_acute.agents.generic_bot:GenericBotAgent"
CHATS, TURNS = 64, 6


def _opt(tmp, task, batchsize=1, *extra):
    from parlai.scripts.self_chat import setup_args

    return setup_args().parse_args(["-m", GENERIC, "-t", task, "--datapath", tmp, "--selfchat-max-turns", str(TURNS),
                                    "--num-self-chats", str(CHATS), "--batchsize", str(batchsize),
                                    "--outfile", f"{tmp}/x.jsonl", "--display-examples", "false", *extra])


def _rate(opt, repeats: int = 3) -> float:
    """Best of ``repeats`` runs (the machine's 2 cores are shared)."""
    return max(_one_rate(opt) for _ in range(repeats))


def _one_rate(opt) -> float:
    from parlai.utils.world_logging import WorldLogger

    from parlai_acute.worlds.runner import make_agents, make_world

    world = make_world(opt, make_agents(opt))
    logger = WorldLogger(opt)
    batch = opt["batchsize"]
    start = time.perf_counter()
    for _ in range(CHATS // batch):
        for _ in range(TURNS):
            world.parley()
            logger.log(world)
        world.reset()
        for index in range(batch):
            logger.reset_world(index)
    took = time.perf_counter() - start
    utterances = sum(1 for episode in logger.get_logs() for pair in episode for act in pair
                     if act.get("id") != "context")
    return utterances / took


def run():
    import parlai_acute  # noqa: F401

    start = time.perf_counter()
    from parlai_acute.tasks import sources

    sources.chitchat_seed(0, 42, "train", 1)  # loads the dataset and the seed pool used below
    yield {"name": "chitchat_first_load_s", "value": round(time.perf_counter() - start, 2), "unit": "s"}

    with tempfile.TemporaryDirectory() as tmp:
        ours = _rate(_opt(tmp, "parlai_acute.tasks.chitchat"))
        openers = f"{tmp}/openers.txt"
        with open(openers, "w") as fh:
            fh.write("\n".join(sources.chitchat_seed(i, 42, "train", 1).openers[0] for i in range(CHATS)) + "\n")
        parlai = _rate(_opt(tmp, "self_chat", 1, "--seed-messages-from-file", openers))
        yield {"name": "world_utterances_per_s", "value": round(ours), "unit": "utterances/s", "baseline": round(parlai),
               "ratio": round(ours / parlai, 2), "target": 0.5, "note": "baseline: ParlAI SelfChatWorld, same openings"}
        yield {"name": "world_overhead_per_utterance_us", "value": round(1e6 / ours, 1), "unit": "us",
               "baseline": round(1e6 / parlai, 1), "target": 1000, "ratio": round(1e6 / ours / 1000, 3)}
        batched = _rate(_opt(tmp, "parlai_acute.tasks.chitchat", batchsize=8))
        yield {"name": "world_batched_utterances_per_s", "value": round(batched), "unit": "utterances/s",
               "baseline": round(ours), "ratio": round(batched / ours, 2), "target": 1.0,
               "note": "batch 8 vs batch 1, GenericBot batch_act"}
