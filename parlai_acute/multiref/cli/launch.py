"""``parlai-acute multiref launch``: serve the multi-reference collection task.

Each unit shows a few contexts (``contexts_per_unit``, default 5), one at a time; the worker
writes several different replies to each, submitted with Enter or a button, with a count of
how many remain. Modes (``mephisto.blueprint.mode``): 4R1W (4 replies from 1 worker, the
default), 2R2W, 1R4W. Replies shorter than 2 characters or repeated are refused, by the page
and the server; replies entered consistently too fast get a warning; key-press and click times
are stored. Every reply is stored the moment it is accepted; SIGTERM or Ctrl-C stops the task
without losing one, and launching again with the same task name continues.
`parlai-acute multiref export` writes the DailyDialog multi-reference file.

    parlai-acute multiref launch                       # 20 of the package's static contexts, 4R1W
    parlai-acute multiref launch --contexts dialogues.jsonl mephisto.blueprint.mode=2R2W
    parlai-acute multiref launch mephisto.blueprint.num_contexts=100 mephisto.blueprint.mode=1R4W \\
        mephisto.task.task_name=multiref_1r4w
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.item_launch import command

NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)

add_arguments, run = command(
    "--contexts", "JSON lines of dialogues in the DailyDialog multi-reference layout (default: the package's static "
    "contexts)", "parlai_acute.mephisto_tasks.multiref.launch", "contexts_file")
