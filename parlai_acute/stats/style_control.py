"""Style control: the Bradley-Terry comparison with reply length and markdown held fixed.

Judges prefer longer and more formatted replies whatever their content, so a model that writes
more wins more: its Bradley-Terry strength mixes what it says with how much and in what shape.
Chatbot Arena's "style control" (LMSYS, 2024; ``construct_style_matrices`` in FastChat's
``elo_analysis.py``) separates the two with a logistic Bradley-Terry model with style covariates::

    P(left beats right) = sigmoid(theta_left - theta_right + beta . z)

where, for each style feature f (reply tokens, markdown headers, list items, bold spans),
``z_f`` is the normalised difference ``(f_left - f_right) / (f_left + f_right + 1)`` standardised
over the judgments (minus its mean, over its standard deviation), as Arena does. ``beta_f`` is the
log-odds of winning per standard deviation of that difference; ``theta`` are the strengths with
style held equal (mean zero, the ordinary ranking's scale). The raw strengths are the same model
without ``z``, fitted to the same judgments by the same code, so the two columns differ only by
the covariates.

Ties (a tie or "both bad") count as half a win for each side: the response is 1/2 (a
quasi-likelihood, the same estimating equations as Arena's duplicating each battle and a tie as
one win each), as the ordinary ranking counts them. Davidson's tie model is not used here.

Fit: penalised maximum likelihood, ``alpha * sum(theta**2)`` on the strengths as the ordinary
fit (``beta`` unpenalised), by Newton's method (IRLS) on the judgments; its gradient and Hessian
are bincounts, so a million judgments cost a few passes. Intervals follow
:func:`parlai_acute.stats.bradley_terry.bradley_terry` with a cluster: a percentile bootstrap of
whole workers (each resample refitted, warm-started), or from
:data:`~parlai_acute.stats.bradley_terry.SANDWICH_FROM` workers on the cluster-robust sandwich (t
on G - 1 df); with fewer than ``min_clusters`` workers, or no resamples, no interval and a note
that says why. A feature that does not vary over the judgments (no markdown anywhere) has no
coefficient: it is dropped and the note says so.

Knows no protocol: it reads a judgments table's ``model_left``, ``model_right``, ``winner`` and
``outcome`` and two feature tables aligned with it.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from parlai_acute.errors import UserError
from parlai_acute.stats.bradley_terry import DEFAULT_ALPHA, connected, worker_interval
from parlai_acute.stats.intervals import no_percentile_interval, percentile_interval
from parlai_acute.stats.resample import resample_weights
from parlai_acute.stats.winrates import tied

__all__ = ["MODEL", "TIES", "FEATURES", "reply_style", "normalised_differences", "fit_style", "StyleControl",
           "style_control"]

MODEL = ("logistic Bradley-Terry with style covariates (Chatbot Arena's style control): P(left beats right) = "
         "sigmoid(theta_left - theta_right + beta . z), z = standardised (f_left - f_right) / (f_left + f_right + 1) "
         "per style feature; penalised ML by Newton (IRLS)")
TIES = "a tie or 'both bad' counts as half a win for each side (response 1/2)"
#: feature -> what it counts (columns of a replies table; a missing column is not used)
FEATURES = {
    "tokens": "reply length in tokens (words and runs of punctuation, code blocks included)",
    "headers": "markdown headers (lines starting with 1-6 '#' and a space), outside code blocks",
    "lists": "markdown list items (lines starting with '-', '*', '+' or '1.'), outside code blocks",
    "bold": "markdown bold spans (**...** or __...__), outside code blocks",
}
_TOKEN = re.compile(r"\w+|[^\w\s]+")
_CODE = re.compile(r"```[^`]*```", re.DOTALL)
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:\d+\.|[-*+])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def reply_style(text: str) -> dict[str, int]:
    """The style features of one reply (:data:`FEATURES`); Arena's markdown patterns, code blocks
    removed first; tokens are words and runs of punctuation (Arena counts tiktoken tokens: the
    normalised difference makes the two close, not equal)."""
    text = text or ""
    prose = _CODE.sub("", text)
    return {"tokens": len(_TOKEN.findall(text)), "headers": len(_HEADER.findall(prose)),
            "lists": len(_LIST.findall(prose)), "bold": len(_BOLD.findall(prose))}


def normalised_differences(left: pd.DataFrame, right: pd.DataFrame) -> tuple[np.ndarray, list[str], dict[str, str]]:
    """``(z, used, dropped)``: the standardised normalised differences of the features both tables
    hold (in :data:`FEATURES` order), the features used, and per dropped feature why."""
    used, dropped, columns = [], {}, []
    for name in FEATURES:
        if name not in left.columns or name not in right.columns:
            continue
        a = pd.to_numeric(left[name], errors="coerce").to_numpy(float)
        b = pd.to_numeric(right[name], errors="coerce").to_numpy(float)
        if not (np.isfinite(a).all() and np.isfinite(b).all()) or (a < 0).any() or (b < 0).any():
            raise UserError(f"style feature {name!r} must be a count (0 or more) for every reply in left and right",
                            param=("left", "right"))
        d = (a - b) / (a + b + 1)
        sd = d.std()
        if not sd > 1e-12:
            dropped[name] = "the same difference in every judgment (e.g. none has any), so it has no coefficient"
            continue
        used.append(name)
        columns.append((d - d.mean()) / sd)
    z = np.column_stack(columns) if columns else np.zeros((len(left), 0))
    return z, used, dropped


def _parts(theta, beta, first, second, z, y, c, alpha, k):
    """Gradient and Hessian (negative: information) of the penalised log-likelihood."""
    eta = theta[first] - theta[second] + z @ beta
    p = 1.0 / (1.0 + np.exp(-eta))
    r = c * (y - p)
    w = c * p * (1 - p)
    f = z.shape[1]
    grad = np.empty(k + f)
    grad[:k] = np.bincount(first, r, k) - np.bincount(second, r, k) - 2 * alpha * theta
    grad[k:] = z.T @ r
    info = np.empty((k + f, k + f))
    pair = np.bincount(first * k + second, w, k * k).reshape(k, k)
    pair = pair + pair.T
    info[:k, :k] = np.diag(pair.sum(axis=1)) - pair + 2 * alpha * np.eye(k)
    wz = w[:, None] * z
    cross = np.stack([np.bincount(first, wz[:, j], k) - np.bincount(second, wz[:, j], k) for j in range(f)], axis=1) \
        if f else np.zeros((k, 0))
    info[:k, k:] = cross
    info[k:, :k] = cross.T
    info[k:, k:] = z.T @ wz
    return grad, info, r


def fit_style(first: np.ndarray, second: np.ndarray, y: np.ndarray, z: np.ndarray, k: int,
              alpha: float = DEFAULT_ALPHA, weights: np.ndarray | None = None, init: np.ndarray | None = None,
              tol: float = 1e-9, max_iter: int = 100) -> np.ndarray:
    """``(theta (k, mean zero), beta (f))`` stacked: the penalised ML fit of
    ``P(first beats second) = sigmoid(theta[first] - theta[second] + z @ beta)`` to responses ``y``
    in [0, 1] (1/2 a tie), each judgment counted ``weights`` times (a bootstrap)."""
    f = z.shape[1]
    c = np.ones(len(y)) if weights is None else np.asarray(weights, float)
    params = np.zeros(k + f) if init is None else np.array(init, dtype=float)
    fix = np.zeros((k + f, k + f))
    if alpha == 0:  # only differences of strengths are identified: fix their mean at zero
        fix[:k, :k] = 1.0 / k
    for _ in range(max_iter):
        grad, info, _ = _parts(params[:k], params[k:], first, second, z, y, c, alpha, k)
        step = np.linalg.solve(info + fix, grad)
        largest = np.abs(step).max()
        params = params + step * min(1.0, 2.0 / max(largest, 1e-300))
        if largest < tol:
            break
    else:
        warnings.warn("style-controlled Bradley-Terry fit did not converge", RuntimeWarning, stacklevel=2)
    params[:k] -= params[:k].mean()
    return params


def _sandwich(params, first, second, y, z, k, alpha, codes, groups, confidence):
    """Cluster-robust Wald bounds of (theta, beta): information on both sides of the clusters'
    score outer products, G/(G-1), t on G - 1 df (the ordinary ranking's rule)."""
    f = z.shape[1]
    _, info, r = _parts(params[:k], params[k:], first, second, z, y, np.ones(len(y)), alpha, k)
    scores = np.zeros((groups, k + f))
    scores[:, :k] = (np.bincount(codes * k + first, r, groups * k)
                     - np.bincount(codes * k + second, r, groups * k)).reshape(groups, k)
    for j in range(f):
        scores[:, k + j] = np.bincount(codes, r * z[:, j], groups)
    meat = scores.T @ scores * groups / max(groups - 1, 1)
    centre = np.eye(k + f)
    centre[:k, :k] -= 1.0 / k
    bread = centre @ np.linalg.pinv(info)
    se = np.sqrt(np.maximum(np.diag(bread @ meat @ bread.T), 0))
    t = stats.t.ppf(0.5 + confidence / 2, max(groups - 1, 1))
    return params - t * se, params + t * se


@dataclass
class StyleControl:
    """Raw and style-controlled strengths side by side (``ranking``), the style coefficients
    (``coefficients``), and how they were made."""

    ranking: pd.DataFrame
    coefficients: pd.DataFrame
    model: str = MODEL
    ties: str = TIES
    interval: str = ""
    note: str = ""
    dropped: dict = field(default_factory=dict)

    def describe(self) -> dict:
        """What run.json records: the model, the ties, the interval method, the coefficients."""
        return {"model": self.model, "ties": self.ties, "interval": self.interval, "note": self.note,
                "features_dropped": self.dropped, "coefficients": self.coefficients.to_dict(orient="records")}


def _sides(df: pd.DataFrame, models: list[str]):
    left, right = df["model_left"].to_numpy(dtype=object), df["model_right"].to_numpy(dtype=object)
    if (left == right).any():
        raise UserError("style control compares two different models per judgment; drop the judgments with the "
                        "same model on both sides first")
    index = pd.Index(models)
    tie = tied(df)
    y = np.where(tie, 0.5, (df["winner"].to_numpy(dtype=object) == left).astype(float))
    return index.get_indexer(left).astype(np.int64), index.get_indexer(right).astype(np.int64), y


def style_control(df: pd.DataFrame, left: pd.DataFrame, right: pd.DataFrame, bootstrap: int = 1000, seed: int = 0,
                  alpha: float = DEFAULT_ALPHA, confidence: float = 0.95, models: list[str] | None = None,
                  cluster: str = "worker", min_clusters: int = 5) -> StyleControl:
    """Raw and style-controlled Bradley-Terry strengths of the judgments ``df`` (module docstring).

    ``left``/``right``: the style features (columns of :data:`FEATURES`) of the reply shown on
    each side, one row per judgment in ``df``'s order. Returns a :class:`StyleControl`: its
    ``ranking`` has model, raw, raw_low, raw_high, rank_raw, controlled, controlled_low,
    controlled_high, rank_controlled, shift (controlled - raw), n, interval, note; its
    ``coefficients`` feature, description, coefficient (log-odds per sd of the normalised
    difference), coefficient_low, coefficient_high, odds_ratio, sd, interval, note."""
    if alpha < 0:
        raise UserError(f"alpha must be 0 or more, got {alpha}", param="alpha")
    if len(left) != len(df) or len(right) != len(df):
        raise UserError(f"left and right (the style features) must have one row per judgment ({len(df)}), got "
                        f"{len(left)} and {len(right)}", param=("left", "right"))
    models = models or sorted(set(df["model_left"]) | set(df["model_right"]))
    k = len(models)
    if k < 2:
        raise UserError(f"a ranking needs judgments between at least two models, got {models}")
    first, second, y = _sides(df, models)
    adjacency = np.zeros((k, k))
    np.add.at(adjacency, (first, second), 1)
    if not connected(adjacency):
        raise UserError("some models are never compared, directly or through other models, so their strengths "
                        "cannot be put on one scale; add pairings that link the groups")
    z, used, dropped = normalised_differences(left.reset_index(drop=True), right.reset_index(drop=True))
    if not used:
        why = "; ".join(f"{name}: {reason}" for name, reason in dropped.items())
        raise UserError(f"no style feature varies over these judgments (left and right), so there is nothing to "
                        f"control for: {why}", param=("left", "right"))
    none = np.zeros((len(y), 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        raw = fit_style(first, second, y, none, k, alpha)
        full = fit_style(first, second, y, z, k, alpha)
    f = len(used)
    low_raw = high_raw = np.full(k, np.nan)
    low = high = np.full(k + f, np.nan)
    codes, uniques = pd.factorize(df[cluster])
    groups = len(uniques)
    method = ""
    kind, note = worker_interval(bootstrap, groups, min_clusters)
    if kind == "sandwich":
        low_raw, high_raw = (b[:k] for b in _sandwich(raw, first, second, y, none, k, alpha, codes, groups, confidence))
        low, high = _sandwich(full, first, second, y, z, k, alpha, codes, groups, confidence)
        method = f"cluster-robust (sandwich) over {groups} workers, t on G-1 df"
    elif kind == "bootstrap":
        weights = resample_weights(groups, bootstrap, np.random.default_rng(seed))
        raw_samples, samples = np.empty((bootstrap, k)), np.empty((bootstrap, k + f))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for b in range(bootstrap):
                c = weights[b][codes].astype(float)
                raw_samples[b] = fit_style(first, second, y, none, k, alpha, c, init=raw, max_iter=30)
                samples[b] = fit_style(first, second, y, z, k, alpha, c, init=full, max_iter=30)
        low_raw, high_raw = percentile_interval(raw_samples, confidence)
        low, high = percentile_interval(samples, confidence)
        method = f"percentile bootstrap of whole workers ({groups})"
        if not (np.isfinite(low).all() and np.isfinite(low_raw).all()):
            why = sorted({w for w in no_percentile_interval(np.hstack([raw_samples, samples]), confidence) if w})
            note = "no interval over workers: " + "; ".join(why)
            low_raw = high_raw = np.full(k, np.nan)
            low = high = np.full(k + f, np.nan)
            method = ""
    n = np.bincount(first, minlength=k) + np.bincount(second, minlength=k)

    def ranks(theta):
        out = np.empty(k, dtype=int)
        out[np.argsort(-theta, kind="stable")] = np.arange(1, k + 1)
        return out

    ranking = pd.DataFrame({
        "model": models, "raw": raw[:k], "raw_low": low_raw, "raw_high": high_raw, "rank_raw": ranks(raw[:k]),
        "controlled": full[:k], "controlled_low": low[:k], "controlled_high": high[:k],
        "rank_controlled": ranks(full[:k]), "shift": full[:k] - raw[:k], "n": n, "interval": method, "note": note,
    }).sort_values("rank_controlled").reset_index(drop=True)
    sds = {name: float(((lambda a, b: (a - b) / (a + b + 1))(pd.to_numeric(left[name]).to_numpy(float),
                                                                pd.to_numeric(right[name]).to_numpy(float))).std())
           for name in used}
    coefficients = pd.DataFrame({
        "feature": used, "description": [FEATURES[name] for name in used], "coefficient": full[k:],
        "coefficient_low": low[k:], "coefficient_high": high[k:], "odds_ratio": np.exp(full[k:]),
        "sd": [sds[name] for name in used], "interval": method, "note": note})
    return StyleControl(ranking=ranking, coefficients=coefficients, interval=method, note=note, dropped=dropped)
