"""Command-line options of our tasks; teachers and worlds both add them (ParlAI may ask twice)."""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError
from parlai_acute.worlds.self_chat import add_context_args


def add_option(parser, *names, **kwargs) -> None:
    try:
        parser.add_argument(*names, **kwargs)
    except argparse.ArgumentError:
        pass  # already added by the teacher or the world of the same task


def add_chitchat_args(parser) -> None:
    add_context_args(parser)
    add_option(parser, "--chitchat-seed-turns", type=int, default=1,
               help="how many real opening turns of a chitchat conversation seed each self-chat (1-3)")


def add_static_args(parser) -> None:
    add_context_args(parser)
    add_option(parser, "--static-contexts-num", type=int, default=200,
               help="number of static contexts (each 1-3 turns of a real conversation)")
    add_option(parser, "--static-contexts-max-turns", type=int, default=3,
               help="longest context, in turns (Meena's Mini-Turing Benchmark uses 1-3)")


def int_in_range(opt, key: str, low: int, high: int | None = None) -> int:
    """Read an int option and raise a UserError naming the option (its opt key) when it is out of range."""
    value = opt.get(key)
    if not isinstance(value, int) or value < low or (high is not None and value > high):
        limit = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise UserError(f"{key} must be {limit}, got {value!r}", param=key)
    return value
