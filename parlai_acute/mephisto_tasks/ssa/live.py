"""What a running SSA labelling task holds once (items, gold items, scheduler), built by the
launcher or, when Mephisto builds the task itself, from the arguments and the stored labels."""
from __future__ import annotations

import os

from parlai_acute.errors import UserError


class SsaLive:
    """What a running task holds once: items, gold items, scheduler, configuration record."""

    def __init__(self, args, history: list[dict] = ()):
        from parlai_acute.mephisto_tasks.live.item_scheduler import ItemScheduler
        from parlai_acute.ssa.items import load_gold, read_items

        b = args.blueprint
        check_numbers(b)
        if not b.get("items_file"):
            raise UserError("no items file; pass items_file=FILE (mephisto.blueprint.items_file, made by "
                            "`parlai-acute ssa generate`)", param="items_file")
        self.items = read_items(os.path.expanduser(b.items_file))
        self.onboarding_items = load_gold(b.get("onboarding_file") or None) if b.onboarding else []
        self.seed = int(b.seed)
        self.stop = stop_rule(b, self.items, history)
        self.scheduler = ItemScheduler([i.item_id for i in self.items], per_item=int(b.labels_per_item),
                                       items_per_unit=int(b.items_per_unit),
                                       max_per_worker=b.get("max_labels_per_worker"),
                                       use_onboarding=bool(b.onboarding), seed=self.seed, history=history,
                                       stop=self.stop)
        self.config = {"items_file": str(b.items_file), "labels_per_item": int(b.labels_per_item),
                       "items_per_unit": int(b.items_per_unit), "onboarding": bool(b.onboarding), "seed": self.seed,
                       "stop": None if self.stop is None else {"alpha": self.stop.alpha, "budget": self.stop.budget}}



def stop_rule(b, items, history: list[dict] = ()):
    """The task's stop rule (None without stop options): the items' models compared two by two on
    their sensibleness and specificity rates, fed the labels stored before."""
    import itertools

    from parlai_acute.monitoring.stopping import StopRule, options

    stop = options(b, judgments="labels")
    if stop is None:
        return None
    rule = StopRule("ssa", stop, itertools.combinations(sorted({i.model for i in items}), 2))
    rule.add([h["label"] for h in history if "label" in h])
    return rule


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
        from parlai_acute.mephisto_tasks.ssa import store

        history = store.history(store.unit_data_for_task(task_run.db, task_run.get_task().task_name))
        shared_state.live = SsaLive(args, history)
    return shared_state.live

