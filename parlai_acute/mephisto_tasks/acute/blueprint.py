"""The ACUTE-Eval Mephisto blueprint: its Hydra arguments (``mephisto.blueprint.*``) and wiring.

Registered as ``mephisto/blueprint=parlai_acute_eval`` on import. Units are interchangeable
slots; :mod:`.scheduler` decides what each one contains when a worker takes it, and
:mod:`.runner` stores every judgment as soon as it is submitted.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from mephisto.abstractions.blueprint import SharedTaskState
from mephisto.operations.registry import register_mephisto_abstraction
from omegaconf import MISSING

from parlai_acute.acute.questions import PRESETS
from parlai_acute.mephisto_tasks.acute.live import ensure_scheduler
from parlai_acute.mephisto_tasks.acute.runner import AcuteEvalRunner
from parlai_acute.mephisto_tasks.acute.state import AcuteEvalAgentState
from parlai_acute.mephisto_tasks.live.task_args import BLOCK_HELP, GoldArgs, stop_fields
from parlai_acute.mephisto_tasks.live.task_blueprint import TaskBlueprint

BLUEPRINT_TYPE = "parlai_acute_eval"


@dataclass
class AcuteEvalBlueprintArgs(GoldArgs):
    _blueprint_type: str = BLUEPRINT_TYPE
    _group: str = field(default="AcuteEvalBlueprint", metadata={
        "help": "ACUTE-Eval (Li et al. 2019): workers compare two conversations side by side and say which "
                "highlighted speaker is better for one question, with a written reason."})
    pairings_file: str = field(default=MISSING, metadata={
        "help": "Pairings JSONL (ParlAI acute_eval format, e.g. from `parlai-acute acute pairings`); "
                "lines with is_onboarding=true are the gold pairs used for onboarding.", "required": True})
    question: str = field(default="engaging", metadata={
        "help": f"Question preset, one of: {', '.join(PRESETS)} (the paper's optimised wordings)."})
    custom_question: Optional[str] = field(default=None, metadata={
        "help": "Your own question text; overrides `question` when set."})
    custom_question_key: str = field(default="custom", metadata={
        "help": "Short key stored with judgments made under custom_question (e.g. 'funny')."})
    annotations_per_pair: int = field(default=1, metadata={
        "help": "Judgments wanted for each (non-onboarding) pair of conversations."})
    comparisons_per_unit: int = field(default=5, metadata={
        "help": "Regular comparisons in one unit (HIT); an onboarding pair comes first for new workers."})
    allow_tie: bool = field(default=False, metadata={
        "help": "Offer 'They are about the same' and 'Both are bad' beside the two speakers (stored as a tie "
                "and as both_bad; a tie counts half a win in the analysis). Off by default: the paper's forced "
                "choice."})
    min_reason_length: int = field(default=10, metadata={
        "help": "Minimum characters of the required justification for each choice."})
    max_judgments_per_worker: Optional[int] = field(default=None, metadata={
        "help": "Cap on regular judgments by one worker over all runs of the task "
                "(default: the number of distinct model pairs in the pairings file)."})
    pair_selection: str = field(default="balanced", metadata={
        "help": "balanced: fewest-judged pairs first; adaptive: pairs whose model pair most reduces the "
                "uncertainty of the Bradley-Terry ranking first (the reason is stored with each slot)."})
    _stop = stop_fields("comparisons", "regular judgments", "model_a vs model_b")
    stop_alpha: Optional[float] = _stop["stop_alpha"]
    stop_comparisons: str = _stop["stop_comparisons"]
    stop_top_k: Optional[int] = field(default=None, metadata={
        "help": "Stop handing out comparisons once the set of the top k models is decided: each of them "
                "decided ahead of every other model by its own confidence sequence, at stop_alpha (0.05 if "
                "unset) over all model pairs; the decision (the top k, rank-sets) is stored as stop_decision. "
                "With pair_selection=adaptive, open pairs across the top-k boundary are served first."})
    stop_budget: Optional[int] = _stop["stop_budget"]
    del _stop
    block_qualification: str = field(default="parlai_acute_eval_block", metadata={"help": BLOCK_HELP})
    task_title: str = field(default="Compare two conversations", metadata={
        "help": "Title shown at the top of the page."})


@dataclass
class AcuteEvalSharedState(SharedTaskState):
    scheduler: Any = field(default=None, metadata={
        "help": "Scheduler built by the launcher (pairings + earlier judgments); built from args if None."})


@register_mephisto_abstraction()
class AcuteEvalBlueprint(TaskBlueprint):
    AgentStateClass = AcuteEvalAgentState
    TaskRunnerClass = AcuteEvalRunner
    ArgsClass = AcuteEvalBlueprintArgs
    SharedStateClass = AcuteEvalSharedState
    LAUNCH_COMMAND = "parlai-acute acute launch"

    def units_needed(self) -> int:
        return ensure_scheduler(self.task_run, self.args, self.shared_state).units_needed()
