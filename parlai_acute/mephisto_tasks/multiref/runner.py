"""Live side of the multi-reference task: shows a context, takes the worker's replies one by one.

The page sends ``{"type": "answer", "action_id": a, "position": k, "index": j, "text": "...",
"timing": {...}}`` for reply j of the context at position k. The server checks every reply
(at least ``min_reply_chars`` characters, at most ``max_reply_chars``, not a repeat of one the
worker already wrote for this context), stores it before answering, and warns when replies come
consistently too fast (``fast_reply_streak`` in a row, each within ``fast_reply_seconds`` of the
previous event, by the server's clock). The page's key-press and click times are stored as
reported, flagged ``client_reported``.
"""
from __future__ import annotations

import math
import re
import time

from parlai_acute.mephisto_tasks.live.item_runner import ItemTaskRunner, alternating_speakers
from parlai_acute.mephisto_tasks.multiref import texts

MAX_TIMES = 5000  # key presses kept per reply


def normalized(text: str) -> str:
    """A reply as compared for repeats: case, spacing and punctuation at the ends ignored."""
    return re.sub(r"\s+", " ", text.lower()).strip(" .!?,;:'\"")


def client_timing(raw) -> dict:
    """The page's timing data, kept as reported but bounded: numbers only, capped lengths."""
    raw = raw if isinstance(raw, dict) else {}

    def number(value):
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
            and math.isfinite(value) else None

    def numbers(value):
        return [n for n in (number(v) for v in (value if isinstance(value, list) else [])[:MAX_TIMES])
                if n is not None]

    via = raw.get("via") if raw.get("via") in ("enter", "button") else None
    return {"client_reported": True, "keys": numbers(raw.get("keys")), "clicks": numbers(raw.get("clicks")),
            "shown": number(raw.get("shown")), "submitted": number(raw.get("submitted")), "via": via}


class MultirefRunner(ItemTaskRunner):
    @classmethod
    def setup(cls, task_run, args, shared_state):
        from parlai_acute.mephisto_tasks.multiref.live import ensure_live

        return ensure_live(task_run, args, shared_state)

    def __init__(self, task_run, args, shared_state):
        super().__init__(task_run, args, shared_state)
        b = args.blueprint
        self.replies_needed = self.live.replies_per_worker
        self.min_chars, self.max_chars = int(b.min_reply_chars), int(b.max_reply_chars)
        self.fast_seconds, self.fast_streak = float(b.fast_reply_seconds), int(b.fast_reply_streak)

    def task_view(self) -> dict:
        return {"replies_needed": self.replies_needed, "min_reply_chars": self.min_chars,
                "max_reply_chars": self.max_chars}

    def texts(self, state, view: dict) -> dict:
        d = state.data
        item = view["item"]
        written = sum(len(r["replies"]) for r in d["results"]) + len((d.get("current") or {}).get("replies", []))
        return texts.page_texts(status=d["status"], replies=self.replies_needed, n=view["n"],
                                position=view["position"], left=item["remaining"] if item else 0,
                                min_chars=self.min_chars, max_chars=self.max_chars, written=written,
                                message=d.get("message", ""))

    def entry_view(self, state, entry: dict) -> dict:
        context = self.item_of(entry)
        written = [r["text"] for r in (state.data.get("current") or {}).get("replies", [])]
        return {"context": alternating_speakers(context.turns), "written": written,
                "remaining": self.replies_needed - len(written)}

    def answer(self, agent, update: dict, entry: dict):
        state = agent.state
        d = state.data
        context = self.item_of(entry)
        current = d.get("current") or {"context_id": context.context_id, "dialogue_id": context.dialogue_id,
                                       "turn_index": context.turn_index, "replies": []}
        replies = current["replies"]
        if update.get("index") != len(replies) + 1:
            return texts.ALREADY, None
        text = " ".join(str(update.get("text") or "").split())
        if len(text) < self.min_chars:
            return texts.too_short(self.min_chars), None
        if len(text) > self.max_chars:
            return texts.too_long(self.max_chars), None
        if normalized(text) in {normalized(r["text"]) for r in replies}:
            return texts.REPEAT, None
        now = time.time()
        since = replies[-1]["received_at"] if replies else d.get("shown_at") or now
        seconds = round(now - since, 4)
        fast = seconds < self.fast_seconds
        d["fast_streak"] = d.get("fast_streak", 0) + 1 if fast else 0
        warned = d["fast_streak"] >= self.fast_streak
        replies.append({"index": len(replies) + 1, "text": text, "received_at": now, "server_seconds": seconds,
                        "fast": fast, "warned": warned, "client_timing": client_timing(update.get("timing"))})
        d["current"] = current
        if len(replies) >= self.replies_needed:
            self.finish_entry(agent, entry, {
                "context_id": context.context_id, "dialogue_id": context.dialogue_id,
                "turn_index": context.turn_index, "context": list(context.turns), "reference": context.reference,
                "replies": replies})
        else:
            state.save_data()  # stored before the page hears back
        return None, texts.FAST if warned else None
