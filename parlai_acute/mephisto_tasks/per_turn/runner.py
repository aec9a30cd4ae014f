"""Live side of the per-turn task: the chat, the models' candidates, the worker's choices, stored at once.

The server is the source of truth. Protocol with the page (Mephisto live updates):

* every reply is a *view* (``{"type": "state", "version": n, "status": ..., "messages": [...],
  "candidates": [{"position": 0, "text": ...}, ...] | null, "turns_done", "min_turns", ...}``);
  candidates carry positions and texts only: model names never reach the page;
* the page sends ``{"type": "message", "text": ...}``, ``{"type": "choice", "turn": t,
  "picked": [positions], "none": bool, "user_reply": ..., "justification": ...}``,
  ``{"type": "onboarding", "picked": [...], "none": bool}``, ``{"type": "finish"}`` or
  ``{"type": "survey", ...}``, each with ``action_id`` and ``tab``: an action is stored once and
  always answered with the current view (see :mod:`..live_runner`).
  The continuation is taken from the server's own candidate list, never from the page, and
  the minimum number of turns is enforced here, not only in the page.
* a dialogue cut short (relaunch, a page the router stopped hearing) continues in the worker's
  next agent at the same turn: the models hear the stored turns again, and a turn whose
  candidates were never made (the run stopped while the models wrote) is generated then.
"""
from __future__ import annotations

import logging
import random
import threading
import time

from parlai_acute.mephisto_tasks.live.live_runner import UNKNOWN_ACTION, LiveRunner
from parlai_acute.mephisto_tasks.per_turn import survey, texts
from parlai_acute.mephisto_tasks.per_turn.state import SCHEMA
from parlai_acute.mephisto_tasks.live.texts import NO_WORK
from parlai_acute.per_turn import onboarding
from parlai_acute.per_turn.design import decide
from parlai_acute.worlds.per_turn import PerTurnDialogue

logger = logging.getLogger(__name__)
MAX_MESSAGE_CHARS = 1000  # a chat turn, not an essay; sent in every view so the page's counter is this limit
HI = "Hi!"


def _at(agent, status: str):
    """The worker's stored state and its data if they are at ``status`` (an action meant for
    another step is ignored, the page gets the current view), else ``(state, None)``."""
    state = agent.state
    return state, (state.data if state.data["status"] == status else None)

class PerTurnRunner(LiveRunner):
    fail_message = texts.FAILED

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        from parlai_acute.mephisto_tasks.per_turn.live import ensure_live

        self.live = ensure_live(task_run, args, shared_state)
        self.design, self.scheduler = self.live.design, self.live.scheduler
        b = args.blueprint
        self.custom_question = b.get("custom_question") or None
        self.seed = int(b.seed)
        self._dialogues: dict[str, PerTurnDialogue] = {}
        self._lock = threading.Lock()
        self._ended: set[str] = set()
        self.start_watching()

    # ------------------------------------------------------------------ views
    def view(self, state, **extra) -> dict:
        d = state.data
        pending = d.get("pending")
        turns = len(d["turns"])
        k = len(d.get("model_set") or ())
        ob = d.get("onboarding") or {}
        text = texts.page_texts(
            self.design, status=d["status"], k=k, turns_done=turns, pending=pending is not None,
            ready=(pending or {}).get("ready", 0), retrying=len((pending or {}).get("retrying") or ()),
            retry_attempt=max([r["attempt"] for r in ((pending or {}).get("retrying") or {}).values()] or [0]),
            attempts=int(getattr(self.live.pool, "retries", 0)) + 1,
            practice_replies=len(ob.get("order") or ()),
            passed_practice=bool(ob.get("passed")), worker_context=d.get("worker_context", ""),
            custom_question=self.custom_question, message=d.get("message", ""), assignment=d.get("assignment", ""))
        v = {"type": "state", "version": d.get("version", 0), "status": d["status"],
             "protocol": self.design.protocol, "setting": self.design.setting, "question": text["question"],
             "text": text, "k": k, "justification": self.design.justification,
             "min_turns": self.design.min_turns, "max_turns": self.design.max_turns, "turns_done": turns,
             "worker_context": d.get("worker_context", ""),
             "messages": [{"speaker": m["speaker"], "text": m["text"], "seed": bool(m.get("seed"))}
                          for m in d["messages"]],
             "candidates": None, "turn": None, "failed": 0,
             "waiting": pending is not None and pending.get("shown_at") is None,
             "can_finish": d["status"] == "chatting" and pending is None and turns >= self.design.min_turns,
             "can_send": d["status"] == "chatting" and pending is None and turns < self.design.max_turns,
             "onboarding": None, "message": d.get("message", ""), "ack": None, "error": None,
             "max_message_chars": MAX_MESSAGE_CHARS,  # the page counts against the limit the server enforces
             "first_message": HI if self.design.opening == "hi" and not d["turns"] else "",
             "label_mode": self.design.label_mode, "survey": None}
        if d["status"] == "survey":
            v["survey"] = {"questions": self.live.survey_questions,
                           "personas": d["survey_personas"]["options"] if d.get("survey_personas") else None}
        if pending is not None:
            shown = sorted((c for c in pending["candidates"] if c["position"] is not None), key=lambda c: c["position"])
            v.update(candidates=[{"position": c["position"], "text": c["text"]} for c in shown],
                     turn=pending["turn"], failed=sum(c["position"] is None for c in pending["candidates"]))
        if d["status"] == "onboarding":
            item = self.live.onboarding_items[d["onboarding"]["item"]]
            order = d["onboarding"]["order"]
            v["onboarding"] = {"context": list(item["context"]),
                               "replies": [{"position": p, "text": item["replies"][i]} for p, i in enumerate(order)]}
        v.update(extra)
        return v

    # ------------------------------------------------------------------ start and resume
    def has_work_for(self, worker) -> bool:
        return self.scheduler.may_start(str(worker.db_id))

    @classmethod
    def resumable(cls, data: dict) -> bool:
        return data.get("schema") == SCHEMA and data.get("status") in ("onboarding", "chatting", "partial", "survey")

    def resume_unit(self, agent, data: dict) -> None:
        """The same dialogue at the same turn: it is in progress again for the scheduler."""
        if data["status"] == "partial":
            data["status"] = "chatting"
        if data["status"] == "chatting" and data.get("model_set"):
            self.scheduler.resume(str(agent.worker_id), "|".join(sorted(data["model_set"])), data["dialogue_id"],
                                  turns=len(data["turns"]))
        data["assignment"] = f"{agent.assignment_id} (unit {agent.unit_id})"
        agent.state.set_init_state(data)
        print(f"worker {data['worker_name']} came back on assignment {agent.assignment_id} (unit {agent.unit_id}): "
              f"dialogue {data['dialogue_id']}, turn {len(data['turns']) + 1}", flush=True)
        if data["status"] == "chatting":
            self._start_dialogue(agent)

    def reconnected(self, agent) -> None:
        if agent.state.data["status"] == "chatting" and agent.get_agent_id() not in self._dialogues:
            self._start_dialogue(agent)  # the page reconnected to a dialogue this process does not hold

    def resume(self, agent) -> None:
        """A turn whose candidates were never made (the run stopped while the models wrote): make them."""
        d = agent.state.data
        pending = d.get("pending")
        if d["status"] == "chatting" and pending is not None and pending.get("shown_at") is None:
            print(f"dialogue {d['dialogue_id']}: the candidates of turn {pending['turn'] + 1} were never made "
                  f"(the task stopped while the models wrote); making them now", flush=True)
            self._generate(agent)
            self.send_view(agent, ack=pending.get("action"))

    def start_unit(self, agent) -> None:
        state = agent.state
        worker = str(agent.worker_id)
        data = {"worker_name": agent.get_worker().worker_name, "setting": self.design.setting,
                "protocol": self.design.protocol, "dialogue_id": f"r{self.task_run.db_id}-a{agent.db_id}",
                "config": self.live.config, "assignment": f"{agent.assignment_id} (unit {agent.unit_id})"}
        print(f"worker {data['worker_name']} took assignment {agent.assignment_id} (unit {agent.unit_id}): "
              f"dialogue {data['dialogue_id']}", flush=True)  # the launcher's console: who is where
        if not self.scheduler.may_start(worker):  # nothing left for them (e.g. the stop rule fired): say so now
            data.update(status="unavailable", message=NO_WORK)
        elif self.scheduler.needs_onboarding(worker):
            rng = random.Random(f"{self.seed}:{data['dialogue_id']}:onboarding")
            index = rng.randrange(len(self.live.onboarding_items))
            order = onboarding.practice_order(self.live.onboarding_items[index], self.design.replies_per_turn, rng)
            data.update(status="onboarding", onboarding={"item": index, "order": order, "picked": None,
                                                         "passed": None})
        else:
            data["status"] = "chatting"
        state.set_init_state(data)
        if data["status"] == "chatting":
            self._start_dialogue(agent)

    def _start_dialogue(self, agent) -> None:
        state = agent.state
        d = state.data
        worker = str(agent.worker_id)
        if not d.get("model_set"):
            names = self.scheduler.start(worker, d["dialogue_id"])
            if names is None:
                d.update(status="unavailable", message=NO_WORK)
                state.save_data()
                return
            d["model_set"] = list(names)
            seed = self.live.opening(d["dialogue_id"])
            d.update(seed=seed.info, worker_context=seed.worker_context)
            d["messages"] = [{"speaker": "bot", "text": t, "source": "seed", "seed": True} for t in seed.opening]
            state.save_data()
        seed = self.live.opening(d["dialogue_id"])
        dialogue = PerTurnDialogue(self.live.pool, d["model_set"], model_context=seed.model_context,
                                   opening=seed.opening)
        for turn in d["turns"]:  # a dialogue picked up again after a reconnect: replay what was said
            dialogue.replay(turn["worker_message"], _continuation(turn), source=_source(turn))
        pending = d.get("pending")
        if pending is not None and pending.get("shown_at") is not None:
            dialogue.hear(pending["worker_message"])  # its candidates are on the page, waiting for the choice
        self._dialogues[agent.get_agent_id()] = dialogue

    # ------------------------------------------------------------------ packets
    def handle(self, agent, update: dict) -> str | None:
        handlers = {"message": self._message, "choice": self._choice, "onboarding": self._onboarding,
                    "finish": self._finish, "survey": self._survey}
        kind = update.get("type")
        if kind not in handlers:
            return UNKNOWN_ACTION
        return handlers[kind](agent, update)

    def _message(self, agent, update: dict) -> str | None:
        state = agent.state
        d = state.data
        text = " ".join(str(update.get("text") or "").split())
        if self.design.opening == "hi" and not d["turns"]:
            text = HI  # Meena's protocol: every conversation starts with the same "Hi!"
        if len(d["turns"]) >= self.design.max_turns:
            return texts.LAST_TURN
        if d["status"] in ("survey", "complete"):
            return texts.CHAT_OVER
        if d["status"] != "chatting" or d.get("pending") is not None:
            return texts.JUDGE_FIRST
        if not text:
            return texts.EMPTY_MESSAGE
        if len(text) > MAX_MESSAGE_CHARS:
            return texts.TOO_LONG.format(limit=MAX_MESSAGE_CHARS, length=len(text))  # the page said so already
        self.accept(state, update)
        turn = len(d["turns"])
        d["messages"].append({"speaker": "human", "text": text, "source": "human"})
        d["pending"] = {"turn": turn, "worker_message": text, "candidates": [], "shown_at": None,
                        "action": update["action_id"], "received_at": time.time()}
        state.save_data()
        self.send_view(agent, ack=update["action_id"])  # "the models are replying": nobody stares at a frozen page
        self._generate(agent)
        return None

    def _generate(self, agent) -> None:
        """Every model's candidate for the pending turn, stored before the page sees them."""
        state = agent.state
        d = state.data
        turn, text = d["pending"]["turn"], d["pending"]["worker_message"]

        def ready(n: int) -> None:  # "2 of 4 ready": the wait shows progress as each model settles
            d["pending"]["ready"] = n
            if n < len(d["model_set"]):
                self.send_view(agent, ack=d["pending"].get("action"))

        def retry(model: str, attempt: int, error: str) -> None:  # a long wait says why: the page, blind,
            # that a reply is asked again; the researcher's console which model and what went wrong
            d["pending"].setdefault("retrying", {})[model] = {"attempt": attempt, "error": error}
            print(f"dialogue {d['dialogue_id']} turn {turn + 1}: model {model} failed ({error}); asking it again "
                  f"(attempt {attempt} of {int(getattr(self.live.pool, 'retries', 0)) + 1})", flush=True)
            self.send_view(agent, ack=d["pending"].get("action"))

        asked = time.time()
        candidates = self._dialogues[agent.get_agent_id()].candidates(text, on_ready=ready, on_retry=retry)
        ok = [c for c in candidates if c.ok]
        rng = random.Random(f"{self.seed}:{d['dialogue_id']}:{turn}:order")
        positions = rng.sample(range(len(ok)), len(ok))
        position_of = {c.model: p for c, p in zip(ok, positions)}
        d["pending"]["candidates"] = [
            {"model": c.model, "text": c.text, "position": position_of.get(c.model), "latency": round(c.latency, 4),
             "generation_seconds": round(c.generation_seconds, 4), "attempts": c.attempts, "error": c.error, "context_digest": c.context_digest,
             **({"decoding": c.extra["decoding"]} if "decoding" in c.extra else {})} for c in candidates]
        d["pending"]["shown_at"] = time.time()
        d["pending"].pop("retrying", None)
        # what the worker waited, from their message: a relaunch may have made the candidates long after it
        received = d["pending"].get("received_at") or asked
        for c in d["pending"]["candidates"]:
            c["latency"] = round(c["latency"] + (asked - received), 4)
        d["pending"]["wait_seconds"] = round(d["pending"]["shown_at"] - received, 4)
        state.save_data()

    def _choice(self, agent, update: dict) -> str | None:
        state = agent.state
        d = state.data
        pending = d.get("pending")
        if d["status"] != "chatting" or pending is None or update.get("turn") != pending["turn"]:
            return texts.TURN_OVER
        shown = sorted((c for c in pending["candidates"] if c["position"] is not None), key=lambda c: c["position"])
        rng = random.Random(f"{self.seed}:{d['dialogue_id']}:{pending['turn']}:continue")
        ssa = None
        if self.design.label_mode == "ssa" and shown:
            sensible, specific = update.get("sensible"), update.get("specific")
            if not isinstance(sensible, bool) or (sensible and not isinstance(specific, bool)):
                return texts.SSA_MISSING
            ssa = {"sensible": sensible, "specific": bool(sensible and specific)}  # nonsense is never specific
            update = dict(update, picked=[0] if sensible else [], none=not sensible)
        try:
            decision = decide(self.design.protocol, len(shown), update.get("picked"), str(update.get("user_reply") or ""),
                              rng, none=bool(update.get("none")))
        except ValueError as exc:
            return str(exc)
        justification = " ".join(str(update.get("justification") or "").split())
        if self.design.justification == "required" and len(justification) < 3:
            return texts.EXPLAIN
        if self.design.justification == "off":
            justification = ""
        self.accept(state, update)
        candidates = []
        for c in pending["candidates"]:
            c = dict(c, picked=c["position"] in decision.picked if c["position"] is not None else False,
                     continued=c["position"] is not None and c["position"] == decision.continued)
            candidates.append(c)
        turn = {"turn": pending["turn"], "worker_message": pending["worker_message"], "candidates": candidates,
                "fallback": decision.fallback, "user_reply": decision.user_reply, "justification": justification,
                "shown_at": pending["shown_at"], "decided_at": time.time(), "wait_seconds": pending.get("wait_seconds")}
        if ssa is not None:
            turn["ssa"] = ssa
        d["turns"].append(turn)
        d["pending"] = None
        text, source = _continuation(turn), _source(turn)
        if text:
            d["messages"].append({"speaker": "bot", "text": text, "source": source})
        state.save_data()  # stored before anything else happens
        self._dialogues[agent.get_agent_id()].continue_with(text, source=source)
        if len(d["turns"]) >= self.design.max_turns:
            self._close(agent)  # the last turn: the chat ends by itself (survey or thanks), no button to find
        return None

    def _onboarding(self, agent, update: dict) -> str | None:
        state, d = _at(agent, "onboarding")
        if d is None:
            return None
        ob = d["onboarding"]
        item = self.live.onboarding_items[ob["item"]]
        if self.design.label_mode == "ssa":  # the practice asks Meena's questions too: a wrong reply makes no sense
            sensible, specific = update.get("sensible"), update.get("specific")
            if not isinstance(sensible, bool) or (sensible and not isinstance(specific, bool)):
                return texts.SSA_MISSING
            ob["ssa"] = {"sensible": sensible, "specific": bool(sensible and specific)}
            update = dict(update, picked=[0] if sensible else [], none=not sensible)
        picked = update.get("picked")
        try:  # the same rules as a real turn: exactly one for SOBA, an explicit "none" otherwise
            decide(self.design.protocol if self.design.protocol != "sata_user" else "sata_random", len(ob["order"]),
                   picked, "", random.Random(0), none=bool(update.get("none")))
        except ValueError as exc:
            return str(exc)
        self.accept(state, update)
        ob["picked"] = list(picked)
        ob["passed"] = onboarding.passed(item, self.design.protocol, list(picked), ob["order"])
        worker = str(agent.worker_id)
        if ob["passed"]:
            self.scheduler.passed_onboarding(worker)
            d["status"] = "chatting"
            state.save_data()
            self._start_dialogue(agent)
        else:
            agent.get_worker().grant_qualification(self.block_qualification, 1)
            d.update(status="blocked", message=self.fail_message)
            state.save_data()
            logger.info("worker %s failed onboarding: blocked with %s", worker, self.block_qualification)
        return None

    def _finish(self, agent, update: dict) -> str | None:
        state, d = _at(agent, "chatting")
        if d is None:
            return None
        if d.get("pending") is not None:
            return texts.JUDGE_BEFORE_FINISH
        if len(d["turns"]) < self.design.min_turns:
            return texts.too_early(self.design, len(d["turns"]))
        self.accept(state, update)
        self._close(agent)
        return None

    def _close(self, agent) -> None:
        """The chat is over (finished by the worker, or its last turn judged): the survey, or done."""
        state = agent.state
        d = state.data
        if self.design.survey != "none":
            personas = (d.get("seed") or {}).get("personas")
            if personas and len(personas) == 2:
                d["survey_personas"] = survey.persona_choice(personas[1], personas[0], self.seed, d["dialogue_id"],
                                                             self.live.personas)
            d["status"] = "survey"
            state.save_data()
            return
        d["status"] = "complete"
        state.save_data()
        self.end(agent)

    def _survey(self, agent, update: dict) -> str | None:
        state, d = _at(agent, "survey")
        if d is None:
            return None
        try:
            answers = survey.validate(update, self.live.survey_questions, d.get("survey_personas"))
        except ValueError as exc:
            return str(exc)
        self.accept(state, update)
        d["survey"] = dict(answers, answered_at=time.time())
        d["status"] = "complete"
        state.save_data()
        self.end(agent)
        return None

    def end(self, agent) -> None:
        """The dialogue is over (finished, or cut short): its place in the schedule is settled once."""
        d = agent.state.data
        with self._lock:
            if agent.get_agent_id() in self._ended:
                return
            self._ended.add(agent.get_agent_id())
        self._dialogues.pop(agent.get_agent_id(), None)
        if not d.get("model_set"):
            return
        complete = d["status"] in ("complete", "survey")  # the chat reached its minimum; the survey is extra
        if d["status"] == "chatting":
            d["status"] = "partial"
            agent.state.save_data()
        self.scheduler.finish("|".join(sorted(d["model_set"])), d["dialogue_id"], complete=complete,
                              turns=len(d["turns"]), worker=str(agent.worker_id))
        if complete and self.scheduler.stop is not None:  # a dialogue counts for the stop rule once complete
            from parlai_acute.mephisto_tasks.per_turn.store import stop_rows

            self.settle_stop(agent, stop_rows([self.unit_record(agent)], self.scheduler.stop.protocol))


def _continuation(turn: dict) -> str:
    if turn["fallback"] == "user":
        return turn["user_reply"]
    return next((c["text"] for c in turn["candidates"] if c.get("continued")), "")


def _source(turn: dict) -> str:
    if turn["fallback"] == "user":
        return "human"
    return next((c["model"] for c in turn["candidates"] if c.get("continued")), "")
