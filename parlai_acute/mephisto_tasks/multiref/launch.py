"""How ``parlai-acute multiref launch`` (and the task folder's ``run.py``) runs this task: the
:class:`~parlai_acute.mephisto_tasks.live.item_launch.ItemTask` with its settings check, live set-up,
store and the lines it prints. Apart from ``live`` so that the live set-up never imports the blueprint."""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.item_launch import ItemTask
from parlai_acute.mephisto_tasks.multiref.live import MultirefLive, check_args


def item_task():
    """How `parlai-acute multiref launch` runs this task (:func:`parlai_acute.mephisto_tasks.live.item_launch.launch`)."""
    from parlai_acute.mephisto_tasks.multiref import config, store
    from parlai_acute.mephisto_tasks.multiref.blueprint import MultirefBlueprintArgs

    def started(cfg, live, task_name) -> str:
        return (f"Multi-reference task {task_name!r} ({live.mode}): {live.scheduler.remaining()} reply sets to "
                f"collect ({len(live.items)} contexts x {live.workers_per_context} workers x "
                f"{live.replies_per_worker} replies, {cfg.mephisto.blueprint.contexts_per_unit} contexts per unit).")

    def stopped(db, task_name, data_dir) -> str:
        rows = store.reply_records(store.unit_data_for_task(db, task_name))
        return (f"Multi-reference task {task_name!r} stopped; {len(rows)} replies stored in {data_dir} "
                f"(export them with `parlai-acute multiref export --task-name {task_name} -o FILE.jsonl`).")

    return ItemTask("multi-reference collection task", MultirefBlueprintArgs, config,
                    "contexts_file", check_args, MultirefLive, store,
                    "every context has its replies; nothing to launch (use another mephisto.task.task_name)",
                    started, stopped)
