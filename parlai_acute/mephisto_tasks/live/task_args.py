"""The blueprint arguments the tasks of this package share (``mephisto.blueprint.*``), written once:
every task has ``seed``; a task that starts new workers with a gold item has :class:`GoldArgs`.
A task's own failure message lives on its runner (:class:`~parlai_acute.mephisto_tasks.live.live_runner.LiveRunner`),
used when ``onboarding_fail_message`` is left empty; its ``block_qualification`` is declared by the
task (Mephisto's operator keeps holders out of its units, so it must have a name before launch)."""
from __future__ import annotations

from dataclasses import dataclass, field

from mephisto.abstractions.blueprint import BlueprintArgs

__all__ = ["TaskArgs", "GoldArgs", "BLOCK_HELP", "stop_fields"]

BLOCK_HELP = "Mephisto qualification granted to workers who fail the gold item; holders cannot take units."


@dataclass
class TaskArgs(BlueprintArgs):
    # Mephisto's default is "assets/tips.csv" beside the running script: inside the
    # virtualenv's bin/ for our console script, a file that does not exist.
    tips_location: str = field(default="", metadata={
        "help": "CSV file where Mephisto's tip-review scripts keep worker tips (empty: none).", "required": False})
    seed: int = field(default=0, metadata={
        "help": "Seed of the task's random choices (what a unit shows and in which order, sides, gold items, "
                "assignments); every choice is stored with the data."})


@dataclass
class GoldArgs(TaskArgs):
    onboarding: bool = field(default=True, metadata={
        "help": "Start each new worker with a gold item that has one plainly right answer; a wrong answer ends "
                "the unit with onboarding_fail_message, grants block_qualification and leaves the worker's "
                "work out of the analysis."})
    onboarding_fail_message: str = field(default="", metadata={
        "help": "What a worker who fails the gold item is told (empty: the task's own message)."})


def stop_fields(work: str, judgments: str, example: str, note: str = "") -> dict:
    """The three stop options of issue 18 (``stop_alpha``, ``stop_comparisons``, ``stop_budget``),
    worded for one task: ``work`` is what stops being handed out, ``judgments`` what the budget
    counts. One wording for every task; the rule itself is :class:`parlai_acute.monitoring.stopping.StopRule`."""
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
