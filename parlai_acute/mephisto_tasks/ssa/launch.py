"""How ``parlai-acute ssa launch`` (and the task folder's ``run.py``) runs this task: the
:class:`~parlai_acute.mephisto_tasks.live.item_launch.ItemTask` with its settings check, live set-up,
store and the lines it prints. Apart from ``live`` so that the live set-up never imports the blueprint."""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.item_launch import ItemTask
from parlai_acute.mephisto_tasks.ssa.live import SsaLive, check_numbers


def item_task():
    """How `parlai-acute ssa launch` runs this task (:func:`parlai_acute.mephisto_tasks.live.item_launch.launch`)."""
    from parlai_acute.mephisto_tasks.ssa import config, store
    from parlai_acute.mephisto_tasks.ssa.blueprint import SsaLabelBlueprintArgs

    def started(cfg, live, task_name) -> str:
        b = cfg.mephisto.blueprint
        return (f"SSA labelling task {task_name!r}: {live.scheduler.remaining()} labels to collect "
                f"({len(live.items)} items x {b.labels_per_item} workers, {b.items_per_unit} items per unit).")

    def stopped(db, task_name, data_dir) -> str:
        return f"SSA labelling task {task_name!r} stopped; {len(store.labels_for_task(db, task_name))} labels " \
               f"stored in {data_dir}."

    return ItemTask("static SSA labelling task", SsaLabelBlueprintArgs, config, "items_file",
                    check_numbers, SsaLive, store, "every item has its labels; nothing to launch (raise "
                    "mephisto.blueprint.labels_per_item or use another mephisto.task.task_name)", started, stopped)
