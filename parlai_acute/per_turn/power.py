"""Sample size for per-turn evaluation designs: turns needed, and what a budget detects.

``delta`` is the smallest win-rate difference worth detecting, as in the paper (0.1):

* **pm-soba**: the better model wins a share 1/2 + delta of the turns. Closed form
  n = (z_{1-alpha/2} + z_{power})^2 * 1/4 / delta^2 -- with the rounded z-values 1.96 and 0.84
  that is the paper's 196 -- and the exact binomial answer (:mod:`parlai_acute.stats.power`).
* **pm-sata**: pick rates ``base_rate`` and ``base_rate + delta``, a tie-win (both picked)
  rate (default: picks independent); the exact McNemar test's power is computed exactly (a
  binomial mixture over the number of discordant turns).
* **mm-soba** (``models`` = k): pick shares 1/k + delta/2 and 1/k - delta/2 for two models,
  1/k for the rest; **mm-sata**: pick rates ``base_rate + delta`` and ``base_rate`` for the
  rest, picks of one turn correlated by ``correlation`` (Gaussian latent). Power = the
  share of seeded simulations in which the analysis' own test (binomial on the turns where
  exactly one of the two was picked / exact McNemar, Holm over all k(k-1)/2 pairs) finds that
  pair; the omnibus test's power (chi-squared / Cochran's Q) is reported beside it.
* **sm**: two models' runs, appropriateness ``base_rate`` and ``base_rate + delta``, Fisher's
  exact test (the analysis' SM comparison), power computed exactly; n is turns per model.

Turns are clustered in dialogues: with m turns per dialogue and intra-dialogue correlation
``icc`` the design effect 1 + (m - 1) icc multiplies the turns needed (Kish). A pilot's
turns table gives both (:func:`pilot_outcomes`, then
:func:`parlai_acute.stats.power.pilot_icc`): the outcome is the one the analysis tests
per turn (per pair of models shown: picked a - picked b; SM: appropriate), so the ICC is
that of the test that will be run over dialogues. However small the ICC, that test needs
``min_clusters(alpha)`` dialogues to give a mark at all, and the plan never goes below it.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from parlai_acute.errors import UserError
from parlai_acute.stats import power as binomial_power
from parlai_acute.stats.multitest import holm
from parlai_acute.stats.winrates import binomial_p_half  # noqa: F401 (re-exported: tests, simulations)

DESIGNS = ("pm-soba", "pm-sata", "mm-soba", "mm-sata", "sm")
SIMULATED = ("mm-soba", "mm-sata")
_N_MAX = 200_000


@dataclass
class Assumptions:
    """Everything the answer depends on; printed and recorded with it."""

    design: str
    delta: float = 0.1
    alpha: float = 0.05
    power: float = 0.8
    models: int = 4
    base_rate: float = 0.5
    tie_win: float | None = None  # pm-sata: P(both picked); None: independent picks
    correlation: float = 0.0  # mm-sata: correlation of the latent pick propensities within a turn
    turns_per_dialogue: int = 1
    icc: float = 0.0
    reps: int = 2000
    seed: int = 0

    def __post_init__(self):
        if self.design not in DESIGNS:
            raise UserError(f"design must be one of {', '.join(DESIGNS)}, got {self.design!r}", param="design")
        if not 0 < self.alpha < 1 or not 0 < self.power < 1:
            raise UserError(f"alpha and power must be strictly between 0 and 1, got {self.alpha} and {self.power}",
                            param=("alpha", "power"))
        if self.delta <= 0:
            raise UserError(f"delta must be a positive win-rate difference such as 0.1, got {self.delta}",
                            param="delta")
        if self.design.startswith("mm") and self.models < 3:
            raise UserError(f"models must be at least 3 for a multi-model design, got {self.models}", param="models")
        if not 0 < self.base_rate < 1:
            raise UserError(f"base_rate must be strictly between 0 and 1, got {self.base_rate}", param="base_rate")
        if self.turns_per_dialogue < 1 or not 0 <= self.icc <= 1:
            raise UserError(f"turns_per_dialogue must be >= 1 and icc between 0 and 1, got {self.turns_per_dialogue} "
                            f"and {self.icc}", param=("turns_per_dialogue", "icc"))
        if not -0.2 < self.correlation < 1:
            raise UserError(f"correlation must be in (-0.2, 1), got {self.correlation}", param="correlation")
        if self.reps < 100:
            raise UserError(f"reps must be at least 100, got {self.reps}", param="reps")
        self.rates()  # checks the rates are probabilities

    def rates(self) -> dict:
        """The per-turn probabilities the design implies (checked)."""
        d, p = self.delta, self.base_rate
        if self.design == "pm-soba":
            out = {"win_rate_better": 0.5 + d}
        elif self.design == "pm-sata":
            high = p + d
            tie = p * high if self.tie_win is None else self.tie_win
            out = {"pick_rate_a": p, "pick_rate_b": high, "tie_win": tie, "a_only": p - tie, "b_only": high - tie,
                   "tie_loss": 1 - p - high + tie}
        elif self.design == "mm-soba":
            k = self.models
            out = {"share_better": 1 / k + d / 2, "share_worse": 1 / k - d / 2, "share_others": 1 / k}
        elif self.design == "mm-sata":
            out = {"pick_rate_better": p + d, "pick_rate_others": p}
        else:
            out = {"rate_a": p, "rate_b": p + d}
        bad = {k: v for k, v in out.items() if not 0 <= v <= 1}
        if bad or any(v == 0 for k, v in out.items() if k in ("a_only", "b_only") and self.tie_win is None):
            raise UserError(f"the assumptions give impossible rates {bad or out}; lower delta or change "
                            f"base_rate or tie_win", param=("delta", "base_rate", "tie_win"))
        return out

    def design_effect(self) -> float:
        return 1 + (self.turns_per_dialogue - 1) * self.icc


def z_closed_form(delta: float, alpha: float = 0.05, power: float = 0.8, rounded: bool = False) -> float:
    """(z_{1-alpha/2} + z_{power})^2 / (2 delta)^2: turns for a PM-SOBA win rate of 1/2 + delta."""
    za, zb = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
    if rounded:
        za, zb = round(za, 2), round(zb, 2)
    return (za + zb) ** 2 / (2 * delta) ** 2


# ---------------------------------------------------------------- power at n turns

def power_pm_sata(n: int, a: Assumptions) -> float:
    """Exact power of the exact McNemar test (binomial on the D discordant turns, D ~ Bin(n, d))."""
    r = a.rates()
    d = r["a_only"] + r["b_only"]
    if d <= 0:
        return 0.0
    conditional = r["b_only"] / d
    curve = binomial_power.power_curve(n, conditional, 0.5, a.alpha) if conditional != 0.5 else None
    if curve is None:
        return 0.0
    return float((stats.binom.pmf(np.arange(n + 1), n, d) * curve).sum())


def simulate_mm_soba(n: int, a: Assumptions) -> dict:
    """Seeded simulation: power to find the delta pair (Holm over all pairs), and the chi-squared's."""
    r = a.rates()
    k = a.models
    shares = np.array([r["share_better"], r["share_worse"]] + [r["share_others"]] * (k - 2))
    counts = np.random.default_rng(a.seed).multinomial(n, shares, size=a.reps)
    pairs = [(0, 1)] + [(i, j) for i in range(k) for j in range(i + 1, k) if (i, j) != (0, 1)]
    p = np.stack([binomial_p_half(counts[:, j], counts[:, i] + counts[:, j]) for i, j in pairs], axis=1)
    expected = n / k
    chi2 = ((counts - expected) ** 2 / expected).sum(axis=1) if n else np.zeros(a.reps)
    return {"power": float((holm(p)[:, 0] <= a.alpha).mean()),
            "omnibus_power": float((stats.chi2.sf(chi2, k - 1) <= a.alpha).mean())}


def simulate_mm_sata(n: int, a: Assumptions, chunk: int = 500) -> dict:
    """Seeded simulation: power of exact McNemar (Holm over all pairs) for the delta pair, and of Cochran's Q."""
    r = a.rates()
    k = a.models
    rates = np.array([r["pick_rate_better"]] + [r["pick_rate_others"]] * (k - 1))
    threshold = stats.norm.ppf(rates)
    rng = np.random.default_rng(a.seed)
    pairs = [(0, 1)] + [(i, j) for i in range(k) for j in range(i + 1, k) if (i, j) != (0, 1)]
    found = omnibus = 0
    rho = a.correlation
    for start in range(0, a.reps, chunk):
        b = min(chunk, a.reps - start)
        shared = rng.standard_normal((b, n, 1))
        latent = math.sqrt(max(rho, 0)) * shared + math.sqrt(1 - max(rho, 0)) * rng.standard_normal((b, n, k))
        picks = latent < threshold
        p = np.empty((b, len(pairs)))
        for col, (i, j) in enumerate(pairs):
            only_i = (picks[:, :, i] & ~picks[:, :, j]).sum(axis=1)
            only_j = (picks[:, :, j] & ~picks[:, :, i]).sum(axis=1)
            p[:, col] = binomial_p_half(only_i, only_i + only_j)
        found += int((holm(p)[:, 0] <= a.alpha).sum())
        column = picks.sum(axis=1).astype(float)
        row = picks.sum(axis=2).astype(float)
        total = column.sum(axis=1)
        denominator = k * total - (row ** 2).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            q = (k - 1) * (k * (column ** 2).sum(axis=1) - total ** 2) / denominator
        omnibus += int((np.where(denominator > 0, stats.chi2.sf(q, k - 1), 1.0) <= a.alpha).sum())
    return {"power": found / a.reps, "omnibus_power": omnibus / a.reps}


def fisher_rejects(n: int, alpha: float) -> np.ndarray:
    """(n+1, n+1) mask: Fisher's exact test (two-sided, as scipy's) rejects k1/n against k2/n.

    For each total s = k1 + k2 the test is hypergeometric in k1; its p-value sums the
    probabilities no larger than the observed one (scipy's relative tolerance 1e-7).
    """
    reject = np.zeros((n + 1, n + 1), dtype=bool)
    k = np.arange(n + 1)
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    log_total = special.gammaln(2 * n + 1) - special.gammaln(np.arange(2 * n + 1) + 1) \
        - special.gammaln(2 * n - np.arange(2 * n + 1) + 1)
    for total in range(2 * n + 1):
        k1 = np.arange(max(0, total - n), min(n, total) + 1)
        pmf = np.exp(log_choose[k1] + log_choose[total - k1] - log_total[total])
        order = np.sort(pmf)
        cum = np.cumsum(order)
        p = cum[np.searchsorted(order, pmf * (1 + 1e-7), side="right") - 1]
        reject[k1, total - k1] = p <= alpha
    return reject


def power_sm(n: int, a: Assumptions) -> float:
    """Exact power of Fisher's exact test between two SM runs of n turns each."""
    r = a.rates()
    k = np.arange(n + 1)
    joint = np.outer(stats.binom.pmf(k, n, r["rate_a"]), stats.binom.pmf(k, n, r["rate_b"]))
    return float(joint[fisher_rejects(n, a.alpha)].sum())


def power_at(n: int, a: Assumptions) -> dict:
    """Power of the design's test with n (effective, independent) turns."""
    if n < 1:
        return {"power": 0.0, "omnibus_power": None}
    if a.design == "pm-soba":
        return {"power": binomial_power.exact_power(n, 0.5 + a.delta, 0.5, a.alpha), "omnibus_power": None}
    if a.design == "pm-sata":
        return {"power": power_pm_sata(n, a), "omnibus_power": None}
    if a.design == "sm":
        return {"power": power_sm(n, a), "omnibus_power": None}
    return {"mm-soba": simulate_mm_soba, "mm-sata": simulate_mm_sata}[a.design](n, a)


def required_n(a: Assumptions) -> dict:
    """Smallest n (effective turns; SM: per model) whose power reaches the target.

    Exact designs: the smallest n from which power stays above the target (pm-soba, as
    :func:`parlai_acute.stats.power.required_n_exact`) or the first n reaching it (pm-sata).
    Simulated designs: bisection on n with the same seed at every n.
    """
    if a.design == "pm-soba":
        res = binomial_power.required_n_exact(0.5 + a.delta, 0.5, a.alpha, a.power)
        return {"n": res["n"], "n_first": res["n_first"], "power_at_n": res["power_at_n"], "omnibus_power": None}
    low, high = 1, 16
    while power_at(high, a)["power"] < a.power:
        low, high = high, high * 2
        if high > _N_MAX:
            raise UserError(f"more than {_N_MAX} turns would be needed under these assumptions; give a larger delta",
                            param="delta")
    while high - low > 1:
        mid = (low + high) // 2
        if power_at(mid, a)["power"] >= a.power:
            high = mid
        else:
            low = mid
    at = power_at(high, a)
    return {"n": high, "n_first": None, "power_at_n": at["power"], "omnibus_power": at["omnibus_power"]}


def detectable_delta(budget: int, a: Assumptions) -> float:
    """Smallest delta the design detects with ``budget`` effective turns at the target power."""
    if a.design == "pm-soba":
        return binomial_power.detectable_delta_exact(budget, 0.5, a.alpha, a.power)

    def gap(delta: float) -> float:
        return power_at(budget, dataclasses.replace(a, delta=delta))["power"] - a.power

    top = _largest_delta(a)
    if gap(top) < 0:
        raise UserError(f"{budget} turns cannot reach power {a.power} for any difference under these assumptions; "
                        f"raise the budget")
    return float(optimize.brentq(gap, 1e-4, top, xtol=1e-3)) if a.design in SIMULATED else \
        float(optimize.brentq(gap, 1e-4, top, xtol=1e-5))


def _largest_delta(a: Assumptions) -> float:
    """Largest delta whose rates are still probabilities (the search stays inside it)."""
    if a.design == "mm-soba":
        return 2 / a.models * 0.999
    if a.design == "pm-sata" and a.tie_win is not None:
        # both picked tie_win of the time: neither picked is 1 - p - (p + delta) + tie_win >= 0
        return min(1 - a.base_rate, 1 - 2 * a.base_rate + a.tie_win) * 0.999
    return (1 - a.base_rate) * 0.999


def pilot_facets(turns):
    """A pilot's turns table as one row per judged unit: ``value`` (for every pair of models shown
    in a turn, picked(a) - picked(b), centred within the pair and setting -- a pair's overall
    difference is the effect, not clustering; SM: appropriate or not, centred per model), ``key``
    (the pair, or ``sm|model``), ``setting``, ``dialogue`` and ``worker``. Incomplete turns are left
    out, as the analyses do."""
    import pandas as pd

    df = turns[~turns["incomplete"].astype(bool)]
    if df.empty:
        raise UserError("the pilot has no complete turns; give the turns table of a finished pilot")
    rows = []
    for (setting, dialogue, turn), group in df.groupby(["setting", "dialogue", "turn"], sort=False):
        picked = dict(zip(group["model"], group["picked"].astype(float)))
        worker = str(group["worker"].iloc[0])
        names = sorted(picked)
        if setting == "sm" or len(names) == 1:
            rows += [(f"sm|{m}", "sm", dialogue, worker, picked[m]) for m in names]
            continue
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                rows.append((f"{a}|{b}", setting, dialogue, worker, picked[a] - picked[b]))
    table = pd.DataFrame(rows, columns=["key", "setting", "dialogue", "worker", "value"])
    table["value"] = table["value"] - table.groupby(["setting", "key"])["value"].transform("mean")
    return table


def pilot_outcomes(turns) -> tuple[np.ndarray, np.ndarray]:
    """(outcome per judged unit, its dialogue) from a pilot's turns table (:func:`pilot_facets`):
    what the one-facet plan's ICC is taken over."""
    table = pilot_facets(turns)
    return table["value"].to_numpy(float), table["dialogue"].to_numpy(dtype=object)


#: Dialogues per worker the nested plan is printed for.
DIALOGUES_PER_WORKER = (1, 2, 4, 8)

#: Why each design's nested plan has the shape it has (printed and recorded with the plan).
NESTED_TEST = {
    "pm-soba": "sign-flip test over workers of picked(A) - picked(B) (+1 / -1: the mean is twice delta)",
    "pm-sata": "sign-flip test over workers of picked(A) - picked(B) (+1 / 0 / -1: the mean is delta)",
    "mm-soba": "sign-flip test over workers of each pair's picked(a) - picked(b) (mean delta), Holm over the "
               "k(k-1)/2 pairs: planned at alpha / pairs, the level of Holm's first step",
    "mm-sata": "sign-flip test over workers of each pair's picked(a) - picked(b) (mean delta), Holm over the "
               "k(k-1)/2 pairs: planned at alpha / pairs, the level of Holm's first step",
    "sm": "permutation test of whole workers between two models' runs (each worker's dialogues of one model "
          "form a cluster): workers per model, the variance of a difference of two means",
}


def nested_table(turns, a: Assumptions, dialogues_per_worker=DIALOGUES_PER_WORKER) -> dict | None:
    """Workers (and dialogues per worker) a design needs when its workers do several dialogues:
    dialogues are nested in workers and the analysis tests over workers, so the plan rests on the
    pilot's worker, dialogue and turn variance components (:func:`parlai_acute.stats.power.
    nested_components`) of the outcome the design's test uses, per pair of models (MM: their
    mean over pairs) and only from the pilot's turns of the same setting (PM, MM, SM). None when
    no pilot worker did more than one dialogue of that setting (or the pilot has none of it): the
    pilot then cannot tell a worker's share from a dialogue's, and the design-effect plan over
    dialogues is the plan. :data:`NESTED_TEST` says per design which test, which
    scale and which level the plan is for."""
    from parlai_acute.stats.power import nested_components, nested_plan

    setting = a.design.split("-")[0]
    facets = pilot_facets(turns)
    facets = facets[facets["setting"] == setting]
    if facets.empty or not (facets.groupby("worker")["dialogue"].nunique() > 1).any():
        return None
    parts, weights = [], []
    for _, pair in facets.groupby("key"):
        if len(pair) >= 3:
            parts.append(nested_components(pair["value"].to_numpy(float), pair["worker"].astype(str).to_numpy(),
                                           pair["dialogue"].astype(str).to_numpy()))
            weights.append(len(pair))
    if not parts:
        return None
    w = np.asarray(weights, float) / sum(weights)
    comp = {k: float(sum(wi * part[k] for wi, part in zip(w, parts))) for k in ("total", "outer", "inner", "residual")}
    comp.update(outers=int(facets["worker"].nunique()), inners=int(facets["dialogue"].nunique()), pairs=len(parts))
    scale = 2 * a.delta if a.design == "pm-soba" else a.delta
    pairs = a.models * (a.models - 1) // 2 if setting == "mm" else 1
    plan = nested_plan(scale, comp, list(dialogues_per_worker), a.turns_per_dialogue, a.alpha / pairs, a.power,
                       two_sample=setting == "sm")
    return {"components": comp, "test": NESTED_TEST[a.design], "alpha_planned": a.alpha / pairs,
            "per": "model" if setting == "sm" else "design", **plan}


def plan(a: Assumptions, budget: int | None = None) -> dict:
    """The answer with its assumptions: effective turns, with clustering, dialogues; or a budget's power."""
    de = a.design_effect()
    out = {"assumptions": dataclasses.asdict(a), "rates": a.rates(), "design_effect": de,
           "per": "model" if a.design == "sm" else "design"}
    if a.design == "pm-soba":
        out["closed_form"] = {"rounded_z": z_closed_form(a.delta, a.alpha, a.power, rounded=True),
                              "exact_z": z_closed_form(a.delta, a.alpha, a.power)}
    if budget is None:
        from parlai_acute.stats.inference import min_clusters, min_clusters_two_sample

        res = required_n(a)
        clustered = math.ceil(res["n"] * de - 1e-9)
        floor = math.ceil(min_clusters_two_sample(a.alpha) / 2) if a.design == "sm" else min_clusters(a.alpha)
        dialogues = math.ceil(clustered / a.turns_per_dialogue)
        if dialogues < floor:  # raised to what the test over dialogues needs to give a mark at all
            dialogues, clustered = floor, floor * a.turns_per_dialogue
        out.update(res, turns=clustered, dialogues=dialogues, min_dialogues=floor)
    else:
        if budget < 1:
            raise UserError(f"budget must be a positive number of turns, got {budget}", param="budget")
        effective = int(budget / de)
        out.update(budget=budget, effective_turns=effective, **power_at(effective, a),
                   detectable_delta=detectable_delta(effective, a) if effective > 0 else None)
    if a.design in SIMULATED:
        p = out.get("power_at_n", out.get("power"))
        out["monte_carlo_se"] = math.sqrt(p * (1 - p) / a.reps) if p is not None else None
    return out
