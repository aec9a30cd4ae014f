"""Live side of the SSA labelling task: shows each item's context and reply, takes the two answers in order.

The page sends ``{"type": "answer", "action_id": a, "position": k, "sensible": true|false,
"specific": true|false|null}``; the server checks it against Meena's rules (a reply that does not
make sense is not specific; a sensible reply needs the second answer), takes the item from its
own plan (never from the page) and stores the label before answering.

The step is the server's too: "it makes sense" sends ``{"type": "answer", "position": k, "step": 2}``
("change my first answer": ``"step": 1``), stored in the state's ``current`` before the page
hears back, so a reload, a second tab or a relaunch shows the same question of the same item.
"""
from __future__ import annotations

from parlai_acute.mephisto_tasks.live.item_runner import ItemTaskRunner, alternating_speakers as speakers
from parlai_acute.mephisto_tasks.ssa import texts
from parlai_acute.ssa.items import gold_passed, label_fields


def step_of(state) -> int:
    """Which question of the item on the page the worker is at (1 or 2)."""
    return int((state.data.get("current") or {}).get("step") or 1)


class SsaLabelRunner(ItemTaskRunner):
    fail_message = texts.FAILED

    @classmethod
    def setup(cls, task_run, args, shared_state):
        from parlai_acute.mephisto_tasks.ssa.live import ensure_live

        return ensure_live(task_run, args, shared_state)

    @staticmethod
    def started(current: dict | None) -> bool:
        """"It makes sense" is a step on the page, not a label: a worker who left there has labelled
        nothing, and the item may come to them again."""
        return False

    def stop_rows(self, agent) -> list[dict]:
        from parlai_acute.mephisto_tasks.ssa.store import labels_records

        return labels_records([self.unit_record(agent)])

    def texts(self, state, view: dict) -> dict:
        d = state.data
        plan, entry = d["plan"] or (), self.current_entry(state)
        source = "static" if entry is None or entry["onboarding"] else \
            self.item_of(entry).extra.get("source", "static")
        return texts.page_texts(status=d["status"], n=len(plan), position=view["position"], step=step_of(state),
                                check_first=bool(plan) and plan[0]["onboarding"], source=source,
                                labelled=sum(not r.get("onboarding") for r in d["results"]),
                                message=d.get("message", ""))

    def entry_view(self, state, entry: dict) -> dict:
        item = self.item_of(entry)
        if entry["onboarding"]:
            return {"context": speakers(item["context"]), "reply": item["reply"], "step": step_of(state)}
        return {"context": speakers(item.context), "reply": item.reply, "step": step_of(state)}

    def answer(self, agent, update: dict, entry: dict):
        if "step" in update:  # "it makes sense" (on to the second question) or "change my first answer"
            if update["step"] not in (1, 2) or isinstance(update["step"], bool):
                return texts.FIRST_MISSING, None
            agent.state.data["current"] = {"step": update["step"]} if update["step"] == 2 else None
            agent.state.save_data()  # stored before the page hears back
            return None, None
        sensible, specific = update.get("sensible"), update.get("specific")
        if not isinstance(sensible, bool):
            return texts.FIRST_MISSING, None
        if sensible and not isinstance(specific, bool):
            return texts.SECOND_MISSING, None
        if not sensible and specific not in (None, False):
            return texts.NOT_SENSIBLE_SPECIFIC, None
        specific = bool(specific) if sensible else False
        item = self.item_of(entry)
        if entry["onboarding"]:
            result = {"model": "gold", "context": list(item["context"]), "reply": item["reply"]}
            gold = gold_passed(item, sensible, specific)
        else:
            result, gold = label_fields(item), None
        result.update(sensible=sensible, specific=specific)
        self.finish_entry(agent, entry, result, gold_passed=gold)
        return None, None
