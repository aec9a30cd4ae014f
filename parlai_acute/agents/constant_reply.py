"""The ConvAI2 report's toy baseline: always the same reply made of frequent words.

Dinan et al. (2019, "The Second Conversational Intelligence Challenge") showed that the
constant answer "i am you to do and your is like" beat every entry on F1, which is why
F1 alone says little about a chatbot. Set it beside real models:

    parlai-acute metrics score --task static_contexts \\
        --model parlai_acute.agents.constant_reply:ConstantReplyAgent
"""
from __future__ import annotations

from parlai.core.agents import Agent
from parlai.core.message import Message

CONVAI2_TOY_REPLY = "i am you to do and your is like"


class ConstantReplyAgent(Agent):
    """``-m parlai_acute.agents.constant_reply:ConstantReplyAgent [--constant-reply TEXT]``."""

    @classmethod
    def add_cmdline_args(cls, parser, partial_opt=None):
        group = parser.add_argument_group("Constant reply (parlai_acute)")
        group.add_argument("--constant-reply", type=str, default=CONVAI2_TOY_REPLY,
                           help=f"the reply to every message (default: ConvAI2's {CONVAI2_TOY_REPLY!r})")
        return parser

    def __init__(self, opt, shared=None):
        super().__init__(opt, shared)
        self.id = "ConstantReply"
        self.reply = opt.get("constant_reply") or CONVAI2_TOY_REPLY

    def act(self):
        return Message({"id": self.getID(), "text": self.reply, "episode_done": False})

    def batch_act(self, observations):
        return [self.act() for _ in observations]
