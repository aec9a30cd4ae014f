"""``parlai-acute ssa launch``: serve the static SSA labelling task over an items file.

Each unit shows several items (``items_per_unit``, default 10), one at a time: a short
context and a reply, then "Does the response make sense?" and, only if yes, "Is the response
specific?". Each item is labelled by ``labels_per_item`` different workers (default 5, as in
Meena). Every label is stored the moment it is given; SIGTERM or Ctrl-C stops the task (and
its router) without losing one, and launching again with the same task name continues.

    parlai-acute ssa launch --items items.jsonl
    parlai-acute ssa launch --items items.jsonl mephisto.blueprint.labels_per_item=3 \\
        mephisto.blueprint.items_per_unit=20 mephisto.task.task_name=ssa_pilot
    parlai-acute ssa launch --items items.jsonl mephisto/architect=heroku mephisto/provider=mturk_sandbox \\
        mephisto.provider.requester_name=my_sandbox_requester
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.item_launch import command

NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)

add_arguments, run = command(
    "--items", "JSON-lines items file: item, context (list of turns), reply, model (from `parlai-acute ssa generate`)",
    "parlai_acute.mephisto_tasks.ssa.launch", "items_file")
