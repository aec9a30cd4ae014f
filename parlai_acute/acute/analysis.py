"""ACUTE-Eval analysis: quality-control exclusions, then statistics per question.

Exclusions follow the paper's quality control, in this order (a judgment is excluded for
the first rule that applies, recorded in ``excluded_because``):

1. ``failed onboarding`` -- every judgment of a worker who got an onboarding pair wrong;
2. ``onboarding judgment`` -- onboarding pairs are checks, not evidence;
3. ``never gave a reason`` -- workers none of whose reasons has ``min_reason_chars``
   letters or digits;
4. ``same model on both sides`` -- an A/A comparison says nothing about a matchup;
5. ``over per-worker cap`` -- judgments beyond ``max_per_worker`` per worker (earliest
   kept); default cap: the number of (model pair, question) combinations; ``"none"``: no cap
   (released data whose workers judged a pair many times).

``min_reason_chars=0`` switches rule 3 off (data collected without reasons); every rule's
count and setting is in :meth:`AnalysisResult.exclusion_summary`.

The statistics are the pure functions of :mod:`parlai_acute.stats`; this module only
selects rows and assembles their results. Writing files is :func:`write_outputs`.

Judgments are clustered by worker, the unit ACUTE samples: every matchup's p-value, mark
and interval come from a test over workers (:func:`parlai_acute.stats.winrates.matchups`,
on :mod:`parlai_acute.stats.inference`), Holm-adjusted within a question at
``config.alpha``; the ranking's intervals resample whole workers. The per-judgment exact
tests and intervals stay beside them, named "exact, judgments independent". Every matchup
reports its number of distinct workers and is flagged when they are fewer than
``min_workers`` (see :meth:`QuestionResult.warnings`).

Ties (a task with ``allow_tie``, or released data): a tie or "both bad" counts half a win for
each model in the win rate, its tests and the Bradley-Terry ranking (the definition is
:mod:`parlai_acute.acute.estimands`'); a table with ties also gets each matchup's win, tie and
loss rates with intervals (``QuestionResult.outcomes``) and Davidson's tie-aware ranking with
its tie parameter (``tie_ranking``, ``tie_parameter``).

Style control (``config.style_control``, with the replies' style: :mod:`parlai_acute.acute.replies`):
each question's Bradley-Terry strengths raw and with reply length and markdown held fixed, side
by side, and the style coefficients (:mod:`parlai_acute.stats.style_control`, the model named in
every output; a tie half a win, as the ordinary ranking; the same worker-level intervals).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar
from pathlib import Path

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError
from parlai_acute.files import json_ready
from parlai_acute.result import Result, write_result
from parlai_acute.stats.agreement import agreement
from parlai_acute.stats.bradley_terry import DEFAULT_ALPHA, bradley_terry
from parlai_acute.stats.settings import Settings
from parlai_acute.table_files import exclusions
from parlai_acute.stats.davidson import davidson
from parlai_acute.stats.style_control import StyleControl, style_control
from parlai_acute.stats.multitest import holm
from parlai_acute.stats.winrates import (design_note, grid_from_matchups, grid_table, matchups, models_of, outcome_rates,
                                         side_bias, tied)

FAILED_ONBOARDING = "failed onboarding"
ONBOARDING = "onboarding judgment"
NO_REASON = "never gave a reason"
SAME_MODEL = "same model on both sides"
OVER_CAP = "over per-worker cap"
_WORD_CHAR = re.compile(r"\w")
RULES = [FAILED_ONBOARDING, ONBOARDING, NO_REASON, SAME_MODEL, OVER_CAP]
#: ``max_per_worker`` for no per-worker cap (0 is refused: it would keep nothing)
NO_CAP = "none"
#: Worker-name prefix of scripted (simulated) workers, as given by
#: parlai_acute.mephisto_tasks.acute.simulated_workers.PREFIX (kept here: analysis never imports Mephisto).
SIMULATED_PREFIX = "simulated-"


@dataclass
class AnalysisConfig(Settings):
    """Everything that changes the results; recorded in every output."""

    max_per_worker: int | str | None = None  # None: number of (model pair, question) combinations; "none": no cap
    min_reason_chars: int = 3  # 0: no reasons were collected (the rule is off)
    bt_alpha: float = DEFAULT_ALPHA
    min_workers: int = 5  # a matchup judged by fewer distinct workers is flagged
    cap_source: str = ""  # where max_per_worker came from (e.g. the run's stored setting)
    style_control: bool = False  # also rank with reply length and markdown held fixed (needs the replies)

    def __post_init__(self):
        super().__post_init__()
        cap = self.max_per_worker
        if isinstance(cap, str) and cap.strip().lower() == NO_CAP:
            self.max_per_worker = NO_CAP
        elif cap is not None and isinstance(cap, (str, bool, float)):
            raise UserError(f"max_per_worker must be a whole number of at least 1 or {NO_CAP!r} (no cap), got {cap!r}",
                            param="max_per_worker")
        elif cap is not None and cap < 1:  # 0 would keep nothing; no cap is said as "none"
            raise UserError(f"max_per_worker must be at least 1, got {cap}", param="max_per_worker")
        if self.min_reason_chars < 0:
            raise UserError(f"min_reason_chars must be 0 (no reasons were collected) or more, got "
                            f"{self.min_reason_chars}", param="min_reason_chars")
        if not self.bt_alpha >= 0:
            raise UserError(f"bt_alpha must be 0 or more, got {self.bt_alpha}", param="bt_alpha")
        if self.min_workers < 1:
            raise UserError(f"min_workers must be at least 1, got {self.min_workers}", param="min_workers")


@dataclass
class QuestionResult:
    question_key: str
    question: str
    models: list[str]
    matchups: pd.DataFrame
    grid: pd.DataFrame
    ranking: pd.DataFrame | None
    ranking_error: str
    agreement: dict
    side_bias: dict
    min_workers: int = 5
    # with ties in the table (a task that offered them): win, tie and loss rates with intervals
    # (stats.winrates.outcome_rates) and Davidson's tie-aware ranking (stats.davidson) beside the
    # ordinary one, which counts a tie as half a win
    outcomes: pd.DataFrame | None = None
    tie_ranking: pd.DataFrame | None = None
    tie_parameter: dict | None = None
    tie_ranking_error: str = ""
    # with config.style_control: raw and style-controlled strengths and the style coefficients
    style: StyleControl | None = None
    style_error: str = ""

    def warnings(self) -> list[str]:
        """One sentence per matchup whose judgments come from fewer than ``min_workers`` workers."""
        few = self.matchups[self.matchups["few_workers"]] if "few_workers" in self.matchups else self.matchups[:0]
        return [f"{m.model_b} vs {m.model_a}: {m.n} judgment{'s' if m.n != 1 else ''} from only {m.workers} "
                f"worker{'s' if m.workers != 1 else ''} (fewer than {self.min_workers}); judgments by one worker are "
                f"not independent, so this result rests on very few people" for m in few.itertuples(index=False)]


@dataclass
class AnalysisResult(Result):
    """The analysis of a judgments table; ``summary()``, ``meta()``, ``tables()`` and ``warnings()``
    as every protocol's result (:class:`parlai_acute.result.Result`)."""

    protocol: ClassVar[str] = "acute"
    config: AnalysisConfig
    cap: int
    kept: pd.DataFrame
    excluded: pd.DataFrame
    questions: list[QuestionResult] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)  # judges/workers whose verdicts should not be trusted

    def provenance(self) -> dict:
        """The cap applied, per question how the design was read (which facets the marks treat as random),
        what each exclusion rule removed with its setting (so run.json says it too), and the style control."""
        out = {"per_worker_cap": self.cap, "design": {q.question_key: design_note(q.matchups) for q in self.questions},
               "exclusions": self.exclusion_summary()}
        if self.config.style_control:  # the model, how ties count, the coefficients: in run.json and every JSON
            out["style_control"] = {q.question_key: q.style.describe() if q.style is not None else
                                    {"error": q.style_error} for q in self.questions}
        return out

    def warnings(self) -> list[str]:
        """Untrustworthy judges, matchups resting on few workers, and the default cap's drops."""
        return [*self.flags, *(w for q in self.questions for w in q.warnings()), *self.default_warnings()]

    def own_tables(self) -> dict[str, pd.DataFrame]:
        q = self.questions
        wide = pd.concat([grid_table(r.grid, r.models).rename_axis(index="loser", columns=None)
                          .assign(question_key=r.question_key).set_index("question_key", append=True)
                          .reorder_levels(["question_key", "loser"]) for r in q])
        rankings = [r.ranking.assign(question_key=r.question_key) for r in q if r.ranking is not None]
        return {"judgments": self.kept, "excluded": self.excluded,
                "pairs": pd.concat([r.matchups.assign(question_key=r.question_key) for r in q]),
                "winrate_grid": wide.reset_index(), "ranking": pd.concat(rankings) if rankings else pd.DataFrame(),
                "agreement": pd.DataFrame([{"question_key": r.question_key, **r.agreement} for r in q]),
                "workers": self.workers(), "reasons": self.reasons(), **self.tie_tables(), **self.style_tables()}

    def style_tables(self) -> dict[str, pd.DataFrame]:
        """With style control: raw and controlled strengths side by side, and the style coefficients."""
        if not self.config.style_control:
            return {}
        q = [r for r in self.questions if r.style is not None]
        if not q:
            return {"ranking_style": pd.DataFrame(), "style_coefficients": pd.DataFrame()}
        return {"ranking_style": pd.concat([r.style.ranking.assign(question_key=r.question_key) for r in q]),
                "style_coefficients": pd.concat([r.style.coefficients.assign(question_key=r.question_key)
                                                 for r in q])}

    def tie_tables(self) -> dict[str, pd.DataFrame]:
        """Where the judgments hold ties: each pair's win, tie and loss shares, and Davidson's ranking."""
        q = self.questions
        if not any(r.outcomes is not None for r in q):
            return {}
        ties = [r.tie_ranking.assign(question_key=r.question_key) for r in q if r.tie_ranking is not None]
        return {"outcomes": pd.concat([r.outcomes.assign(question_key=r.question_key) for r in q
                                       if r.outcomes is not None]),
                "ranking_ties": pd.concat(ties) if ties else pd.DataFrame()}

    def default_warnings(self) -> list[str]:
        """What a notebook user is warned of: the paper's default cap dropping judgments they may
        have meant to keep (the command line prints the cap in its summary instead)."""
        if self.config.cap_source:
            return []
        over = int((self.excluded["excluded_because"] == OVER_CAP).sum()) if len(self.excluded) else 0
        total = len(self.kept) + len(self.excluded)
        return [f"the default per-worker cap of {self.cap} judgment(s) (one per model pair and question) excluded "
                f"{over} of {total} judgments; pass max_per_worker=N to choose the cap ('none': no cap)"] if over else []

    def simulated_workers(self) -> tuple[int, int]:
        """(simulated workers, all workers) among the judgments, kept or excluded."""
        workers = set(self.kept["worker"]).union(self.excluded["worker"])
        return sum(str(w).startswith(SIMULATED_PREFIX) for w in workers), len(workers)

    def exclusion_summary(self) -> list[dict]:
        """Per rule: judgments and workers it removed, and its ``setting`` (a rule switched off says so)."""
        c = self.config
        settings = {
            FAILED_ONBOARDING: "every judgment of a worker who got an onboarding pair wrong",
            ONBOARDING: "onboarding pairs are checks, not evidence",
            NO_REASON: ("off, min_reason_chars=0: no reasons were collected" if c.min_reason_chars == 0 else
                        f"workers none of whose reasons has {c.min_reason_chars} letters or digits "
                        f"(min_reason_chars; 0 when no reasons were collected)"),
            SAME_MODEL: "A/A pairs, kept aside as checks of the interface",
            OVER_CAP: (f"off, max_per_worker={NO_CAP!r}: no cap" if self.cap == NO_CAP else
                       f"more than {self.cap} per worker ({c.cap_source or 'default: model pairs x questions'})")}
        return [{**row, "setting": settings[row["reason"]]} for row in exclusions(self.excluded, RULES, "judgments")]

    def aa_checks(self) -> pd.DataFrame:
        """A/A comparisons (one model on both sides, excluded from the grid): how often the
        left side won, per question and model, with a binomial test against 1/2."""
        same = self.excluded[self.excluded["excluded_because"] == SAME_MODEL]
        rows = [{"question_key": key, "model": model, **side_bias(group)}
                for (key, model), group in same.groupby(["question_key", "model_left"], sort=True)]
        return pd.DataFrame(rows, columns=["question_key", "model", "n", "left_wins", "left_rate", "pvalue"])

    def workers(self) -> pd.DataFrame:
        """Judgments per worker: kept, and excluded by rule."""
        every = pd.concat([self.kept.assign(excluded_because="kept"), self.excluded], ignore_index=True)
        table = every.groupby(["worker", "excluded_because"]).size().unstack(fill_value=0)
        table = table.reindex(columns=["kept"] + RULES, fill_value=0)
        table.insert(0, "total", table.sum(axis=1))
        return table.reset_index().sort_values(["kept", "worker"], ascending=[False, True]).reset_index(drop=True)

    def reasons(self) -> pd.DataFrame:
        """Kept judgments' reasons, grouped by question and matchup."""
        df = self.kept
        a = np.minimum(df["model_left"], df["model_right"])
        b = np.maximum(df["model_left"], df["model_right"])
        table = pd.DataFrame({"question_key": df["question_key"], "matchup": a + " vs " + b,
                              "winner": df["winner"], "loser": df["loser"], "worker": df["worker"],
                              "reason": df["reason"]})
        return table.sort_values(["question_key", "matchup", "winner"], kind="stable").reset_index(drop=True)


def trivial_reason(reasons: pd.Series, min_chars: int) -> pd.Series:
    """True where a reason has fewer than ``min_chars`` letters or digits."""
    values = reasons.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=False) != "string":  # already all text: no copy
        values = reasons.fillna("").astype(str).to_numpy(dtype=object)
    codes, unique = pd.factorize(values)  # reasons repeat a lot ("more engaging"): test each text once
    verdict = np.array([len(_WORD_CHAR.findall(text)) < min_chars for text in unique], dtype=bool)
    return pd.Series(verdict[codes], index=reasons.index)


def default_cap(df: pd.DataFrame) -> int:
    """The paper's cap: one judgment per (model pair, question) per worker."""
    real = df[df["model_left"] != df["model_right"]]
    return _pairs_and_questions(*(real[name].to_numpy() for name in ("model_left", "model_right", "question_key")))


def _pairs_and_questions(left: np.ndarray, right: np.ndarray, questions: np.ndarray) -> int:
    """:func:`default_cap` of judgments whose two models differ, given as their columns' arrays."""
    if not len(left):
        return 1
    a, models = pd.factorize(left)
    b = pd.Index(models).get_indexer(right)
    if (b < 0).any():  # a model only ever shown on the right
        both, models = pd.factorize(np.concatenate([left, right]))
        a, b = both[: len(left)], both[len(left):]
    a, b = a.astype(np.int64), b.astype(np.int64)
    question = pd.factorize(questions)[0].astype(np.int64)
    k = max(len(models), 1)
    keys = (np.minimum(a, b) * k + np.maximum(a, b)) * (question.max() + 1) + question
    return max(1, int(len(pd.unique(keys))))  # a hash pass, not a sort of a million keys


def apply_exclusions(df: pd.DataFrame, config: AnalysisConfig) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Split judgments into kept and excluded (with ``excluded_because``); returns the cap too.

    Rules are numbered in :data:`RULES` order; each judgment keeps the first that applies
    (0: kept). Workers are integer codes throughout, so a million judgments take a second."""
    if not df.index.equals(pd.RangeIndex(len(df))):
        df = df.reset_index(drop=True)
    rule = np.zeros(len(df), dtype=np.int8)
    worker, workers = pd.factorize(df["worker"])
    per_worker = len(workers)

    def mark(mask, name):
        rule[np.asarray(mask) & (rule == 0)] = RULES.index(name) + 1

    def any_per_worker(mask) -> np.ndarray:
        return np.bincount(worker[np.asarray(mask)], minlength=per_worker) > 0

    onboarding = df["is_onboarding"].astype(bool).to_numpy()
    wrong = np.zeros(len(df), dtype=bool)
    if onboarding.any():  # only onboarding judgments can be wrong
        rows = np.flatnonzero(onboarding)
        wrong[rows] = (df["onboarding_correct"].iloc[rows] == False).to_numpy()  # noqa: E712
    failed = any_per_worker(wrong)
    mark(failed[worker], FAILED_ONBOARDING)
    mark(onboarding, ONBOARDING)
    trivial = trivial_reason(df["reason"], config.min_reason_chars).to_numpy(dtype=bool)
    candidate = rule == 0
    said_something = any_per_worker(candidate & ~trivial)
    silent = any_per_worker(candidate) & ~said_something
    mark(silent[worker], NO_REASON)
    mark((df["model_left"] == df["model_right"]).to_numpy(), SAME_MODEL)
    remaining = np.flatnonzero(rule == 0)
    if config.max_per_worker == NO_CAP:
        kept, excluded = _split(df, rule)
        return kept, excluded, NO_CAP
    cap = config.max_per_worker or _pairs_and_questions(  # the remaining judgments' two models differ
        *(df[name].to_numpy()[remaining] for name in ("model_left", "model_right", "question_key")))
    if np.bincount(worker[remaining], minlength=per_worker).max(initial=0) <= cap:  # no worker over it: no sort
        kept, excluded = _split(df, rule)
        return kept, excluded, cap
    # earliest first (stable; no timestamp last), then the rank of each judgment within its worker
    stamp = pd.to_numeric(df["timestamp"].iloc[remaining], errors="coerce").to_numpy(dtype=float)
    order = remaining[np.lexsort((np.arange(len(remaining)), np.isnan(stamp), np.nan_to_num(stamp),
                                  worker[remaining]))]
    group = worker[order]
    first = np.r_[0, np.flatnonzero(group[1:] != group[:-1]) + 1]
    rank = np.arange(len(order)) - np.repeat(first, np.diff(np.r_[first, len(order)]))
    rule[order[rank >= cap]] = RULES.index(OVER_CAP) + 1
    kept, excluded = _split(df, rule)
    return kept, excluded, cap


def _split(df: pd.DataFrame, rule: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept, excluded with ``excluded_because``) of ``df`` by each row's rule number (0: kept). When
    nothing is excluded the kept table shares the columns of ``df`` (a shallow copy: a million
    judgments are not copied for nothing; the analysis only reads them)."""
    keep = rule == 0
    names = np.array([""] + RULES, dtype=object)
    if keep.all():
        return df.copy(deep=False), df.iloc[:0].assign(excluded_because=names[rule[:0]])
    kept, excluded = df.iloc[np.flatnonzero(keep)], df.iloc[np.flatnonzero(~keep)]
    kept.index, excluded.index = pd.RangeIndex(len(kept)), pd.RangeIndex(len(excluded))  # no second copy
    return kept, excluded.assign(excluded_because=names[rule[~keep]])


def analyze_question(df: pd.DataFrame, config: AnalysisConfig, key: str, ties: bool = False,
                     replies: pd.DataFrame | None = None) -> QuestionResult:
    """One question's statistics; ``ties``: the table holds ties (in any question), so the win,
    tie and loss rates and Davidson's ranking are reported too; ``replies`` (with
    ``config.style_control``): the replies' style, for the style-controlled ranking."""
    models = models_of(df)
    ranking, error = None, ""
    try:
        ranking = bradley_terry(df, bootstrap=config.bootstrap, seed=config.seed, alpha=config.bt_alpha,
                                confidence=config.confidence, models=models, cluster="worker",
                                min_clusters=config.min_workers, conversations=("dialogue_left", "dialogue_right"))
    except UserError as exc:  # e.g. disconnected comparisons: the grid is still meaningful
        error = str(exc)
    texts = [t for t in df["question"].unique() if t]
    table = matchups(df, models, confidence=config.confidence, cluster="worker", min_clusters=config.min_workers,
                     alpha=config.alpha, seed=config.seed)
    result = QuestionResult(question_key=key, question=texts[0] if texts else "", models=models,
                            matchups=table, grid=grid_from_matchups(table), ranking=ranking,
                            ranking_error=error, side_bias=side_bias(df), min_workers=config.min_workers,
                            agreement=agreement(df, resamples=config.bootstrap, seed=config.seed,
                                                confidence=config.confidence))
    if ties:
        result.outcomes = outcome_rates(df, models, confidence=config.confidence, min_clusters=config.min_workers,
                                        resamples=config.bootstrap, seed=config.seed)
        try:
            result.tie_ranking, result.tie_parameter = davidson(
                df, bootstrap=config.bootstrap, seed=config.seed, alpha=config.bt_alpha, confidence=config.confidence,
                models=models, min_clusters=config.min_workers)
        except UserError as exc:  # e.g. no tie under this question
            result.tie_ranking_error = str(exc)
    if config.style_control:
        from parlai_acute.acute.replies import style_sides

        left, right = style_sides(df, replies)  # a conversation without its replies: the user's to fix
        try:
            result.style = style_control(df, left, right, bootstrap=config.bootstrap, seed=config.seed,
                                         alpha=config.bt_alpha, confidence=config.confidence, models=models,
                                         min_clusters=config.min_workers)
        except UserError as exc:  # e.g. no style feature varies under this question
            result.style_error = str(exc)
    return result


def judge_flags(df: pd.DataFrame, judges: list[dict] | None = None, alpha: float = 0.05) -> list[str]:
    """Sentences flagging whose verdicts the results rest on and should not be trusted.

    ``judges``: summaries of model-judge runs (``judge acute``'s summary.json): a judge that
    failed onboarding is flagged. From the judgments themselves: a worker or judge whose
    chosen side departs from 1/2 (exact binomial, Holm across workers, at ``alpha``) --
    always the left/first conversation, say -- follows the position, not the conversations.
    """
    flags = []
    for summary in judges or []:
        onboarding = summary.get("onboarding") or {}
        if onboarding.get("gold_items") and not onboarding.get("passed"):
            flags.append(f"{summary.get('judge', 'the judge')} FAILED onboarding ({onboarding.get('orders_correct')}/"
                         f"{onboarding.get('orders')} gold orders correct, {onboarding.get('items_correct_every_order')}"
                         f"/{onboarding['gold_items']} gold pairs right in every order): do not trust its verdicts")
    real = ~df["is_onboarding"].astype(bool).to_numpy() & ~tied(df)  # a tie picks no side
    if real.any():
        from scipy import stats

        worker, names = pd.factorize(df["worker"])
        k = np.bincount(worker[real], weights=(df["winner_side"] == "left").to_numpy()[real], minlength=len(names))
        n = np.bincount(worker[real], minlength=len(names)).astype(float)
        left = pd.DataFrame({"sum": k, "size": n}, index=names)[n > 0]
        k, n = left["sum"].to_numpy().astype(int), left["size"].to_numpy().astype(int)
        p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(k, n - k), n, 0.5))
        p_holm = holm(p)
        for worker, wins, total, q in zip(left.index, k, n, p_holm):
            if q < alpha:
                side = "left (first shown)" if wins * 2 > total else "right (second shown)"
                flags.append(f"{worker} chose the {side} conversation in {max(wins, total - wins)} of {total} "
                             f"judgments (exact binomial against 1/2, Holm across workers, p = {q:.2g}): its verdicts "
                             f"follow the position, not the conversations")
    for summary in judges or []:  # a judge whose flipping verdicts became ties shows its bias in every order only
        name = str(summary.get("judge", "the judge"))
        if any(f.startswith(f"{name} chose the") for f in flags):
            continue
        for bias in summary.get("position_bias") or []:
            n, picks, p = bias.get("n") or 0, bias.get("picks") or [], bias.get("pvalue")
            if bias.get("positions") == 2 and n and p is not None and p < alpha:
                first = picks[0] * 2 > n
                flags.append(f"{name} chose the {'left (first shown)' if first else 'right (second shown)'} "
                             f"conversation in {max(picks)} of {n} judgments in all the orders it was shown (exact "
                             f"binomial against 1/2, p = {p:.2g}): its verdicts follow the position, not the "
                             f"conversations")
    return flags


def analyze(df: pd.DataFrame, config: AnalysisConfig | None = None,
            judges: list[dict] | None = None, replies: pd.DataFrame | None = None) -> AnalysisResult:
    """Exclusions, then win-rate grid, Holm-corrected tests, Bradley-Terry and agreement per
    question; ``judges``: summaries of model-judge runs whose verdicts these are (flagged
    when they failed onboarding, see :func:`judge_flags`); ``replies``: the replies' style
    (:mod:`parlai_acute.acute.replies`), needed with ``config.style_control``."""
    config = config or AnalysisConfig()
    if config.style_control and replies is None:
        raise UserError("style control needs the replies' text or style counts: pass replies (a pairings file's "
                        "conversations, acute.replies.replies_from_pairings, or Arena's, acute.imports.arena_replies)",
                        param="replies")
    if df.empty:
        raise UserError("there are no judgments to analyze; check the run has finished units")
    kept, excluded, cap = apply_exclusions(df, config)
    if kept.empty:
        counts = excluded["excluded_because"].value_counts().to_dict()
        raise UserError(f"all {len(df)} judgments were excluded ({counts}); inspect the workers or relax "
                        f"max_per_worker ({NO_CAP!r}: no cap) or min_reason_chars (0: no reasons were collected)",
                        param=("max_per_worker", "min_reason_chars"))
    result = AnalysisResult(config=config, cap=cap, kept=kept, excluded=excluded,
                            flags=judge_flags(df, judges, config.alpha))
    keys = sorted(kept["question_key"].unique())
    ties = bool(tied(kept).any())
    for key in keys:  # one question (the usual case): no copy of the table
        part = kept if len(keys) == 1 else kept[kept["question_key"] == key]
        result.questions.append(analyze_question(part, config, key, ties, replies))
    return result


def _records(table: pd.DataFrame) -> list[dict]:
    """JSON-ready rows (NaN -> None, numpy -> Python)."""
    return json_ready(table.astype(object).to_dict(orient="records"))


def write_outputs(result: AnalysisResult, outdir: str | Path, model_configs: dict | None = None,
                  report: bool = True) -> dict[str, Path]:
    """Write the tables (CSV: summary.csv, judgments.csv, pairs.csv, winrate_grid.csv, ...), results
    (strict JSON, with provenance) and, with ``report``, the report (HTML, with its figures as SVG/PDF
    and tables as LaTeX/Markdown beside it) into ``outdir``. ``model_configs`` (model name -> its
    configuration: agent, options, decoding) goes into the report's configuration block. All or
    none of them (:func:`parlai_acute.files.output_dir`)."""
    from parlai_acute.acute.report import build_report

    meta, q = result.meta(), result.questions
    files = {
        "exclusions.json": {**meta, "total": int(len(result.kept) + len(result.excluded)), "kept": int(len(result.kept)),
                            "excluded": result.exclusion_summary(), "aa_checks": _records(result.aa_checks())},
        "ranking.json": {**meta, "questions": [{"question_key": r.question_key, "ranking": None if r.ranking is None
                                                else _records(r.ranking), "error": r.ranking_error} for r in q]}}
    if any(r.outcomes is not None for r in q):  # ties: Davidson's ranking beside the ordinary one
        files["ranking_ties.json"] = {**meta, "questions": [
            {"question_key": r.question_key, "ranking": None if r.tie_ranking is None else _records(r.tie_ranking),
             "tie_parameter": r.tie_parameter, "error": r.tie_ranking_error} for r in q]}
    results = {"warnings": result.warnings(), "questions": [
        {"question_key": r.question_key, "question": r.question, "models": r.models, "matchups": _records(r.matchups),
         "grid": _records(r.grid), "side_bias": r.side_bias, "agreement": r.agreement,
         "design": design_note(r.matchups), "warnings": r.warnings()} for r in q]}
    return write_result(result, outdir, files=files, results=results,
                        report=(lambda out: build_report(result, model_configs).write(out)) if report else None)
