"""The multi-reference collection Mephisto blueprint: its Hydra arguments (``mephisto.blueprint.*``) and wiring.

Registered as ``mephisto/blueprint=parlai_acute_multiref`` on import. Units are interchangeable
slots; the shared :class:`~parlai_acute.mephisto_tasks.live.item_scheduler.ItemScheduler` gives each
unit the contexts that most need workers (each context written for by W different workers, R
replies each), and :mod:`.runner` stores every reply the moment it is accepted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from mephisto.operations.registry import register_mephisto_abstraction

from parlai_acute.mephisto_tasks.multiref.runner import MultirefRunner
from parlai_acute.mephisto_tasks.multiref.state import MultirefAgentState
from parlai_acute.mephisto_tasks.live.task_args import TaskArgs
from parlai_acute.mephisto_tasks.live.task_blueprint import TaskBlueprint

BLUEPRINT_TYPE = "parlai_acute_multiref"


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
    task_title: str = field(default="Write replies to a conversation", metadata={"help": "Title of the page."})


@register_mephisto_abstraction()
class MultirefBlueprint(TaskBlueprint):
    AgentStateClass = MultirefAgentState
    TaskRunnerClass = MultirefRunner
    ArgsClass = MultirefBlueprintArgs
    LAUNCH_COMMAND = "parlai-acute multiref launch"
