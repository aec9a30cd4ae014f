"""Run self-chats from a ParlAI opt, batched or not, and save the log atomically.

This is ParlAI's ``self_chat()`` loop (same agents, ids ``<id>_1``/``<id>_2``, same
world logger) with three additions: a second model given as an opt rather than only as a
model file, ``--batchsize`` via :class:`~parlai_acute.worlds.batch.BatchSelfChatWorld`,
and a tqdm progress bar.
"""
from __future__ import annotations

import copy
import os
import random
import sys
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.worlds.conversations_log import save_conversations
from parlai_acute.worlds.model_spec import create_agent_checked
from parlai_acute.worlds.self_chat import SeededSelfChatWorld, log_extra


def make_agents(opt, partner_opt=None):
    agent1 = create_agent_checked(opt)
    agent2 = create_agent_checked(partner_opt) if partner_opt is not None else agent1.clone()
    agent1.id = agent1.id + "_1"
    agent2.id = agent2.id + "_2"
    return agent1, agent2


def make_world(opt, agents):
    """The task's self-chat world; with batchsize > 1 wrapped in BatchSelfChatWorld."""
    from parlai.core.worlds import create_task

    from parlai_acute.worlds.batch import BatchSelfChatWorld

    single = copy.deepcopy(opt)
    single["batchsize"] = 1
    world = create_task(single, list(agents))
    if opt.get("batchsize", 1) <= 1:
        return world
    if not isinstance(world, SeededSelfChatWorld):
        raise UserError(f"batchsize > 1 needs a parlai_acute task (chitchat, persona, topics), not {opt['task']!r}; "
                        "use batchsize=1 for other tasks", param="batchsize")
    return BatchSelfChatWorld(opt, world)


def run_self_chats(opt, partner_opt=None, progress: bool = True, extra: dict | None = None) -> Path:
    """Run ``opt['num_self_chats']`` conversations; returns the ``.jsonl`` written."""
    from parlai.utils.world_logging import WorldLogger
    from tqdm import tqdm

    random.seed(opt["seed"])
    world = make_world(opt, make_agents(opt, partner_opt))
    logger = WorldLogger(opt)
    total, batch = opt["num_self_chats"], max(1, opt.get("batchsize", 1))
    fields = dict(log_extra(opt), **(extra or {}))
    if partner_opt is not None:
        fields["partner_opt"] = {k: partner_opt.get(k) for k in ("model", "model_file") if partner_opt.get(k)}
    try:
        with tqdm(total=total, unit="chat", disable=not progress, desc="self-chat") as bar:
            for _ in range(-(-total // batch)):
                for _ in range(opt["selfchat_max_turns"]):
                    world.parley()
                    logger.log(world)
                    if opt.get("display_examples"):
                        print(world.display())
                world.reset()
                for index in range(batch):
                    logger.reset_world(index)
                bar.update(min(batch, total - bar.n))
    except BaseException:
        _save_partial(logger, opt, fields)
        raise
    logs = [episode for episode in logger.get_logs() if episode][:total]
    return save_conversations(logs, opt["outfile"], opt, self_chat=True, **fields)


def partial_path(outfile) -> Path:
    """Where an interrupted run keeps its finished conversations: ``x.partial.jsonl``."""
    return Path(os.path.splitext(os.fspath(outfile))[0] + ".partial.jsonl")


def _save_partial(logger, opt, fields) -> None:
    """Keep the conversations that finished, under a name that says the run did not."""
    logs = [episode for episode in logger.get_logs() if episode]  # finished episodes only
    if not logs:
        return
    path = save_conversations(logs, partial_path(opt["outfile"]), opt, self_chat=True, interrupted=True, **fields)
    print(f"self-chat stopped: {len(logs)} finished conversation(s) kept in {path}", file=sys.stderr)
