"""Adding an agent's command-line options to a ParlAI parser that may already have some.

ParlAI builds one parser for a script and every agent in it (a self-chat with a partner
of the same class adds the same options twice; ``parlai self_chat`` already defines
``--seed``). Options that are already there keep their first definition.
"""


def option_adder(parser, title: str):
    """A new argument group ``title`` and an ``add(name, **kwargs)`` that skips existing options."""
    group = parser.add_argument_group(title)
    existing = {a for action in getattr(parser, "_actions", []) for a in action.option_strings}

    def add(name, **kwargs):
        if name not in existing:
            group.add_argument(name, **kwargs)

    return group, add
