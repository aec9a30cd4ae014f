"""What a running ACUTE-Eval task holds once (its scheduler: pairings and earlier judgments), built
by the launcher or, when Mephisto builds the task itself, from the arguments and the stored judgments."""
from __future__ import annotations

import os

from parlai_acute.errors import UserError
from parlai_acute.acute.questions import resolve
from parlai_acute.mephisto_tasks.acute.scheduler import Scheduler


def build_scheduler(args, db=None, task_name: str | None = None) -> Scheduler:
    """Scheduler from the blueprint args; earlier judgments of ``task_name`` in ``db`` are not reassigned."""
    from parlai_acute.acute.pairings import read_pairings
    from parlai_acute.mephisto_tasks.acute import store

    b = args.blueprint
    resolve(b.question, b.get("custom_question"), b.custom_question_key)  # fail early on a bad preset
    pairings = read_pairings(os.path.expanduser(b.pairings_file))
    if b.onboarding and not any(p["is_onboarding"] for p in pairings):
        raise UserError(f"{b.pairings_file} has no onboarding line (is_onboarding: true); add a gold pair "
                        f"or set mephisto.blueprint.onboarding=false")
    if not any(not p["is_onboarding"] for p in pairings):
        raise UserError(f"{b.pairings_file} has only onboarding lines; add pairs to compare")
    for name in ("comparisons_per_unit", "annotations_per_pair"):
        if int(b[name]) < 1:
            raise UserError(f"mephisto.blueprint.{name} must be at least 1, got {b[name]}")
    past = store.history(store.unit_data_for_task(db, task_name)) if db is not None and task_name else []
    return Scheduler(pairings, annotations_per_pair=int(b.annotations_per_pair),
                     comparisons_per_unit=int(b.comparisons_per_unit),
                     max_per_worker=b.get("max_judgments_per_worker"), use_onboarding=bool(b.onboarding),
                     seed=int(b.seed), history=past, selection=str(b.get("pair_selection") or "balanced"),
                     stop=stop_rule(b))


def stop_rule(b) -> dict | None:
    """The blueprint's stop options as the scheduler takes them (None: no stop rule)."""
    from parlai_acute.mephisto_tasks.acute.scheduler import SELECTIONS

    if str(b.get("pair_selection") or "balanced") not in SELECTIONS:
        raise UserError(f"mephisto.blueprint.pair_selection must be one of {', '.join(SELECTIONS)}, "
                        f"got {b.get('pair_selection')!r}")
    from parlai_acute.monitoring.stopping import options

    top = b.get("stop_top_k")
    if top is None:
        return options(b, judgments="regular judgments")
    if b.get("stop_comparisons"):
        raise UserError("set either mephisto.blueprint.stop_top_k or stop_comparisons, not both")
    if int(top) < 1:
        raise UserError(f"mephisto.blueprint.stop_top_k must be at least 1, got {top}")
    alpha = b.get("stop_alpha")
    stop = options({"stop_alpha": 0.05 if alpha is None else alpha, "stop_budget": b.get("stop_budget")},
                   judgments="regular judgments")
    return stop | {"top_k": int(top)}


def ensure_scheduler(task_run, args, shared_state) -> Scheduler:
    """The run's scheduler: the launcher's, or built here (lazily: reading back stored data needs none)."""
    if shared_state.scheduler is None:
        shared_state.scheduler = build_scheduler(args, task_run.db, task_run.get_task().task_name)
    return shared_state.scheduler
