"""The blueprint base every task of this package shares, and its shared state.

A task's blueprint only declares its classes (arguments, agent state, page, runner) and how
many units to offer; holding the task run, checking that the launcher passed the right shared
state, giving the page its title and turning "units needed" into Mephisto's initialization
data are the same for every task and live here. The live set-up (what a running task holds
once: items, scheduler, models) is built by the task's ``live`` module, which the runner and
the launcher use too, so the blueprint, runner and store never import each other in a circle.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mephisto.abstractions.blueprint import Blueprint, SharedTaskState
from mephisto.data_model.assignment import InitializationData

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.live.page_builder import StaticPageBuilder
from parlai_acute.mephisto_tasks.live.texts import live_texts


@dataclass
class LiveSharedState(SharedTaskState):
    live: Any = field(default=None, metadata={
        "help": "The live set-up built by the launcher; built from the arguments if None."})


def page_builder(name: str, frontend_dir: Path) -> type:
    """The task's page builder: the shared static page from ``frontend_dir``."""
    return type(name, (StaticPageBuilder,), {"FRONTEND_DIR": frontend_dir})


class TaskBlueprint(Blueprint):
    """Shared wiring. A subclass sets ``AgentStateClass``, ``TaskRunnerClass``, ``ArgsClass`` and
    ``LAUNCH_COMMAND`` (named when the shared state is wrong); the rest follows: its
    ``BLUEPRINT_TYPE`` is its arguments', its page the ``frontend/`` folder beside its module,
    onboarding uses its agent state, its shared state is :class:`LiveSharedState`, and the units
    offered are its runner's ``setup`` (the live set-up) scheduler's ``units_needed()`` unless it
    overrides :meth:`units_needed`."""

    LAUNCH_COMMAND = ""
    SharedStateClass = LiveSharedState

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "AgentStateClass" in cls.__dict__ and "OnboardingAgentStateClass" not in cls.__dict__:
            cls.OnboardingAgentStateClass = cls.AgentStateClass
        if "ArgsClass" in cls.__dict__:
            cls.BLUEPRINT_TYPE = cls.ArgsClass._blueprint_type
        if "TaskBuilderClass" not in cls.__dict__:
            frontend = Path(sys.modules[cls.__module__].__file__).parent / "frontend"
            cls.TaskBuilderClass = page_builder(f"{cls.__name__}PageBuilder", frontend)

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        self.task_run = task_run

    @classmethod
    def assert_task_args(cls, args, shared_state) -> None:
        if not isinstance(shared_state, cls.SharedStateClass):
            raise UserError(f"{cls.__name__} needs {cls.SharedStateClass.__name__}; launch it with "
                            f"`{cls.LAUNCH_COMMAND}`")

    def get_frontend_args(self) -> dict[str, Any]:
        """The page's ``task_config.json``: its title, and the lines every page needs before the task
        server answers (connection, tabs, preview: :mod:`.texts`)."""
        return {"task_title": self.args.blueprint.task_title, "texts": live_texts()}

    def units_needed(self) -> int:
        """How many interchangeable unit slots to offer (each gets its content when a worker takes it)."""
        return self.TaskRunnerClass.setup(self.task_run, self.args, self.shared_state).scheduler.units_needed()

    def get_initialization_data(self):
        """The slots for new work, and one for each page of finished work an earlier run left unsubmitted
        (it registers again to submit; the runner hands it that work, never new work)."""
        from parlai_acute.mephisto_tasks.live.live_runner import unsubmitted_at_start

        slots = self.units_needed() + unsubmitted_at_start(self.task_run)
        return [InitializationData(shared={"slot": i}, unit_data=[{}]) for i in range(slots)]
