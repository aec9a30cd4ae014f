"""The per-turn evaluation Mephisto blueprint: its Hydra arguments (``mephisto.blueprint.*``) and wiring.

Registered as ``mephisto/blueprint=parlai_acute_per_turn`` on import. Units are
interchangeable slots; :mod:`.scheduler` gives each new dialogue its model set when a worker
starts it, and :mod:`.runner` stores every turn as soon as it is judged. The models are
loaded once per launch (:class:`~parlai_acute.worlds.per_turn.ModelPool`, built by the
launcher and passed in the shared state) and shared by every concurrent worker.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

from mephisto.operations.registry import register_mephisto_abstraction

from parlai_acute.mephisto_tasks.per_turn.live import ensure_live
from parlai_acute.mephisto_tasks.per_turn.runner import PerTurnRunner
from parlai_acute.mephisto_tasks.per_turn.state import PerTurnAgentState
from parlai_acute.mephisto_tasks.live.task_args import BLOCK_HELP, GoldArgs, stop_fields
from parlai_acute.mephisto_tasks.live.task_blueprint import TaskBlueprint

BLUEPRINT_TYPE = "parlai_acute_per_turn"


@dataclass
class PerTurnBlueprintArgs(GoldArgs):
    _blueprint_type: str = BLUEPRINT_TYPE
    _group: str = field(default="PerTurnBlueprint", metadata={
        "help": "Per-turn interactive evaluation (Liu et al.): a worker chats and at every turn judges the "
                "replies of one, two or several live models (PM, MM, SM; SOBA, SATA-Random, SATA-User)."})
    models: Dict[str, str] = field(default_factory=dict, metadata={
        "help": "Models by name: NAME -> model string (an agent, ParlAI model file, .gguf, or a ParlAI opt "
                "string such as '-m parlai_acute.agents.llama_cpp:LlamaCppAgent --inference greedy'). "
                "`parlai-acute per-turn launch --model NAME=MODEL` fills it.", "required": True})
    setting: str = field(default="pm", metadata={
        "help": "pm: two models' replies per turn; mm: three or more; sm: one reply, judged appropriate or not."})
    protocol: str = field(default="soba", metadata={
        "help": "soba: pick the one best reply; sata_random: tick all acceptable (none -> a random reply "
                "continues); sata_user: as sata_random but with none the worker writes the reply; sm for setting sm."})
    model_sets: str = field(default="", metadata={
        "help": "Which models share a dialogue, e.g. 'mephisto.blueprint.model_sets=\"a+b,a+c\"' (quoted: Hydra "
                "reads commas as a sweep) (default: pm: the baseline against each other model, or every pair; mm: all "
                "models; sm: each model alone)."})
    baseline: str = field(default="", metadata={
        "help": "pm only: the model every other model is compared with (the paper's design)."})
    target: int = field(default=5, metadata={
        "help": "Dialogues (or turns, see target_unit) wanted for each model set."})
    target_unit: str = field(default="dialogues", metadata={"help": "dialogues or turns."})
    min_turns: int = field(default=10, metadata={
        "help": "Judged turns a worker must complete before finishing a dialogue (enforced by the server)."})
    max_turns: int = field(default=15, metadata={"help": "The dialogue ends after this many judged turns."})
    opening: str = field(default="worker", metadata={
        "help": "How a dialogue starts: worker (the worker writes first), hi (the worker's first message is "
                "'Hi!', as in Meena), chitchat (a real human opening line on the bot's side, marked as seed), "
                "persona (the worker and the models each get a persona), topic (a shared topic)."})
    justification: str = field(default="off", metadata={
        "help": "Per-turn reason for the choice: off, optional or required."})
    label_mode: str = field(default="appropriate", metadata={
        "help": "Setting sm: appropriate (one question per reply) or ssa (Meena: 'Does the response make sense?' "
                "then, only if so, 'Is the response specific?'; interactive SSA, stored at once as SSA labels)."})
    survey: str = field(default="none", metadata={
        "help": "End-of-chat questions: none, or convai2 (1-4 ratings with optional reasons, then persona "
                "detection: needs opening=persona)."})
    persona_file: str = field(default="", metadata={
        "help": "opening=persona: a JSON list of personas (each a list of sentences) instead of the packaged 36; "
                "at least two (three with the convai2 survey: the decoy is neither side's)."})
    survey_questions: str = field(default="", metadata={
        "help": "convai2 survey: Likert questions besides engagingness, comma-separated from fluency, "
                "consistency, humanness, quoted: 'mephisto.blueprint.survey_questions=\"fluency,humanness\"'."})
    custom_question: Optional[str] = field(default=None, metadata={
        "help": "Your own question text (default: the protocol's wording)."})
    max_dialogues_per_worker: Optional[int] = field(default=None, metadata={
        "help": "Cap on dialogues one worker may do over all runs of the task (default: no cap)."})
    onboarding_file: str = field(default="", metadata={
        "help": "JSON list of practice turns {context, replies, wrong}: the gold item of onboarding, a turn with "
                "one plainly wrong reply (default: the packaged ones)."})
    model_timeout: float = field(default=60.0, metadata={
        "help": "Seconds without progress after which a reply's attempt counts as failed: for this "
                "package's llama.cpp models, seconds in which the engine computed nothing (a slow but working "
                "generation is waited for, never asked again from scratch); for other models (HTTP endpoints, "
                "ParlAI agents), seconds of wall time for the reply."})
    model_retries: int = field(default=1, metadata={
        "help": "Retries of a failed or timed-out reply; then the turn is recorded as incomplete for that model."})
    datapath: str = field(default="", metadata={
        "help": "ParlAI --datapath for the models (default: $PARLAI_ACUTE_DATA or ~/.cache/parlai_acute/data)."})
    block_qualification: str = field(default="parlai_acute_per_turn_block", metadata={"help": BLOCK_HELP})
    _stop = stop_fields("new dialogues", "judged turns", "model_a vs model_b",
                        " (label_mode ssa: 'model_a vs model_b [sensible]'; without [sensible] or [specific], "
                        "both rates)")
    stop_alpha: Optional[float] = _stop["stop_alpha"]
    stop_comparisons: str = _stop["stop_comparisons"]
    stop_budget: Optional[int] = _stop["stop_budget"]
    del _stop
    task_title: str = field(default="Chat and judge the replies", metadata={"help": "Title at the top of the page."})


@register_mephisto_abstraction()
class PerTurnBlueprint(TaskBlueprint):
    AgentStateClass = PerTurnAgentState
    TaskRunnerClass = PerTurnRunner
    ArgsClass = PerTurnBlueprintArgs
    LAUNCH_COMMAND = "parlai-acute per-turn launch"

    def units_needed(self) -> int:
        needed = ensure_live(self.task_run, self.args, self.shared_state).scheduler.dialogues_needed()
        return needed + needed // 2 + 2
