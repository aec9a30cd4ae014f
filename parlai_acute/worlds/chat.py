"""The terminal chat loop: ParlAI's ``interactive()`` with an atomic log that survives Ctrl-C."""
from __future__ import annotations

from pathlib import Path

from parlai_acute.worlds.conversations_log import save_conversations
from parlai_acute.worlds.model_spec import create_agent_checked
from parlai_acute.worlds.self_chat import log_extra


def chat(opt, plain: bool = False) -> tuple[Path | None, int]:
    """Chat until [EXIT]/end of input; returns the log path (or None) and the number saved.

    ``plain``: no context at all (the task's world is used without its seed).
    """
    from parlai.agents.local_human.local_human import LocalHumanAgent
    from parlai.core.worlds import create_task
    from parlai.utils.world_logging import WorldLogger

    from parlai_acute.worlds.interactive import SeededInteractiveWorld

    agent = create_agent_checked(opt)
    human = LocalHumanAgent(opt)
    if plain:
        world = SeededInteractiveWorld(opt, [human, agent])
    else:
        world = create_task(opt, [human, agent])
    logger = WorldLogger(opt) if opt.get("outfile") else None
    try:
        while not world.epoch_done():
            world.parley()
            if world.epoch_done() or world.get_total_parleys() <= 0:
                if logger is not None:
                    logger.reset()
                continue
            if logger is not None:
                logger.log(world)
    except BaseException:  # Ctrl-C or a failing model: keep what was said, then report it
        _save(logger, opt)
        raise
    return _save(logger, opt)


def _save(logger, opt) -> tuple[Path | None, int]:
    if logger is None:
        return None, 0
    logger.reset()
    logs = [episode for episode in logger.get_logs() if episode and _has_dialog(episode)]
    if not logs:
        return None, 0
    return save_conversations(logs, opt["outfile"], opt, self_chat=False, **log_extra(opt)), len(logs)


def _has_dialog(episode) -> bool:
    """An episode of only contexts (the person quit before speaking) is not a conversation."""
    return any(act.get("id") != "context" for pair in episode for act in pair)
