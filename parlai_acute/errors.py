"""User-facing errors: one line that names the problem and the fix.

Raise :class:`UserError` for anything a user can correct (a missing file, a bad option,
an unreachable endpoint). The ``parlai-acute`` CLI prints ``error: <message>`` and exits
with status 2, without a traceback. ParlAI scripts show the same message in the exception.
"""


class UserError(Exception):
    """A mistake in the user's input. The message says what is wrong and how to fix it."""

    exit_code = 2

    def __init__(self, message: str):
        if "\n" in message:
            raise ValueError("UserError messages are one line")
        super().__init__(message)
