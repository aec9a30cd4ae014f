"""Live side of the SSA labelling task: shows each item's context and reply, takes the two answers in order.

The page sends ``{"type": "answer", "action_id": a, "position": k, "sensible": true|false,
"specific": true|false|null}``; the server checks it against Meena's rules (a reply that does not
make sense is not specific; a sensible reply needs the second answer), takes the item from its
own plan (never from the page) and stores the label before answering.
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.item_runner import ItemTaskRunner, alternating_speakers as speakers
from parlai_acute.mephisto_tasks.ssa_label import onboarding
from parlai_acute.mephisto_tasks.ssa_label.items import label_fields

SENSIBLE_QUESTION = "Does the response make sense?"
SENSIBLE_HELP = ("Use your common sense: is the response logical and consistent with the context? "
                 "Is it something a person could say here?")
SPECIFIC_QUESTION = "Is the response specific?"
SPECIFIC_HELP = ("Is it specific to this context, rather than a reply that would fit almost any context "
                 "(like \"I don't know\", \"ok\" or \"That's nice\")?")


class SsaLabelRunner(ItemTaskRunner):
    fail_message = ("Sorry, you said a response makes sense that plainly does not, so you cannot take part in "
                    "this task. Thank you for your time.")

    @classmethod
    def setup(cls, task_run, args, shared_state):
        from parlai_acute.mephisto_tasks.ssa_label.live import ensure_live

        return ensure_live(task_run, args, shared_state)

    def stop_rows(self, agent) -> list[dict]:
        from parlai_acute.mephisto_tasks.ssa_label.store import labels_records

        return labels_records([self.unit_record(agent)])

    def task_view(self) -> dict:
        return {"questions": {"sensible": SENSIBLE_QUESTION, "sensible_help": SENSIBLE_HELP,
                              "specific": SPECIFIC_QUESTION, "specific_help": SPECIFIC_HELP}}

    def entry_view(self, state, entry: dict) -> dict:
        item = self.item_of(entry)
        if entry["onboarding"]:
            return {"context": speakers(item["context"]), "reply": item["reply"]}
        return {"context": speakers(item.context), "reply": item.reply}

    def answer(self, agent, update: dict, entry: dict):
        sensible, specific = update.get("sensible"), update.get("specific")
        if not isinstance(sensible, bool):
            return "Please answer the first question: does the response make sense?", None
        if sensible and not isinstance(specific, bool):
            return "Please answer the second question: is the response specific?", None
        if not sensible and specific not in (None, False):
            return "A response that does not make sense cannot be specific; please answer again.", None
        specific = bool(specific) if sensible else False
        item = self.item_of(entry)
        if entry["onboarding"]:
            result = {"model": "gold", "context": list(item["context"]), "reply": item["reply"]}
            gold = onboarding.passed(item, sensible, specific)
        else:
            result, gold = label_fields(item), None
        result.update(sensible=sensible, specific=specific)
        self.finish_entry(agent, entry, result, gold_passed=gold)
        return None, None
