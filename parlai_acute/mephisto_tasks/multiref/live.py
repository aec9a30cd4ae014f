"""What a running multi-reference task holds once (contexts, mode, scheduler), built by the
launcher or, when Mephisto builds the task itself, from the arguments and the stored replies."""
from __future__ import annotations

import os

from parlai_acute.errors import UserError
from parlai_acute.multiref.contexts import Context, mode_name, parse_mode, read_contexts


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
    return parse_mode(b.mode, b.get("replies_per_worker"), b.get("workers_per_context"))



class MultirefLive:
    """What a running task holds once: contexts, mode, scheduler, configuration record."""

    onboarding_items: list = []

    def __init__(self, args, history: list[dict] = ()):
        from parlai_acute.mephisto_tasks.live.item_scheduler import ItemScheduler

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


def default_contexts(num: int, seed: int) -> list[Context]:
    """``num`` of the package's static contexts (1-3 turns of real conversations, with the real next turn)."""
    from parlai_acute.tasks.static_contexts import static_contexts

    return [Context(c["context_id"], str(c["conversation_id"]), len(c["context_turns"]) - 1,
                    tuple(c["context_turns"]), c["reference"]) for c in static_contexts(seed, num, 3)]

