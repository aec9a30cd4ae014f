"""The multi-reference collection Mephisto blueprint: its Hydra arguments (``mephisto.blueprint.*``) and wiring.

Registered as ``mephisto/blueprint=parlai_acute_multiref`` on import. Units are interchangeable
slots; the shared :class:`~parlai_acute.mephisto_tasks.item_scheduler.ItemScheduler` gives each
unit the contexts that most need workers (each context written for by W different workers, R
replies each), and :mod:`.runner` stores every reply the moment it is accepted.
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
from parlai_acute.mephisto_tasks.multiref.runner import MultirefRunner
from parlai_acute.mephisto_tasks.multiref.state import MultirefAgentState
from parlai_acute.mephisto_tasks.page_builder import StaticPageBuilder
from parlai_acute.mephisto_tasks.task_args import TaskArgs

BLUEPRINT_TYPE = "parlai_acute_multiref"
FRONTEND_DIR = Path(__file__).parent / "frontend"


@dataclass
class MultirefBlueprintArgs(TaskArgs):
    _blueprint_type: str = BLUEPRINT_TYPE
    _group: str = field(default="MultirefBlueprint", metadata={
        "help": "Multi-reference collection (Gupta et al. 2019): workers write several different replies to "
                "each context."})
    contexts_file: str = field(default="", metadata={
        "help": "JSON lines in the DailyDialog multi-reference layout (default: the package's static contexts). "
                "`parlai-acute multiref launch --contexts FILE` fills it."})
    num_contexts: int = field(default=20, metadata={
        "help": "How many of the package's static contexts to use when no contexts_file is given."})
    context_seed: int = field(default=0, metadata={"help": "Seed choosing the static contexts."})
    mode: str = field(default="4R1W", metadata={
        "help": "RrWw: R replies from each of W workers per context (4R1W, 2R2W, 1R4W)."})
    replies_per_worker: Optional[int] = field(default=None, metadata={
        "help": "Overrides the R of the mode (replies one worker writes per context)."})
    workers_per_context: Optional[int] = field(default=None, metadata={
        "help": "Overrides the W of the mode (different workers per context)."})
    contexts_per_unit: int = field(default=5, metadata={"help": "Contexts one unit shows, one at a time."})
    max_contexts_per_worker: Optional[int] = field(default=None, metadata={
        "help": "Cap on contexts one worker writes for over all runs of the task (default: no cap)."})
    min_reply_chars: int = field(default=2, metadata={"help": "Shorter replies are refused (page and server)."})
    max_reply_chars: int = field(default=300, metadata={"help": "Longer replies are refused."})
    fast_reply_seconds: float = field(default=3.0, metadata={
        "help": "A reply entered within this many seconds of the previous one (or of the context) counts as fast."})
    fast_reply_streak: int = field(default=3, metadata={
        "help": "This many fast replies in a row show a warning (and are flagged in the data)."})
    seed: int = field(default=0, metadata={"help": "Seed of the context order."})
    task_title: str = field(default="Write replies to a conversation", metadata={"help": "Title of the page."})


@dataclass
class MultirefSharedState(SharedTaskState):
    live: Any = field(default=None, metadata={"help": "MultirefLive built by the launcher; built from args if None."})


def check_args(b) -> tuple[int, int]:
    """(replies per worker, workers per context); every number checked, one-line errors."""
    replies, workers = parse_mode_args(b)
    for name in ("contexts_per_unit", "min_reply_chars", "max_reply_chars", "fast_reply_streak", "num_contexts"):
        value = b.get(name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UserError(f"mephisto.blueprint.{name} must be a whole number of at least 1, got {value}")
    if int(b.max_reply_chars) < int(b.min_reply_chars):
        raise UserError(f"mephisto.blueprint.max_reply_chars {b.max_reply_chars} is below min_reply_chars "
                        f"{b.min_reply_chars}; raise it")
    cap = b.get("max_contexts_per_worker")
    if cap is not None and (not isinstance(cap, int) or cap < 1):
        raise UserError(f"mephisto.blueprint.max_contexts_per_worker must be at least 1 (or unset), got {cap}")
    return replies, workers


def parse_mode_args(b) -> tuple[int, int]:
    from parlai_acute.mephisto_tasks.multiref.contexts import parse_mode

    return parse_mode(b.mode, b.get("replies_per_worker"), b.get("workers_per_context"))


class MultirefLive:
    """What a running task holds once: contexts, mode, scheduler, configuration record."""

    onboarding_items: list = []

    def __init__(self, args, history: list[dict] = ()):
        from parlai_acute.mephisto_tasks.item_scheduler import ItemScheduler
        from parlai_acute.mephisto_tasks.multiref.contexts import default_contexts, mode_name, read_contexts

        b = args.blueprint
        self.replies_per_worker, self.workers_per_context = check_args(b)
        if b.get("contexts_file"):
            self.items = read_contexts(os.path.expanduser(b.contexts_file))
            source = str(b.contexts_file)
        else:
            self.items = default_contexts(int(b.num_contexts), int(b.context_seed))
            source = f"parlai_acute.tasks.static_contexts (num={b.num_contexts}, seed={b.context_seed})"
        self.seed = int(b.seed)
        self.mode = mode_name(self.replies_per_worker, self.workers_per_context)
        self.scheduler = ItemScheduler([c.context_id for c in self.items], per_item=self.workers_per_context,
                                       items_per_unit=int(b.contexts_per_unit),
                                       max_per_worker=b.get("max_contexts_per_worker"), seed=self.seed,
                                       history=history)
        self.config = {"contexts": source, "mode": self.mode, "replies_per_worker": self.replies_per_worker,
                       "workers_per_context": self.workers_per_context, "contexts_per_unit": int(b.contexts_per_unit),
                       "min_reply_chars": int(b.min_reply_chars), "fast_reply_seconds": float(b.fast_reply_seconds),
                       "fast_reply_streak": int(b.fast_reply_streak), "seed": self.seed}


def ensure_live(task_run, args, shared_state) -> MultirefLive:
    """The run's live setup: the launcher's, or built here from the args and the stored replies."""
    if shared_state.live is None:
        from parlai_acute.mephisto_tasks.multiref import store

        history = store.history(store.unit_data_for_task(task_run.db, task_run.get_task().task_name))
        shared_state.live = MultirefLive(args, history)
    return shared_state.live


class MultirefPageBuilder(StaticPageBuilder):
    FRONTEND_DIR = FRONTEND_DIR


@register_mephisto_abstraction()
class MultirefBlueprint(Blueprint):
    AgentStateClass = MultirefAgentState
    OnboardingAgentStateClass = MultirefAgentState
    TaskBuilderClass = MultirefPageBuilder
    TaskRunnerClass = MultirefRunner
    ArgsClass = MultirefBlueprintArgs
    SharedStateClass = MultirefSharedState
    BLUEPRINT_TYPE = BLUEPRINT_TYPE

    def __init__(self, task_run, args, shared_state: MultirefSharedState):
        super().__init__(task_run, args, shared_state)
        self.task_run = task_run

    @classmethod
    def assert_task_args(cls, args, shared_state) -> None:
        if not isinstance(shared_state, MultirefSharedState):
            raise UserError("the multi-reference blueprint needs MultirefSharedState; launch it with "
                            "`parlai-acute multiref launch`")

    def get_frontend_args(self) -> dict[str, Any]:
        return {"task_title": self.args.blueprint.task_title}

    def get_initialization_data(self):
        live = ensure_live(self.task_run, self.args, self.shared_state)
        return [InitializationData(shared={"slot": i}, unit_data=[{}]) for i in range(live.scheduler.units_needed())]
