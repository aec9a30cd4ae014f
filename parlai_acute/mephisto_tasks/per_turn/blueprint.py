"""The per-turn evaluation Mephisto blueprint: its Hydra arguments (``mephisto.blueprint.*``) and wiring.

Registered as ``mephisto/blueprint=parlai_acute_per_turn`` on import. Units are
interchangeable slots; :mod:`.scheduler` gives each new dialogue its model set when a worker
starts it, and :mod:`.runner` stores every turn as soon as it is judged. The models are
loaded once per launch (:class:`~parlai_acute.worlds.per_turn.ModelPool`, built by the
launcher and passed in the shared state) and shared by every concurrent worker.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional

from mephisto.abstractions.blueprint import Blueprint, SharedTaskState
from mephisto.data_model.assignment import InitializationData
from mephisto.operations.registry import register_mephisto_abstraction

from parlai_acute.errors import UserError
from parlai_acute.mephisto_tasks.page_builder import StaticPageBuilder
from parlai_acute.mephisto_tasks.per_turn.runner import PerTurnRunner
from parlai_acute.mephisto_tasks.per_turn.state import PerTurnAgentState
from parlai_acute.mephisto_tasks.task_args import TaskArgs
from parlai_acute.perturn.design import Design, parse_model_sets

BLUEPRINT_TYPE = "parlai_acute_per_turn"
FRONTEND_DIR = Path(__file__).parent / "frontend"


@dataclass
class PerTurnBlueprintArgs(TaskArgs):
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
    onboarding: bool = field(default=True, metadata={
        "help": "Before the first chat, a practice turn with one plainly wrong reply; choosing it blocks the "
                "worker with block_qualification."})
    onboarding_file: str = field(default="", metadata={
        "help": "JSON list of onboarding items {context, replies, wrong} (default: the packaged ones)."})
    onboarding_fail_message: str = field(default=(
        "Sorry, you chose a reply that does not fit the conversation, so you cannot take part in this task. "
        "Thank you for your time."), metadata={"help": "What a worker who fails onboarding is told."})
    block_qualification: str = field(default="parlai_acute_per_turn_block", metadata={
        "help": "Mephisto qualification granted to workers who fail onboarding; holders cannot take units."})
    model_timeout: float = field(default=60.0, metadata={
        "help": "Seconds a model may take for one reply before the attempt counts as failed."})
    model_retries: int = field(default=1, metadata={
        "help": "Retries of a failed or timed-out reply; then the turn is recorded as incomplete for that model."})
    datapath: str = field(default="", metadata={
        "help": "ParlAI --datapath for the models (default: $PARLAI_ACUTE_DATA or ~/.cache/parlai_acute/data)."})
    seed: int = field(default=0, metadata={
        "help": "Seed of the candidates' order, random continuations, openings and set assignment (all recorded)."})
    task_title: str = field(default="Chat and judge the replies", metadata={"help": "Title at the top of the page."})


@dataclass
class PerTurnSharedState(SharedTaskState):
    live: Any = field(default=None, metadata={
        "help": "LiveSetup built by the launcher (loaded models, scheduler); built from args if None."})


@dataclass
class Opening:
    """How one dialogue starts (shown to the worker, given to the models, recorded)."""

    worker_context: str = ""
    model_context: str = ""
    opening: tuple = ()
    info: dict = field(default_factory=dict)


def design_from_args(b) -> Design:
    models = dict(b.get("models") or {})
    return Design(models=list(models), setting=str(b.setting), protocol=str(b.protocol),
                  model_sets=parse_model_sets(b.get("model_sets") or ""), baseline=str(b.get("baseline") or ""),
                  min_turns=int(b.min_turns), max_turns=int(b.max_turns), opening=str(b.opening),
                  justification=str(b.justification), label_mode=str(b.get("label_mode") or "appropriate"),
                  survey=str(b.get("survey") or "none"))


class LiveSetup:
    """Everything a running task holds once: design, models, scheduler, onboarding items, config record."""

    def __init__(self, args, *, pool=None, history: list[dict] = ()):
        from parlai_acute.mephisto_tasks.per_turn import onboarding
        from parlai_acute.mephisto_tasks.per_turn.scheduler import Scheduler
        from parlai_acute.paths import default_datapath

        b = args.blueprint
        self.design = design_from_args(b)
        if not self.design.models:
            raise UserError("no models; pass --model NAME=MODEL (two or more for pm/mm) or mephisto.blueprint.models")
        if int(b.target) < 1:
            raise UserError(f"mephisto.blueprint.target must be at least 1, got {b.target}")
        self.onboarding_items = onboarding.load_items(b.get("onboarding_file") or None)
        from parlai_acute.mephisto_tasks.per_turn import survey

        self.survey_questions = survey.questions(b.get("survey_questions") or "") if self.design.survey != "none" else []
        self.personas = load_personas(b.get("persona_file") or "", self.design)
        self.seed = int(b.seed)
        self.scheduler = Scheduler(self.design.model_sets, target=int(b.target), unit=str(b.target_unit),
                                   turns_per_dialogue=self.design.min_turns,
                                   max_dialogues_per_worker=b.get("max_dialogues_per_worker"),
                                   use_onboarding=bool(b.onboarding), seed=self.seed, history=history)
        if pool is None:
            from parlai_acute.worlds.per_turn import ModelPool

            pool = ModelPool(dict(b.models), b.get("datapath") or default_datapath(),
                             timeout=float(b.model_timeout), retries=int(b.model_retries))
        self.pool = pool
        self.config = {"models": {name: pool.describe(name) for name in self.design.models},
                       "setting": self.design.setting, "protocol": self.design.protocol,
                       "model_sets": ["+".join(s) for s in self.design.model_sets], "min_turns": self.design.min_turns,
                       "max_turns": self.design.max_turns, "opening": self.design.opening,
                       "justification": self.design.justification, "label_mode": self.design.label_mode,
                       "survey": self.design.survey, "survey_questions": [q["key"] for q in self.survey_questions],
                       "seed": self.seed}

    def opening(self, dialogue_id: str) -> Opening:
        """The dialogue's start, a pure function of (seed, dialogue id)."""
        from parlai_acute.tasks import sources

        index = int(hashlib.sha1(f"{self.seed}:{dialogue_id}".encode()).hexdigest(), 16) % 100_000
        kind = self.design.opening
        if kind == "chitchat":
            seed = sources.chitchat_seed(index, self.seed, "valid", 1)
            return Opening(opening=tuple(seed.openers), info=seed.info)
        if kind == "persona":
            seed = sources.persona_seed(index, self.seed, self.personas)
            return Opening(worker_context=seed.contexts[0], model_context=seed.contexts[1], info=seed.info)
        if kind == "topic":
            seed = sources.topic_seed(index, self.seed)
            return Opening(worker_context=seed.contexts[0], model_context=seed.contexts[1], info=seed.info)
        return Opening(info={"source": kind})


def load_personas(path: str, design: Design) -> list[list[str]] | None:
    """A lab's persona set (None: the packaged personas), checked against what the design needs."""
    if not path:
        return None
    from parlai_acute.tasks import sources

    personas = sources.read_personas(path)
    need = 3 if design.survey == "convai2" else 2
    if len(personas) < need:
        raise UserError(f"persona file {path} has {len(personas)} persona(s); a persona chat needs at least 2 "
                        f"(the worker's and the model's) and the convai2 survey 3 (a decoy that is neither)")
    return personas


def ensure_live(task_run, args, shared_state) -> LiveSetup:
    """The run's live setup: the launcher's, or built here (loads the models)."""
    if shared_state.live is None:
        from parlai_acute.mephisto_tasks.per_turn import store

        history = store.history(store.unit_data_for_task(task_run.db, task_run.get_task().task_name))
        shared_state.live = LiveSetup(args, history=history)
    return shared_state.live


class PerTurnTaskBuilder(StaticPageBuilder):
    FRONTEND_DIR = FRONTEND_DIR


@register_mephisto_abstraction()
class PerTurnBlueprint(Blueprint):
    AgentStateClass = PerTurnAgentState
    OnboardingAgentStateClass = PerTurnAgentState
    TaskBuilderClass = PerTurnTaskBuilder
    TaskRunnerClass = PerTurnRunner
    ArgsClass = PerTurnBlueprintArgs
    SharedStateClass = PerTurnSharedState
    BLUEPRINT_TYPE = BLUEPRINT_TYPE

    def __init__(self, task_run, args, shared_state: PerTurnSharedState):
        super().__init__(task_run, args, shared_state)
        self.task_run = task_run

    @classmethod
    def assert_task_args(cls, args, shared_state) -> None:
        if not isinstance(shared_state, PerTurnSharedState):
            raise UserError("the per-turn blueprint needs PerTurnSharedState; launch it with `parlai-acute per-turn launch`")

    def get_frontend_args(self) -> dict[str, Any]:
        return {"task_title": self.args.blueprint.task_title}

    def get_initialization_data(self):
        live = ensure_live(self.task_run, self.args, self.shared_state)
        needed = live.scheduler.dialogues_needed()
        return [InitializationData(shared={"slot": i}, unit_data=[{}]) for i in range(needed + needed // 2 + 2)]
