"""``-t parlai_acute.tasks.chitchat``: real human-human openings from chitchat-dataset.

* self-chat (``SelfChatWorld``): each conversation starts with the first
  ``--chitchat-seed-turns`` real turns of a human conversation, said on the agents'
  behalf (ParlAI's seed-utterance mechanism; the turns carry a ``seed`` field);
* human chat (``InteractiveWorld``): the person is shown the conversation's real opening
  prompt as a suggestion;
* teacher (``DefaultTeacher``, for ``display_data``/``eval_model``): the conversations as
  ParlAI dialogues, speaker A's turn as text and speaker B's reply as label.

Conversations are split 90/5/5 into train/valid/test by a hash of their id.
"""
from __future__ import annotations

import copy

from parlai.core.teachers import DialogTeacher

from parlai_acute.tasks import sources
from parlai_acute.tasks.options import add_chitchat_args, int_in_range
from parlai_acute.worlds.interactive import SeededInteractiveWorld
from parlai_acute.worlds.self_chat import SeededSelfChatWorld, TaskOptions, context_seed


class DefaultTeacher(TaskOptions, DialogTeacher):
    options = staticmethod(add_chitchat_args)

    def __init__(self, opt, shared=None):
        opt = copy.deepcopy(opt)
        opt["datafile"] = sources.datatype_split(opt.get("datatype"))
        self.id = "chitchat"
        super().__init__(opt, shared)

    def setup_data(self, split):
        for conv in sources.chitchat(split, min_turns=2):
            for k in range(0, len(conv.turns) - 1, 2):
                yield {"text": conv.turns[k], "labels": [conv.turns[k + 1]], "conversation_id": conv.id,
                       "prompt": conv.prompt}, k == 0


class SelfChatWorld(SeededSelfChatWorld):
    options = staticmethod(add_chitchat_args)

    def make_seed(self, index):
        turns = int_in_range(self.opt, "chitchat_seed_turns", 1, 3)
        return sources.chitchat_seed(index, context_seed(self.opt), sources.datatype_split(self.opt.get("datatype")),
                                     turns)


class InteractiveWorld(SeededInteractiveWorld):
    options = staticmethod(add_chitchat_args)

    def make_seed(self, index):
        seed = sources.chitchat_seed(index, context_seed(self.opt), "test", 1)
        return sources.Seed(contexts=[f"Suggested opening: {seed.info['prompt']}", ""], info=seed.info)
