"""User-facing errors: one line that names the problem and the fix.

Raise :class:`UserError` for anything a user can correct (a missing file, a bad option,
an unreachable endpoint). The ``parlai-acute`` CLI prints ``error: <message>`` and exits
with status 2, without a traceback. ParlAI scripts show the same message in the exception.

The library speaks Python: a message names the parameter a caller passed (``max_per_worker
must be at least 1, got 0``), never a command-line flag, and says which parameter(s) it names
in ``param``. The CLI (:mod:`parlai_acute.scripts.main`) rewrites those names to the flags of the
command that was run, so the terminal still says ``--max-per-worker must be at least 1, got 0``.
"""
from __future__ import annotations

import re


def param_pattern(name: str) -> re.Pattern:
    """Where ``name`` stands as a parameter in a message: the whole word, not part of a longer name,
    a path, a dotted config key (``mephisto.blueprint.name``) or a quoted field; ``name=`` included."""
    return re.compile(rf"(?<![\w.\-'\"/\\:]){re.escape(name)}(?![\w\-/\\]|\.\w)=?")


class UserError(Exception):
    """A mistake in the user's input. The message says what is wrong and how to fix it.

    ``param``: the Python parameter(s) the message names (a name or a tuple of names), so a
    command line can say its own spelling of them instead (``tests/test_library_speaks_python.py``
    checks that each message names its parameters).
    """

    exit_code = 2

    def __init__(self, message: str, param: str | tuple[str, ...] | None = None):
        if "\n" in message:
            raise ValueError("UserError messages are one line")
        super().__init__(message)
        self.param = param
        self.params = (param,) if isinstance(param, str) else tuple(param or ())

    def __reduce__(self):  # keeps ``param`` across processes (a llama.cpp engine process raises these)
        return type(self), (str(self), self.param)
