"""The blueprint base every task of this package shares, and its shared state.

A task's blueprint only declares its classes (arguments, agent state, page, runner) and how
many units to offer; holding the task run, checking that the launcher passed the right shared
state, giving the page its title and turning "units needed" into Mephisto's initialization
data are the same for every task and live here. The live set-up (what a running task holds
once: items, scheduler, models) is built by the task's ``live`` module, which the runner and
the launcher use too, so the blueprint, runner and store never import each other in a circle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mephisto.abstractions.blueprint import Blueprint, SharedTaskState
from mephisto.data_model.assignment import InitializationData

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.page_builder import StaticPageBuilder
from parlai_acute.mephisto_tasks.texts import live_texts


@dataclass
class LiveSharedState(SharedTaskState):
    live: Any = field(default=None, metadata={
        "help": "The live set-up built by the launcher; built from the arguments if None."})


def page_builder(name: str, frontend_dir: Path) -> type:
    """The task's page builder: the shared static page from ``frontend_dir``."""
    return type(name, (StaticPageBuilder,), {"FRONTEND_DIR": frontend_dir})


class TaskBlueprint(Blueprint):
    """Shared wiring; subclasses set the class attributes Mephisto needs (onboarding uses the task's
    agent state unless told otherwise), ``LAUNCH_COMMAND`` and ``TASK_LABEL`` (for the message when
    the shared state is wrong), and ``live_setup`` (the task's ``ensure_live``) or ``units_needed``."""

    LAUNCH_COMMAND = ""
    TASK_LABEL = ""
    live_setup = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "AgentStateClass" in cls.__dict__ and "OnboardingAgentStateClass" not in cls.__dict__:
            cls.OnboardingAgentStateClass = cls.AgentStateClass

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        self.task_run = task_run

    @classmethod
    def assert_task_args(cls, args, shared_state) -> None:
        if not isinstance(shared_state, cls.SharedStateClass):
            raise UserError(f"the {cls.TASK_LABEL} blueprint needs {cls.SharedStateClass.__name__}; launch it with "
                            f"`{cls.LAUNCH_COMMAND}`")

    def get_frontend_args(self) -> dict[str, Any]:
        """The page's ``task_config.json``: its title, and the lines every page needs before the task
        server answers (connection, tabs, preview: :mod:`.texts`)."""
        return {"task_title": self.args.blueprint.task_title, "texts": live_texts()}

    def units_needed(self) -> int:
        """How many interchangeable unit slots to offer (each gets its content when a worker takes it)."""
        return type(self).live_setup(self.task_run, self.args, self.shared_state).scheduler.units_needed()

    def get_initialization_data(self):
        return [InitializationData(shared={"slot": i}, unit_data=[{}]) for i in range(self.units_needed())]
