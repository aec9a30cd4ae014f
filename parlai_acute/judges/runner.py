"""Judging items: every order of every item, through the cache, with retries, calls kept in flight.

For each (item, order) the judge is asked (``concurrency`` calls always in flight, each
answer recorded as it comes: :meth:`~.model.JudgeModel.stream`); an answer that does not follow the format is
asked again with a reminder (``retries`` times; the reminder changes the prompt, so a
greedy judge can answer differently), and is recorded as missing after the last one.
Calls that fail (errors, timeouts) are retried with backoff by :class:`~.model.JudgeModel`
and recorded as missing with the error. Every answered call is stored in the cache under
(prompt, judge configuration, decoding, answer mode), so a rerun asks nothing again.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Optional, Sequence

from parlai_acute.errors import UserError
from parlai_acute.judges import orders as order_mod
from parlai_acute.judges.cache import NoCache, cache_key
from parlai_acute.judges.model import ANSWER_FROM, JudgeModel, Reply, Request
from parlai_acute.judges.parse import REMINDER, parse_reply
from parlai_acute.judges.protocol import Item, Protocol

CALL_FORMAT = "judge-call@1"  # bump when the cached value's meaning changes


@dataclass
class JudgeSettings:
    """Everything about a run that changes answers; recorded in every output."""

    answer_from: str = "text"
    retries: int = 2
    order_mode: str = "rotations"
    inconsistent: str = "drop"
    seed: int = 0

    def __post_init__(self):
        if self.answer_from not in ANSWER_FROM:
            raise UserError(f"answer_from {self.answer_from!r} is unknown; use text or logprobs", param="answer_from")
        if self.retries < 0:
            raise UserError(f"retries {self.retries} is negative; use 0 or more", param="retries")
        if self.order_mode not in order_mod.ORDER_MODES:
            raise UserError(f"order_mode {self.order_mode!r} is unknown; use {', '.join(order_mod.ORDER_MODES)}",
                            param="order_mode")
        if self.inconsistent not in order_mod.RULES:
            raise UserError(f"inconsistent {self.inconsistent!r} is unknown; use drop or tie", param="inconsistent")


@dataclass
class Attempt:
    prompt: str
    text: str
    error: str = ""
    cached: bool = False
    label_logprobs: Optional[dict] = None


@dataclass
class Judged:
    """One item shown in one order, and what the judge said."""

    order: tuple
    attempts: list = field(default_factory=list)
    position_value: object = None  # verdict in positions (None: missing)
    value: object = None  # verdict in option indices
    reason: str = ""
    probability: float = float("nan")  # logprobs mode: probability of the chosen label among the labels
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def missing(self) -> bool:
        return self.position_value is None

    @property
    def error(self) -> str:
        return self.attempts[-1].error if self.attempts else ""


@dataclass
class ItemResult:
    item: Item
    judged: list
    resolution: order_mod.Resolution

    def as_record(self, protocol: Protocol) -> dict:
        """The item's full record for ``items.jsonl``: exact prompts, raw answers, verdicts."""
        return {
            "key": self.item.key, "template": self.item.template.id, "system": self.item.template.system,
            "options": self.item.options, "gold": self.item.gold, "status": self.resolution.status,
            "verdict": self.resolution.value, "follows_position": self.resolution.follows_position,
            "orders": [{"order": list(j.order), "labels": protocol.labels(self.item),
                        "verdict_positions": _jsonable(j.position_value), "verdict": _jsonable(j.value),
                        "reason": j.reason, "probability": None if math.isnan(j.probability) else j.probability,
                        "attempts": [a.__dict__ for a in j.attempts]} for j in self.judged],
        }


def _jsonable(value):
    return list(value) if isinstance(value, tuple) else value


class Runner:
    """Runs a protocol's items through a judge; keeps call and token counts."""

    def __init__(self, judge: JudgeModel, settings: JudgeSettings, cache=None, progress=None):
        """``progress``: a callable given each batch's number of calls, or a tqdm bar (its total grows
        as the calls to make become known, so the estimate covers every round)."""
        self.judge, self.settings = judge, settings
        self.cache = cache if cache is not None else NoCache()
        self.progress = progress
        self.calls = self.cached_calls = self.failed_calls = 0
        self.prompt_tokens = self.completion_tokens = 0  # of calls made now (cached calls cost nothing)
        if settings.answer_from == "logprobs":
            judge.check_logprobs()

    def run(self, protocol: Protocol, items: Sequence[Item]) -> list:
        if self.settings.answer_from == "logprobs" and any(item.kind == "any" for item in items):
            raise UserError("answer_from=logprobs reads one label; select-all-that-apply items need answer_from=text",
                            param="answer_from")
        work = []
        for index, item in enumerate(items):
            for order in order_mod.orders(len(item.options), self.settings.order_mode, offset=index,
                                          seed=self.settings.seed):
                work.append((item, Judged(order=tuple(order))))
        pending = list(work)
        attempts = 1 if self.settings.answer_from == "logprobs" else self.settings.retries + 1
        for attempt in range(attempts):
            if not pending:
                break
            self._ask(protocol, pending, attempt)
            pending = [(item, j) for item, j in pending if j.missing and not j.error]
        results = []
        for item in items:
            judged = [j for it, j in work if it is item]
            verdicts = [None if j.missing else j.value for j in judged]
            positions = [j.position_value for j in judged]
            results.append(ItemResult(item, judged, order_mod.resolve(verdicts, positions)))
        return results

    # ------------------------------------------------------------------ one round of calls

    def _prompt(self, protocol: Protocol, item: Item, order, attempt: int) -> str:
        text = protocol.render(item, order)
        if attempt:
            text += f"\n\n{REMINDER} (Attempt {attempt + 1}.)"
        return text

    def _key(self, item: Item, prompt: str, labels) -> str:
        mode = self.settings.answer_from
        return cache_key(CALL_FORMAT, self.judge.config, mode, item.template.system, prompt,
                         labels if mode == "logprobs" else None)

    def _ask(self, protocol: Protocol, pending: list, attempt: int) -> None:
        todo = []
        for item, judged in pending:
            prompt = self._prompt(protocol, item, judged.order, attempt)
            labels = protocol.labels(item)
            key = self._key(item, prompt, labels)
            stored = self.cache.get(key)
            if stored is not None:
                self.cached_calls += 1
                self._record(item, judged, labels, prompt, Reply.from_dict(stored), cached=True)
            else:
                todo.append((item, judged, prompt, labels, key))
        if hasattr(self.progress, "total"):  # a progress bar: the calls to make are known now
            self.progress.total = (self.progress.total or 0) + len(todo)
            self.progress.refresh()
        requests = [Request(item.template.system, prompt, key) for item, _, prompt, _, key in todo]
        labels = [b[3] for b in todo] if self.settings.answer_from == "logprobs" else None
        for index, reply in self.judge.stream(requests, labels):  # concurrency calls in flight, answers as they come
            item, judged, prompt, labels_of, key = todo[index]
            self.calls += 1
            if reply.error:
                self.failed_calls += 1
            else:
                self.prompt_tokens += reply.prompt_tokens
                self.completion_tokens += reply.completion_tokens
                self.cache.put(key, reply.as_dict())
            self._record(item, judged, labels_of, prompt, reply, cached=False)
            if self.progress is not None:
                (self.progress.update if hasattr(self.progress, "update") else self.progress)(1)

    def _record(self, item: Item, judged: Judged, labels, prompt: str, reply: Reply, cached: bool) -> None:
        judged.attempts.append(Attempt(prompt=prompt, text=reply.text, error=reply.error, cached=cached,
                                       label_logprobs=reply.label_logprobs))
        judged.prompt_tokens += reply.prompt_tokens
        judged.completion_tokens += reply.completion_tokens
        judged.seconds += reply.seconds
        if reply.error:
            return
        if self.settings.answer_from == "logprobs":
            found = reply.label_logprobs or {}
            if not found:
                return
            label = max(found, key=found.get)
            total = sum(math.exp(v - found[label]) for v in found.values())
            judged.probability = 1.0 / total
            value = label
            judged.reason = f"chosen by answer-token probability ({judged.probability:.2f} of the answer labels)"
        else:
            parsed = parse_reply(reply.text, item.kind, labels, item.template.reason_required)
            if parsed is None:
                return
            value, judged.reason = parsed.value, parsed.reason
        if item.kind == "one":  # an extra label (a tie) picks no position: it stays itself in every order
            judged.position_value = value if value in item.template.extra_labels else labels.index(value)
        elif item.kind == "any":
            judged.position_value = tuple(labels.index(v) for v in value)
        else:
            judged.position_value = value if isinstance(value, bool) else value == "yes"
        judged.value = order_mod.to_options(judged.position_value, judged.order, item.kind)


def summarize(results: Sequence[ItemResult]) -> dict:
    """Counts of items by status, inconsistent ones that followed the position, and missing causes."""
    status = {order_mod.CONSISTENT: 0, order_mod.INCONSISTENT: 0, order_mod.MISSING: 0}
    follows = errors = unparseable = 0
    for r in results:
        status[r.resolution.status] += 1
        follows += r.resolution.follows_position
        for j in r.judged:
            if j.missing:
                if j.error:
                    errors += 1
                else:
                    unparseable += 1
    first_error = next((j.error for r in results for j in r.judged if j.error), "")
    return {"items": len(results), **status, "inconsistent_following_position": follows,
            "orders_missing_unparseable": unparseable, "orders_missing_error": errors, "first_error": first_error}


def timestamp() -> float:
    return time.time()
