"""The stop rule every live task shares (issue 18): stop handing out new work once the answer is known.

A task with ``stop_alpha`` / ``stop_comparisons`` / ``stop_budget`` keeps one :class:`StopRule`.
The runner hands it the tidy rows of each *finished* sampling unit (ACUTE: each judgment, the
worker being the unit; per-turn: a finished dialogue's turns; SSA: a finished unit's labels or
an interactive conversation's labels), the rule looks at :func:`parlai_acute.monitoring.status.status` on
everything so far, and fires once:

* ``decided``: every named comparison is decided at ``alpha`` by the confidence sequences status
  prints (cluster-level, Bonferroni over all the run's comparisons), so looking after every unit
  keeps the error rate: ACUTE and per-turn pairs against "no preference", SSA model pairs'
  sensibleness and specificity rates apart (their sequences disjoint). An ACUTE pair whose
  conversations are reused is decided by status' two-facet sequence (workers and conversations
  both sampled) together with the one over workers, so a run stopped early claims a difference
  between the models, not one that holds only for these conversations: peeking after every 4
  workers at equal models judged on a pool of 20 conversation pairs, it stops 0.65 % of runs where
  the sequence over workers alone stops 31.5 % (benchmarks/bench_sequential.py). An SSA pair whose
  labels cross workers with contexts likewise (the two-facet sequence with the analysis' split
  variance, and the disjoint rates): 0.0 % of A/A runs where the disjoint rates alone stop 17 %
  (200 contexts, a pool of 6 workers, a look every 10 contexts). The decision's ``method`` and each
  comparison's ``procedure`` name it;
* ``budget``: the judgments (ACUTE judgments, per-turn judged turns, SSA labels) reach the budget.

The decision (which comparisons, their intervals, at which judgment, alpha, the rule) is what the
task stores with the unit that settled it (``stop_decision``) and ``status --task-name`` shows.
Pure: tidy rows in, a dict out; no Mephisto.
"""
from __future__ import annotations

import math
import threading
import time

import pandas as pd

from parlai_acute.errors import UserError

#: look at every unit up to this many judgments, then at each 5% growth: any schedule of looks
#: keeps a confidence sequence valid, and this keeps a long run's looks cheap
EVERY_UNTIL, GROWTH = 20, 1.05


def rule_words(spec) -> str:
    """How a protocol's comparisons are decided, in words (its ``Monitor``)."""
    if any(m0 is None for m0 in spec.watch.values()):
        return f"two rates' confidence sequences disjoint, over {spec.unit}s (parlai_acute.monitoring.status)"
    return f"confidence sequences over {spec.unit}s (parlai_acute.monitoring.status)"


def comparison_key(name: str) -> tuple[str, str, str | None]:
    """``"b vs a"``, ``"a:b"`` or (SSA) ``"a vs b [specific]"`` as (first, second, measure), models sorted."""
    text, measure = name.strip(), None
    if text.endswith("]") and "[" in text:
        text, measure = text[:-1].split("[", 1)
        text, measure = text.strip(), measure.strip()
    parts = [m.strip() for m in text.replace(":", " vs ").split(" vs ")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(name)
    a, b = sorted(parts)
    return a, b, measure


def options(b, *, judgments: str) -> dict | None:
    """The blueprint's stop options (``b``: ``mephisto.blueprint``) checked, or None without a rule."""
    alpha, budget = b.get("stop_alpha"), b.get("stop_budget")
    named = [c.strip() for c in str(b.get("stop_comparisons") or "").split(",") if c.strip()]
    if alpha is None and budget is None:
        if named:
            raise UserError("mephisto.blueprint.stop_comparisons is set but neither stop_alpha nor stop_budget; "
                            "set mephisto.blueprint.stop_alpha=0.05 for the comparisons to stop the run")
        return None
    if alpha is not None and not 0 < float(alpha) < 1:
        raise UserError(f"mephisto.blueprint.stop_alpha must be strictly between 0 and 1, got {alpha}")
    if budget is not None and int(budget) < 1:
        raise UserError(f"mephisto.blueprint.stop_budget must be at least 1 ({judgments}), got {budget}")
    return {"alpha": None if alpha is None else float(alpha), "budget": None if budget is None else int(budget),
            "comparisons": named}


class StopRule:
    """One run's stop rule. ``pairs``: the model pairs the run compares (sets of two names), what
    unnamed comparisons default to and named ones are checked against."""

    def __init__(self, protocol: str, stop: dict, pairs, table_attrs: dict | None = None):
        from parlai_acute.monitoring.status import monitor

        self.protocol = protocol
        self.spec = monitor(protocol)  # what the protocol's estimands say status watches
        # what the protocol's estimands read from the table besides its rows (ACUTE: the launched cap)
        self.table_attrs = dict(table_attrs or {})
        self.alpha, self.budget = stop.get("alpha"), stop.get("budget")
        self.pairs = sorted({tuple(sorted(p)) for p in pairs if len(set(p)) == 2})
        known = ", ".join(" vs ".join(p) for p in self.pairs) or "none"
        self.top_k = stop.get("top_k")  # ACUTE only: stop once the set of the top k models is decided
        if self.top_k is not None and self.alpha is None:
            self.alpha = 0.05
        self.models = sorted({m for p in self.pairs for m in p})
        self.boundary: set | None = None  # top-k: model pairs across the boundary still open, after a look
        if self.top_k is not None and not 1 <= int(self.top_k) < len(self.models):
            raise UserError(f"stop_top_k={self.top_k} needs 1 <= k < number of models ({len(self.models)}); "
                            f"set it below {len(self.models)}")
        if self.alpha is not None and not self.pairs:
            raise UserError("mephisto.blueprint.stop_alpha waits for model pairs to be decided, and this task compares "
                            "none (one model); give two or more models, or stop with stop_budget only")
        self.wanted = []
        for name in stop.get("comparisons") or []:
            try:
                a, b, measure = comparison_key(name)
            except ValueError:
                a = b = measure = None
            if (a, b) not in self.pairs or (measure is not None and measure not in self.spec.stop_measures):
                extra = (f" (optionally with {' or '.join(f'[{m}]' for m in self.spec.stop_measures)})"
                         if self.spec.stop_measures else "")
                raise UserError(f"stop comparison {name!r} is not 'model vs model' over the pairs this task "
                                f"compares ({known}){extra}; fix mephisto.blueprint.stop_comparisons")
            self.wanted += [(a, b, m) for m in ([measure] if measure else self._measures())]
        if not self.wanted:
            self.wanted = [(a, b, m) for a, b in self.pairs for m in self._measures()]
        self.decision: dict | None = None
        self._rows: dict = {}
        self._next_look = 0
        self._decided_before: set = set()
        self._lock = threading.RLock()  # units of a live task finish in threads of their own

    def _measures(self) -> list:
        return list(self.spec.stop_measures) or [None]

    @property
    def stopped(self) -> bool:
        return self.decision is not None

    def judgments(self) -> int:
        """Judgments so far, as the protocol counts them (ACUTE judgments, per-turn judged turns, SSA labels)."""
        with self._lock:
            key = self.spec.judgment_key
            if key:
                return len({tuple(r[k] for k in key) for r in self._rows.values()})
            return len(self._rows)

    def budget_left(self, under_way: int = 0) -> int | None:
        """Judgments the budget still allows once the ``under_way`` ones are in (None: no budget).
        A scheduler passes the work it handed out (or that was done) and the rule has not read yet,
        and hands out no more than this, so concurrent units do not run far past the budget."""
        return None if self.budget is None else max(0, self.budget - self.judgments() - under_way)

    def add(self, rows: list[dict]) -> dict | None:
        """Rows of a finished unit; returns the decision if they settled the rule (once), else None."""
        with self._lock:
            if self.decision is not None:
                return None
            key = self.spec.row_key
            for r in rows:
                self._rows[tuple(r[k] for k in key) if key else len(self._rows)] = r
            self._check()
            return self.decision

    def _check(self) -> None:
        judged = self.judgments()
        if self.budget is not None and judged >= self.budget:
            self.decision = {"stopped": "budget", "judgments": judged, "budget": self.budget,
                             "rule": f"stop once {self.budget} judgments are in", "time": time.time()}
            return
        if self.alpha is None or not self._rows or judged < self._next_look:
            return
        self._next_look = judged + 1 if judged < EVERY_UNTIL else math.ceil(judged * GROWTH)
        if self.top_k is not None:
            self._check_top_k(judged)
            return
        from parlai_acute.monitoring.status import status

        result = status(self._table(), self.protocol, alpha=self.alpha)
        found = {}
        for row in result["rows"]:
            if not row.get("model_b"):
                continue  # a model's own rate (SSA): no null to decide against
            named = {measure: short for short, measure in self.spec.stop_measures.items()}
            measure = named.get(row["group"])
            found.setdefault((row["model_a"], row["model_b"], measure), []).append(row)
        decided = {w for w in self.wanted if w in found and all(r["decided"] != "undecided" for r in found[w])}
        if len(decided) < len(self.wanted):
            self._decided_before = decided
            return
        # named as the protocol's estimand names the comparison: "B vs A", B the later name
        name = lambda w: f"{w[1]} vs {w[0]}" + (f" [{w[2]}]" if w[2] else "")  # noqa: E731
        self.decision = {
            "stopped": "decided", "judgments": judged, "alpha": self.alpha,
            "settled_by": [name(w) for w in self.wanted if w not in self._decided_before],
            "comparisons": {name(w): {k: found[w][0].get(k) for k in ("group", "decided", "estimate", "lower", "upper",
                                                                      "clusters", "judgments", "alpha", "procedure")}
                            for w in self.wanted},
            "rule": f"stop once every named comparison is decided at alpha {self.alpha:g}",
            "method": f"{rule_words(self.spec)}, Bonferroni over {result['comparisons']} comparison(s)"
                      + "".join(f"; {p}" for p in sorted({r.get('procedure', '') for w in self.wanted
                                                            for r in found[w] if r.get("one_facet")})),
            "time": time.time()}


    def _table(self) -> pd.DataFrame:
        """The rows so far as the protocol's table, with what its estimands read besides the rows (ACUTE:
        the launched cap), so a look keeps the judgments ``status`` and ``analyze`` keep."""
        table = pd.DataFrame(list(self._rows.values()))
        table.attrs.update(self.table_attrs)
        return table

    def _check_top_k(self, judged: int) -> None:
        """ACUTE top-k: decided once each of the top k is ahead of every other model
        (:func:`parlai_acute.monitoring.status.top_k`); the open boundary pairs steer adaptive selection."""
        from parlai_acute.monitoring.status import top_k

        result = top_k(self._table(), int(self.top_k), alpha=self.alpha, models=self.models, details=False)
        verdict = result["questions"][0]
        # only pairs still open: a pair decided the other way (j ahead of i) is final and gains nothing
        self.boundary = {frozenset(u["models"]) for u in verdict["undecided"] if u["decided"] == "undecided"}
        if result["decided"]:
            self.decision = {"stopped": "decided", "judgments": judged, "alpha": self.alpha, "top_k": result["k"],
                             "top": verdict["top"], "rank_sets": verdict["rank_sets"],
                             "rule": f"stop once the top {result['k']} are decided at alpha {self.alpha:g}",
                             "method": result["method"], "time": time.time()}


def already_stopped(stop: StopRule | None) -> str | None:
    """What a relaunch says when the stored data already stop the run (None: they do not)."""
    if stop is None or stop.decision is None:
        return None
    d = stop.decision
    why = ("its budget is spent" if d["stopped"] == "budget" else
           f"the top {d['top_k']} are decided" if "top_k" in d else "every named comparison is decided")
    return (f"the stop rule already stops this task ({why} at {d['judgments']} judgments; `parlai-acute status "
            f"--task-name` shows it); nothing to launch (raise mephisto.blueprint.stop_budget, or use another "
            f"mephisto.task.task_name for a new run)")


def decision_lines(decisions: list[dict]) -> list[str]:
    """What ``status`` prints about a run's stored stop decisions (normally one)."""
    lines = []
    for d in decisions:
        if d["stopped"] == "budget":
            lines.append(f"STOPPED: the budget of {d['budget']} judgments was spent (at {d['judgments']} judgments); "
                         "units already handed out were finished")
            continue
        if "top_k" in d:
            lines.append(f"STOPPED at {d['judgments']} judgments: the top {d['top_k']} ({', '.join(d['top'])}) "
                         f"decided at alpha {d['alpha']:g} ({d['method']})")
            continue
        lines.append(f"STOPPED at {d['judgments']} judgments: every named comparison decided at alpha "
                     f"{d['alpha']:g} ({d['method']}); settled by {', '.join(d['settled_by'])}")
        for name, c in d["comparisons"].items():
            lines.append(f"  {name}: {c['decided']}, estimate {c['estimate']:.3f} "
                         f"[{c['lower']:.3f}, {c['upper']:.3f}] over {c['clusters']} units")
    return lines
