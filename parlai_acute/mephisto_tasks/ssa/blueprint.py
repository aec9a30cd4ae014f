"""The static SSA labelling Mephisto blueprint: its Hydra arguments (``mephisto.blueprint.*``) and wiring.

Registered as ``mephisto/blueprint=parlai_acute_ssa_label`` on import. Units are interchangeable
slots; the shared :class:`~parlai_acute.mephisto_tasks.live.item_scheduler.ItemScheduler` decides which
items a unit shows when a worker takes it (each item labelled by ``labels_per_item`` different
workers), and :mod:`.runner` stores every label the moment it is given.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from mephisto.operations.registry import register_mephisto_abstraction

from parlai_acute.mephisto_tasks.ssa.runner import SsaLabelRunner
from parlai_acute.mephisto_tasks.ssa.state import SsaLabelAgentState
from parlai_acute.mephisto_tasks.live.task_args import BLOCK_HELP, GoldArgs, stop_fields
from parlai_acute.mephisto_tasks.live.task_blueprint import TaskBlueprint

BLUEPRINT_TYPE = "parlai_acute_ssa_label"


@dataclass
class SsaLabelBlueprintArgs(GoldArgs):
    _blueprint_type: str = BLUEPRINT_TYPE
    _group: str = field(default="SsaLabelBlueprint", metadata={
        "help": "Static SSA labelling (Adiwardana et al. 2020): workers say whether each reply makes sense "
                "and, if so, whether it is specific to its context."})
    items_file: str = field(default="", metadata={
        "help": "JSON-lines items file (item, context, reply, model), from `parlai-acute ssa generate`. "
                "`parlai-acute ssa launch --items FILE` fills it.", "required": True})
    labels_per_item: int = field(default=5, metadata={
        "help": "Different workers who label each item (Meena: 5, majority vote)."})
    items_per_unit: int = field(default=10, metadata={"help": "Items one unit shows, one at a time."})
    max_labels_per_worker: Optional[int] = field(default=None, metadata={
        "help": "Cap on items one worker labels over all runs of the task (default: no cap)."})
    onboarding_file: str = field(default="", metadata={
        "help": "JSON list of gold items {context, reply, sensible[, specific]}: replies that plainly make no "
                "sense (default: the packaged ones)."})
    block_qualification: str = field(default="parlai_acute_ssa_block", metadata={"help": BLOCK_HELP})
    _stop = stop_fields("units of items", "labels", "model_a vs model_b",
                        " or 'model_a vs model_b [specific]' (without [sensible] or [specific], both rates)")
    stop_alpha: Optional[float] = _stop["stop_alpha"]
    stop_comparisons: str = _stop["stop_comparisons"]
    stop_budget: Optional[int] = _stop["stop_budget"]
    del _stop
    task_title: str = field(default="Does the response make sense?", metadata={"help": "Title of the page."})


@register_mephisto_abstraction()
class SsaLabelBlueprint(TaskBlueprint):
    AgentStateClass = SsaLabelAgentState
    TaskRunnerClass = SsaLabelRunner
    ArgsClass = SsaLabelBlueprintArgs
    LAUNCH_COMMAND = "parlai-acute ssa launch"
