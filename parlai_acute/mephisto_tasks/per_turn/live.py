"""What a running per-turn task holds once (design, loaded models, scheduler, onboarding items),
built by the launcher or, when Mephisto builds the task itself, from the arguments and the stored turns."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from parlai_acute.errors import UserError
from parlai_acute.per_turn.design import Design, parse_model_sets


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
        from parlai_acute.per_turn import onboarding
        from parlai_acute.mephisto_tasks.per_turn.scheduler import Scheduler
        from parlai_acute.paths import default_datapath

        b = args.blueprint
        self.design = design_from_args(b)
        if not self.design.models:
            raise UserError("nothing to evaluate; pass models (NAME=MODEL, two or more for pm/mm; "
                            "mephisto.blueprint.models)", param="models")
        if int(b.target) < 1:
            raise UserError(f"mephisto.blueprint.target must be at least 1, got {b.target}")
        self.onboarding_items = onboarding.load_items(b.get("onboarding_file") or None)
        if b.onboarding:
            onboarding.check_items(self.onboarding_items, self.design.replies_per_turn,
                                   b.get("onboarding_file") or "the packaged practice items")
        from parlai_acute.mephisto_tasks.per_turn import survey

        self.survey_questions = survey.questions(b.get("survey_questions") or "") if self.design.survey != "none" else []
        self.personas = load_personas(b.get("persona_file") or "", self.design)
        self.seed = int(b.seed)
        self.stop = stop_rule(b, self.design, history)
        self.scheduler = Scheduler(self.design.model_sets, target=int(b.target), unit=str(b.target_unit),
                                   turns_per_dialogue=self.design.min_turns,
                                   max_dialogues_per_worker=b.get("max_dialogues_per_worker"),
                                   use_onboarding=bool(b.onboarding), seed=self.seed, history=history,
                                   stop=self.stop)
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
                       "seed": self.seed,
                       "stop": None if self.stop is None else {"protocol": self.stop.protocol, "alpha": self.stop.alpha,
                                                               "budget": self.stop.budget}}

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



def stop_rule(b, design: Design, history: list[dict] = ()):
    """The task's stop rule (None without stop options), fed the complete dialogues stored before.

    Pairs of models sharing a dialogue are compared on their pick rates (per-turn status); the
    single-model setting is compared across conversations on its SSA labels (label_mode ssa).
    Appropriateness labels (sm, label_mode appropriate) have no comparison status decides: only
    the budget can stop them."""
    import itertools

    from parlai_acute.mephisto_tasks.per_turn import store
    from parlai_acute.monitoring.stopping import StopRule, options

    stop = options(b, judgments="judged turns")
    if stop is None:
        return None
    if design.setting == "sm" and design.label_mode != "ssa" and stop["alpha"] is not None:
        raise UserError("mephisto.blueprint.stop_alpha needs comparisons, and appropriateness labels (setting sm, "
                        "label_mode appropriate) have none status decides; use stop_budget, or label_mode=ssa")
    if design.setting == "sm" and design.label_mode == "ssa":
        protocol, pairs = "ssa", list(itertools.combinations(design.models, 2))
    elif design.setting == "sm":  # appropriateness labels: the budget counts judged turns, as per-turn does
        protocol, pairs = "per-turn", list(itertools.combinations(design.models, 2))
    else:
        protocol = "per-turn"
        pairs = [p for s in design.model_sets for p in itertools.combinations(s, 2)]
    rule = StopRule(protocol, stop, pairs)
    rule.add(store.stop_rows([h["unit"] for h in history if h.get("unit")], protocol))
    return rule


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
