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


def stop_fields(work: str, judgments: str, example: str, note: str = "") -> dict:
    """The three stop options of issue 18 (``stop_alpha``, ``stop_comparisons``, ``stop_budget``),
    worded for one task: ``work`` is what stops being handed out, ``judgments`` what the budget
    counts. One wording for every task; the rule itself is :class:`parlai_acute.stopping.StopRule`."""
    return {
        "stop_alpha": field(default=None, metadata={
            "help": f"Stop handing out {work} once stop_comparisons (all model pairs if empty) are decided "
                    "by confidence sequences valid at every look, at this error rate; the decision is stored "
                    "with the unit that settled it (stop_decision) and `parlai-acute status` shows it."}),
        "stop_comparisons": field(default="", metadata={
            "help": f"Comma-separated model pairs the stop rule waits for, e.g. '{example}'{note}."}),
        "stop_budget": field(default=None, metadata={
            "help": f"Stop handing out {work} after this many {judgments} (over all runs of the task)."}),
    }
