"""The settings every analysis shares, declared and checked in one place: resamples, seed,
interval level, significance level and where the data came from. A protocol's configuration
subclasses :class:`Settings` and adds its own (calling ``super().__post_init__()``)."""
from __future__ import annotations

from dataclasses import dataclass

from parlai_acute.errors import UserError

__all__ = ["Settings", "check_settings"]


@dataclass
class Settings:
    """Everything that changes the results is recorded in every output; these are shared."""

    bootstrap: int = 1000  # resamples of the bootstrap intervals (0: none)
    seed: int = 0
    confidence: float = 0.95  # level of every interval
    alpha: float = 0.05  # significance level of every mark
    source: str = ""  # where the table came from (a file, a DataFrame, a Mephisto task)

    def __post_init__(self):
        check_settings(self)


def check_settings(config) -> None:
    """The settings analysis configurations share, checked in one place (those ``config`` has):
    ``bootstrap`` resamples (0 or more), the interval level ``confidence`` and the significance level
    ``alpha`` (between 0 and 1); a one-line UserError names the parameter."""
    bootstrap = getattr(config, "bootstrap", 0)
    if bootstrap < 0:
        raise UserError(f"bootstrap must be 0 or more (0: no intervals), got {bootstrap}", param="bootstrap")
    for name, example in (("confidence", "0.95"), ("alpha", "0.05")):
        value = getattr(config, name, None)
        if value is not None and not 0 < value < 1:
            raise UserError(f"{name} must be between 0 and 1 (e.g. {example}), got {value}", param=name)
