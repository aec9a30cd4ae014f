"""``-t parlai_acute.tasks.static_contexts``: 1-3 turn contexts cut from real conversations.

The shape of Meena's Mini-Turing Benchmark: every example is one episode whose ``text``
is the context turns joined by newlines (ParlAI's history convention), whose label is the
real next turn, and which carries ``context_turns`` and a stable ``context_id``
(``<conversation id>:<number of turns>``). The set is a pure function of
``--context-seed``, ``--static-contexts-num``, ``--static-contexts-max-turns`` and the
datatype's split, so every model is evaluated on the same contexts.
"""
from __future__ import annotations

import random

from parlai.core.message import Message
from parlai.core.teachers import FixedDialogTeacher

from parlai_acute.tasks import sources
from parlai_acute.tasks.options import add_static_args, int_in_range
from parlai_acute.worlds.self_chat import TaskOptions, context_seed


def static_contexts(seed: int, num: int, max_turns: int, split: str = "test") -> list[dict]:
    """``num`` contexts, each from a different conversation, 1..max_turns turns long and at most
    :data:`~parlai_acute.tasks.sources.MAX_OPENING_WORDS` words, and a reference (the real next
    turn) of at most as many: cut at an earlier turn boundary, and a conversation whose first
    turn, or first reply, alone is longer is left out (the next one in the order takes its place).
    So what a worker reads stays what the time estimates assume, and no monologue becomes a
    reference or a ranking's distractor (the valid split has a 6,414-word turn: 7,144 tokens that
    19 of 20 contexts' rankings each scored as a distractor)."""
    limit = sources.MAX_OPENING_WORDS
    usable = [c for c in sources.chitchat(split, min_turns=2) if sources.opening_words(c, 1) <= limit]
    pool = sources.permuted(usable, seed, f"static:{split}")
    rng = random.Random(f"{seed}:static-lengths:{split}")
    out = []
    for conv in pool:
        if len(out) == num:
            break
        length = rng.randint(1, min(max_turns, len(conv.turns) - 1))  # drawn for every conversation taken up
        while length > 1 and (sources.opening_words(conv, length) > limit or _words(conv.turns[length]) > limit):
            length -= 1
        if _words(conv.turns[length]) > limit:
            continue
        out.append({"context_id": f"{conv.id}:{length}", "context_turns": list(conv.turns[:length]),
                    "reference": conv.turns[length], "conversation_id": conv.id})
    return out


def _words(turn: str) -> int:
    return len(turn.split())


class DefaultTeacher(TaskOptions, FixedDialogTeacher):
    options = staticmethod(add_static_args)

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = "static_contexts"
        if shared is not None:
            self.contexts = shared["contexts"]
        else:
            num = int_in_range(opt, "static_contexts_num", 1)
            max_turns = int_in_range(opt, "static_contexts_max_turns", 1, 3)
            self.contexts = static_contexts(context_seed(opt), num, max_turns,
                                            sources.datatype_split(opt.get("datatype")))
        self.reset()

    def share(self):
        shared = super().share()
        shared["contexts"] = self.contexts
        return shared

    def num_episodes(self):
        return len(self.contexts)

    def num_examples(self):
        return len(self.contexts)

    def get(self, episode_idx, entry_idx=0):
        item = self.contexts[episode_idx]
        return Message({"text": "\n".join(item["context_turns"]), "labels": [item["reference"]],
                        "context_turns": item["context_turns"], "context_id": item["context_id"],
                        "conversation_id": item["conversation_id"], "episode_done": True})
