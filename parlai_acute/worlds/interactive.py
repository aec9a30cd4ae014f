"""Human-model chat seeded like self-chat, logged in the same Conversations format.

Agent 0 is the person (``LocalHumanAgent``), agent 1 the model. Unlike ParlAI's
``InteractiveWorld``, the contexts are delivered in a parley of their own whose acts have
``id: "context"``, so the world logger stores them in the log's ``context`` field exactly
as self-chat does. End of input ends the chat without asking the model to answer it.
"""
from __future__ import annotations

from parlai.core.message import Message
from parlai.core.worlds import validate
from parlai.tasks.interactive.worlds import InteractiveWorld

from parlai_acute.tasks.sources import Seed
from parlai_acute.worlds.self_chat import TaskOptions


class SeededInteractiveWorld(TaskOptions, InteractiveWorld):
    """Subclasses implement :meth:`make_seed`; its ``contexts`` are (person, model)."""

    def __init__(self, opt, agents, shared=None):
        self.episode_cnt = 0
        self.seed = Seed()
        super().__init__(opt, agents, shared)

    def make_seed(self, index: int) -> Seed:
        return Seed()

    def get_contexts(self):
        self.seed = self.make_seed(self.episode_cnt)
        return self.seed.contexts or ["", ""]

    def parley(self):
        if self.turn_cnt == 0:
            contexts = self.get_contexts()
            if any(contexts):
                # only non-empty contexts are observed and logged (the logger needs no None acts);
                # a context both sides get (a shared topic) is logged once, different ones (personas) each
                self.acts = []
                for agent, text in zip(self.agents, contexts):
                    if text:
                        act = Message({"id": "context", "text": text, "episode_done": False, "seed": self.seed.info})
                        agent.observe(validate(act))
                        if all(logged["text"] != text for logged in self.acts):
                            self.acts.append(act)
                self.update_counters()
                self.turn_cnt += 1
                return
            self.turn_cnt += 1
        self.acts = [None, None]
        try:
            human = self.agents[0].act()
        except StopIteration:  # [DONE] or [EXIT]
            self._finish()
            return
        if not human.get("text") and human.get("episode_done"):  # end of input
            self._finish()
            return
        self.acts[0] = human
        self.agents[1].observe(validate(human))
        self.acts[1] = self.agents[1].act()
        self.agents[0].observe(validate(self.acts[1]))
        self.update_counters()
        self.turn_cnt += 1

    def _finish(self):
        self.reset()
        self.finalize_episode()
        self.turn_cnt = 0
        self.episode_cnt += 1

    def episode_done(self):
        return False
