"""Batched self-chat: B conversations advance together, one ``batch_act`` per speaker turn.

ParlAI's ``BatchWorld`` runs a generic partner loop that skips the contexts and seed
utterances of self-chat worlds, and ParlAI's ``self_chat`` script refuses
``--batchsize > 1``. :class:`BatchSelfChatWorld` keeps ``BatchWorld``'s construction (one
world copy per batch slot, agents copied with ``agent.share()``) and replaces its parley
with :func:`~parlai_acute.worlds.self_chat.run_parley`, so contexts and seeds reach every
copy. Slot ``b`` runs global episodes ``b, b+B, b+2B, ...``.
"""
from __future__ import annotations

from parlai.core.worlds import BatchWorld

from parlai_acute.worlds.self_chat import SeededSelfChatWorld, run_parley


class BatchSelfChatWorld(BatchWorld):
    def __init__(self, opt, world: SeededSelfChatWorld):
        if not isinstance(world, SeededSelfChatWorld):
            raise TypeError("BatchSelfChatWorld batches parlai_acute seeded self-chat worlds")
        super().__init__(opt, world)
        roots = world.get_agents()
        for index, w in enumerate(self.worlds):
            w.episode_offset, w.episode_stride = index, len(self.worlds)
            # copies made by agent.share() get the class's default id, not the "_1"/"_2"
            # the self-chat script gave the originals; seed turns and act() use the copy's id
            for copy, root in zip(w.agents, roots):
                copy.id = root.id

    def parley(self):
        run_parley(self.worlds, root_agents=self.world.get_agents())
        self.acts = [[w.acts[i] for w in self.worlds] for i in (0, 1)]
        self.update_counters()

    def episode_done(self):
        return all(w.episode_done() for w in self.worlds)

    def write(self, logger, outfile):
        return self.world.write(logger, outfile)
