"""The blueprint arguments the tasks of this package share (``mephisto.blueprint.*``), written once:
every task has ``seed``; a task that starts new workers with a gold item has :class:`GoldArgs`.
A task's own failure message lives on its runner (:class:`~parlai_acute.mephisto_tasks.live_runner.LiveRunner`),
used when ``onboarding_fail_message`` is left empty; its ``block_qualification`` is declared by the
task (Mephisto's operator keeps holders out of its units, so it must have a name before launch)."""
from __future__ import annotations

from dataclasses import dataclass, field

from mephisto.abstractions.blueprint import BlueprintArgs

__all__ = ["TaskArgs", "GoldArgs", "BLOCK_HELP"]

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
