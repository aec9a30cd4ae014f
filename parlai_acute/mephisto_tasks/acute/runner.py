"""Live side of the ACUTE-Eval task: hands out comparisons, validates and stores each judgment at once.

Protocol with the page (Mephisto live updates over the router's websocket):

* initial task data (``get_init_data_for_agent``) and every reply are a *view*::

      {"type": "state", "min_reason_length": 10, "n": 6, "done": 2,
       "minutes": 9, "finished": false, "blocked": false,
       "text": {"progress": "Comparison 3 of 6", "question": ..., "done": ..., ...},   # every word (.texts)
       "comparison": {"position": 3, "n": 6,
          "sides": [{"label": "Speaker 1", "turns": [{"text": "...", "evaluated": true}, ...]},
                    {"label": "Speaker 2", "turns": [...]}]},
       "ack": "tab:3", "error": null, "version": 1700000000123, "tab": "tab"}

  Model names never reach the page; ``evaluated`` marks the turns of the speaker to judge.
  ``minutes`` is the unit's estimated duration (said in the introduction); a worker who failed
  onboarding is ``blocked``, and ``text["done"]`` says why the unit ended.
* the page sends ``{"type": "judgment", "action_id": ..., "tab": ..., "position": k,
  "choice": "left"|"right", "reason": "..."}`` (with ``allow_tie`` also "tie" or "both_bad", stored
  as ``outcome`` with no model chosen). The judgment is written to the agent state file
  before the reply is sent; a resent judgment (same action, or a position already judged) is
  answered with the current view without being stored twice (see :mod:`..live_runner`).
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict

from parlai_acute.acute.questions import resolve
from parlai_acute.mephisto_tasks.acute.scheduler import Slot
from parlai_acute.mephisto_tasks.acute.state import SCHEMA
from parlai_acute.mephisto_tasks.acute.texts import (CHOOSE_ANSWER, CHOOSE_SPEAKER, ONBOARDING_FAILED, TIE_CHOICES,
                                                    page_texts, reason_too_short, side_label)
from parlai_acute.mephisto_tasks.live.live_runner import UNKNOWN_ACTION, LiveRunner

logger = logging.getLogger(__name__)
READING_WORDS_PER_MINUTE = 200  # a typical silent reading speed for conversational English
MINUTES_PER_REASON = 0.5  # choosing and writing a one-sentence justification


def estimated_minutes(pairings: list[dict], slots: list[Slot]) -> int:
    """About how long a unit takes: reading both conversations of each comparison, plus a reason."""
    words = sum(len(turn["text"].split()) for slot in slots
                for dd in pairings[slot.index]["dialogue_dicts"] for turn in dd["dialogue"])
    return max(1, round(words / READING_WORDS_PER_MINUTE + MINUTES_PER_REASON * len(slots)))


def comparison_view(pairing: dict, slot: Slot, position: int, n: int) -> dict:
    """What the page shows for one comparison: two conversations, evaluated turns flagged."""
    sides = []
    for number, d in enumerate((slot.left, 1 - slot.left), start=1):
        evaluated = pairing["speakers_to_eval"][d]
        turns = [{"text": t["text"], "evaluated": t["id"] == evaluated}
                 for t in pairing["dialogue_dicts"][d]["dialogue"]]
        sides.append({"label": side_label(number), "turns": turns})
    return {"position": position, "n": n, "sides": sides}


class AcuteEvalRunner(LiveRunner):
    fail_message = ONBOARDING_FAILED

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        from parlai_acute.mephisto_tasks.acute.live import ensure_scheduler

        self.scheduler = ensure_scheduler(task_run, args, shared_state)
        self.pairings = self.scheduler.pairings
        b = args.blueprint
        self.question_key, self.question = resolve(b.question, b.get("custom_question"), b.custom_question_key)
        self.min_reason = int(b.min_reason_length)
        self.allow_tie = bool(b.get("allow_tie", False))  # the paper's forced choice unless asked
        self._released: set[str] = set()
        self.start_watching()

    # ------------------------------------------------------------------ views
    def view(self, state, **extra) -> dict:
        data = state.data
        plan, done = data["plan"], len(data["comparisons"])
        finished = data["blocked"] or done >= len(plan)
        comparison = None
        if not finished:
            comparison = comparison_view(self.pairings[plan[done]["index"]], Slot(**plan[done]), done + 1, len(plan))
        minutes = estimated_minutes(self.pairings, [Slot(**s) for s in plan])
        text = page_texts(question=self.question, n=len(plan), position=comparison and comparison["position"],
                          minutes=minutes, min_reason=self.min_reason,
                          check_first=bool(plan) and bool(plan[0].get("is_onboarding")), finished=finished,
                          blocked=bool(data["blocked"]), blocked_message=self.fail_message,
                          side_labels=tuple(s["label"] for s in comparison["sides"]) if comparison else (),
                          allow_tie=self.allow_tie)
        view = {"type": "state", "min_reason_length": self.min_reason, "n": len(plan), "done": done,
                "allow_tie": self.allow_tie,
                "minutes": minutes, "finished": finished, "blocked": bool(data["blocked"]),
                "comparison": comparison, "text": text, "ack": None, "error": None}
        view.update(extra)
        return view

    # ------------------------------------------------------------------ start and resume
    def has_work_for(self, worker) -> bool:
        return self.scheduler.has_work_for(str(worker.db_id))

    def start_unit(self, agent) -> None:
        slots = self.scheduler.assign(str(agent.worker_id))
        agent.state.set_init_state({"plan": [asdict(s) for s in slots], "worker_name": agent.get_worker().worker_name,
                                    "question": self.question, "question_key": self.question_key})

    @classmethod
    def holds_work(cls, data: dict) -> bool:
        return bool(data.get("plan"))  # an empty plan: nothing left for this worker

    @classmethod
    def resumable(cls, data: dict) -> bool:
        return (data.get("schema") == SCHEMA and bool(data.get("plan")) and not data.get("blocked")
                and len(data.get("comparisons") or ()) < len(data["plan"]))

    def resume_unit(self, agent, data: dict) -> None:
        """The comparisons not judged yet go back to this worker if nobody else has taken them."""
        done = len(data["comparisons"])
        rest = self.scheduler.reclaim(str(agent.worker_id), [Slot(**s) for s in data["plan"][done:]])
        data["plan"] = data["plan"][:done] + [asdict(s) for s in rest]
        agent.state.set_init_state(data)

    # ------------------------------------------------------------------ judgments
    def handle_judgment(self, agent, update: dict) -> str | None:
        state = agent.state
        data = state.data
        plan, done = data["plan"], len(data["comparisons"])
        position = update.get("position")
        if not isinstance(position, int) or data["blocked"] or done >= len(plan) or position != done + 1:
            return None  # already judged (a double click, another tab): the view shows where the worker is
        side, reason = update.get("choice"), str(update.get("reason") or "").strip()
        tie = self.allow_tie and side in TIE_CHOICES
        if side not in ("left", "right") and not tie:
            return CHOOSE_ANSWER if self.allow_tie else CHOOSE_SPEAKER
        if len(reason) < self.min_reason:
            return reason_too_short(self.min_reason)
        slot = Slot(**plan[done])
        pairing = self.pairings[slot.index]
        models = pairing["speakers_to_eval"]
        left_model, right_model = models[slot.left], models[1 - slot.left]
        choice = "" if tie else left_model if side == "left" else right_model  # a tie picks no model
        correct = (choice == pairing["correct_answer"]) if slot.is_onboarding else None  # a gold pair has a winner
        previous_end = data["comparisons"][-1]["end_time"] if data["comparisons"] else state.metadata.task_start
        stored_pairing = {"pair_id": self.scheduler.ids[slot.index], "pairing_index": slot.index,
                          "dialogue_ids": pairing.get("dialogue_ids") or [
                              dd.get("id", f"onboarding-{slot.index}-{k}") for k, dd in enumerate(pairing["dialogue_dicts"])],
                          "speakers_to_eval": list(models), "is_onboarding": slot.is_onboarding}
        if slot.is_onboarding:
            stored_pairing["correct_answer"] = pairing["correct_answer"]
        self.accept(state, update)
        state.add_comparison({
            "pairing": stored_pairing, "position": position, "n_comparisons": len(plan),
            "left": slot.left, "left_model": left_model, "choice": choice, "choice_side": "" if tie else side,
            "outcome": side if tie else "win",
            "reason": reason, "question": self.question, "question_key": self.question_key,
            "onboarding_correct": correct, "start_time": previous_end, "end_time": time.time(),
        })
        winner = None if slot.is_onboarding else choice
        # the scheduler hands the judgment to the run's stop rule; a decision it settled is stored with it
        self.store_stop_decision(agent, self.scheduler.record(str(agent.worker_id), slot, correct, winner=winner,
                                                              outcome=side if tie else "win"))
        if correct is False:
            agent.get_worker().grant_qualification(self.block_qualification, 1)
            data["blocked"] = True
            state.save_data()
            self._release(agent)
            logger.info("worker %s failed onboarding: blocked with %s", agent.worker_id, self.block_qualification)
        return None

    def _release(self, agent) -> None:
        """Give back whatever this agent was handed and did not judge (once)."""
        if agent.get_agent_id() in self._released or agent.state.data.get("plan") is None:
            return
        self._released.add(agent.get_agent_id())
        done = len(agent.state.data["comparisons"])
        rest = [Slot(**s) for s in agent.state.data["plan"][done:]]
        self.scheduler.release(str(agent.worker_id), rest)

    # ------------------------------------------------------------------ the live loop (LiveRunner)
    def handle(self, agent, update: dict) -> str | None:
        if update.get("type") != "judgment":
            return UNKNOWN_ACTION
        return self.handle_judgment(agent, update)

    def end(self, agent) -> None:
        self._release(agent)
