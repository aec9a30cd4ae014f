"""The static SSA labelling Mephisto blueprint: its Hydra arguments (``mephisto.blueprint.*``) and wiring.

Registered as ``mephisto/blueprint=parlai_acute_ssa_label`` on import. Units are interchangeable
slots; the shared :class:`~parlai_acute.mephisto_tasks.item_scheduler.ItemScheduler` decides which
items a unit shows when a worker takes it (each item labelled by ``labels_per_item`` different
workers), and :mod:`.runner` stores every label the moment it is given.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from mephisto.abstractions.blueprint import Blueprint, SharedTaskState
from mephisto.data_model.assignment import InitializationData
from mephisto.operations.registry import register_mephisto_abstraction

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.page_builder import StaticPageBuilder
from parlai_acute.mephisto_tasks.ssa_label.runner import SsaLabelRunner
from parlai_acute.mephisto_tasks.ssa_label.state import SsaLabelAgentState
from parlai_acute.mephisto_tasks.task_args import TaskArgs

BLUEPRINT_TYPE = "parlai_acute_ssa_label"
FRONTEND_DIR = Path(__file__).parent / "frontend"


@dataclass
class SsaLabelBlueprintArgs(TaskArgs):
    _blueprint_type: str = BLUEPRINT_TYPE
    _group: str = field(default="SsaLabelBlueprint", metadata={
        "help": "Static SSA labelling (Adiwardana et al. 2020): workers say whether each reply makes sense "
                "and, if so, whether it is specific to its context."})
    items_file: str = field(default="", metadata={
        "help": "JSON-lines items file (item_id, context, reply, model), from `parlai-acute ssa generate`. "
                "`parlai-acute ssa launch --items FILE` fills it.", "required": True})
    labels_per_item: int = field(default=5, metadata={
        "help": "Different workers who label each item (Meena: 5, majority vote)."})
    items_per_unit: int = field(default=10, metadata={"help": "Items one unit shows, one at a time."})
    max_labels_per_worker: Optional[int] = field(default=None, metadata={
        "help": "Cap on items one worker labels over all runs of the task (default: no cap)."})
    onboarding: bool = field(default=True, metadata={
        "help": "A worker's first unit starts with a gold item whose reply plainly makes no sense; saying it "
                "does blocks the worker with block_qualification."})
    onboarding_file: str = field(default="", metadata={
        "help": "JSON list of gold items {context, reply, sensible[, specific]} (default: the packaged ones)."})
    onboarding_fail_message: str = field(default=(
        "Sorry, you said a response makes sense that plainly does not, so you cannot take part in this task. "
        "Thank you for your time."), metadata={"help": "What a worker who fails the gold item is told."})
    block_qualification: str = field(default="parlai_acute_ssa_block", metadata={
        "help": "Mephisto qualification granted to workers who fail the gold item; holders cannot take units."})
    seed: int = field(default=0, metadata={"help": "Seed of the item order and gold item choice."})
    task_title: str = field(default="Does the response make sense?", metadata={"help": "Title of the page."})


@dataclass
class SsaLabelSharedState(SharedTaskState):
    live: Any = field(default=None, metadata={"help": "SsaLive built by the launcher; built from args if None."})


class SsaLive:
    """What a running task holds once: items, gold items, scheduler, configuration record."""

    def __init__(self, args, history: list[dict] = ()):
        from parlai_acute.mephisto_tasks.item_scheduler import ItemScheduler
        from parlai_acute.mephisto_tasks.ssa_label import onboarding
        from parlai_acute.mephisto_tasks.ssa_label.items import read_items

        b = args.blueprint
        check_numbers(b)
        if not b.get("items_file"):
            raise UserError("no items file; pass --items FILE (made by `parlai-acute ssa generate`)")
        self.items = read_items(os.path.expanduser(b.items_file))
        self.onboarding_items = onboarding.load_items(b.get("onboarding_file") or None) if b.onboarding else []
        self.seed = int(b.seed)
        self.scheduler = ItemScheduler([i.item_id for i in self.items], per_item=int(b.labels_per_item),
                                       items_per_unit=int(b.items_per_unit),
                                       max_per_worker=b.get("max_labels_per_worker"),
                                       use_onboarding=bool(b.onboarding), seed=self.seed, history=history)
        self.config = {"items_file": str(b.items_file), "labels_per_item": int(b.labels_per_item),
                       "items_per_unit": int(b.items_per_unit), "onboarding": bool(b.onboarding), "seed": self.seed}


def check_numbers(b) -> None:
    for name in ("labels_per_item", "items_per_unit"):
        value = b.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UserError(f"mephisto.blueprint.{name} must be a whole number of at least 1, got {value}")
    cap = b.get("max_labels_per_worker")
    if cap is not None and (not isinstance(cap, int) or cap < 1):
        raise UserError(f"mephisto.blueprint.max_labels_per_worker must be at least 1 (or unset), got {cap}")


def ensure_live(task_run, args, shared_state) -> SsaLive:
    """The run's live setup: the launcher's, or built here from the args and the stored labels."""
    if shared_state.live is None:
        from parlai_acute.mephisto_tasks.ssa_label import store

        history = store.history(store.unit_data_for_task(task_run.db, task_run.get_task().task_name))
        shared_state.live = SsaLive(args, history)
    return shared_state.live


class SsaLabelPageBuilder(StaticPageBuilder):
    FRONTEND_DIR = FRONTEND_DIR


@register_mephisto_abstraction()
class SsaLabelBlueprint(Blueprint):
    AgentStateClass = SsaLabelAgentState
    OnboardingAgentStateClass = SsaLabelAgentState
    TaskBuilderClass = SsaLabelPageBuilder
    TaskRunnerClass = SsaLabelRunner
    ArgsClass = SsaLabelBlueprintArgs
    SharedStateClass = SsaLabelSharedState
    BLUEPRINT_TYPE = BLUEPRINT_TYPE

    def __init__(self, task_run, args, shared_state: SsaLabelSharedState):
        super().__init__(task_run, args, shared_state)
        self.task_run = task_run

    @classmethod
    def assert_task_args(cls, args, shared_state) -> None:
        if not isinstance(shared_state, SsaLabelSharedState):
            raise UserError("the SSA labelling blueprint needs SsaLabelSharedState; launch it with "
                            "`parlai-acute ssa launch`")

    def get_frontend_args(self) -> dict[str, Any]:
        return {"task_title": self.args.blueprint.task_title}

    def get_initialization_data(self):
        live = ensure_live(self.task_run, self.args, self.shared_state)
        return [InitializationData(shared={"slot": i}, unit_data=[{}]) for i in range(live.scheduler.units_needed())]
