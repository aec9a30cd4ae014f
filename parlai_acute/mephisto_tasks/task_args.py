"""The blueprint arguments every task of this package shares (``mephisto.blueprint.*``)."""
from __future__ import annotations

from dataclasses import dataclass, field

from mephisto.abstractions.blueprint import BlueprintArgs


@dataclass
class TaskArgs(BlueprintArgs):
    # Mephisto's default is "assets/tips.csv" beside the running script: inside the
    # virtualenv's bin/ for our console script, a file that does not exist.
    tips_location: str = field(default="", metadata={
        "help": "CSV file where Mephisto's tip-review scripts keep worker tips (empty: none).", "required": False})
