"""Bayesian calibration of annotator bias in ratings (Kulikov et al. 2018, ConvAI2's leaderboard).

Model: a rating ``y`` that annotator ``a`` gives model ``m`` is

    y = q_m + b_a + e,    b_a ~ N(0, sigma_b^2),   e ~ N(0, sigma_e^2),   flat prior on q_m.

A harsh annotator (negative ``b_a``) who happened to rate mostly the good model drags its
raw mean down; the calibrated ``q_m`` removes that, because the same annotator's other
ratings reveal the harshness.

The posterior is Gaussian, so no sampler is needed: with lambda = sigma_e^2 / sigma_b^2 the
posterior mean of (q, b) solves the ridge system ``(X'X + P) theta = X'y``, where X holds
the (model, annotator) indicators and P puts lambda on the annotator coefficients only, and
the posterior covariance is ``sigma_e^2 (X'X + P)^-1``. The annotator block of X'X + P is
diagonal (``n_a + lambda``), so eliminating it (a Schur complement, with the model x
annotator count matrix held sparse) leaves a models x models system: the cost is linear in
the ratings and independent of the number of annotators. Kulikov et al. fixed both
variances at 1 (standard normal priors); that is the default here.

:func:`gibbs` samples the same posterior (seeded, many chains at once, vectorised with
sparse products) as the long-run check of the closed form. :func:`estimate_variances`
estimates sigma_b^2 and sigma_e^2 by REML (statsmodels ``MixedLM``, annotator random
intercept, model fixed effects) for an empirical-Bayes variant; its posterior standard
deviations then treat the estimated variances as known.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import sparse

__all__ = ["Calibration", "calibrate", "gibbs", "estimate_variances"]


@dataclass
class Calibration:
    """Posterior means and standard deviations of model quality and annotator bias."""

    quality: np.ndarray        # (models,) posterior mean of q_m
    quality_sd: np.ndarray     # (models,) posterior standard deviation of q_m
    bias: np.ndarray           # (annotators,) posterior mean of b_a
    covariance: np.ndarray     # (models, models) posterior covariance of q
    sigma_b: float
    sigma_e: float


def _design(model: np.ndarray, annotator: np.ndarray, models: int | None, annotators: int | None):
    model, annotator = np.asarray(model, dtype=np.int64), np.asarray(annotator, dtype=np.int64)
    if model.shape != annotator.shape or model.ndim != 1:
        raise ValueError("model and annotator must be 1-d arrays of the same length")
    m = int(models if models is not None else model.max() + 1)
    a = int(annotators if annotators is not None else annotator.max() + 1)
    return model, annotator, m, a


def calibrate(scores, model, annotator, sigma_b: float = 1.0, sigma_e: float = 1.0,
              models: int | None = None, annotators: int | None = None) -> Calibration:
    """The exact posterior (closed form, see the module docstring).

    ``model`` and ``annotator`` are integer codes (0..M-1, 0..A-1) of each rating. A model
    with no ratings has an undefined quality (NaN).
    """
    y = np.asarray(scores, dtype=float)
    model, annotator, m, a = _design(model, annotator, models, annotators)
    lam = sigma_e ** 2 / sigma_b ** 2
    n_model = np.bincount(model, minlength=m).astype(float)
    n_ann = np.bincount(annotator, minlength=a).astype(float)
    counts = sparse.csr_matrix((np.ones_like(y), (model, annotator)), shape=(m, a))  # duplicates summed
    sum_model = np.bincount(model, weights=y, minlength=m)
    sum_ann = np.bincount(annotator, weights=y, minlength=a)
    inv_d = 1.0 / (n_ann + lam)
    scaled = counts.multiply(inv_d[None, :]).tocsr()  # C D^-1
    schur = np.diag(n_model) - (scaled @ counts.T).toarray()
    rhs = sum_model - scaled @ sum_ann
    rated = n_model > 0
    quality = np.full(m, np.nan)
    cov = np.full((m, m), np.nan)
    if rated.any():
        sub = schur[np.ix_(rated, rated)]
        quality[rated] = np.linalg.solve(sub, rhs[rated])
        cov[np.ix_(rated, rated)] = sigma_e ** 2 * np.linalg.inv(sub)
    fitted = np.where(rated, quality, 0.0)
    bias = inv_d * (sum_ann - counts.T @ fitted)
    return Calibration(quality, np.sqrt(np.diag(cov)), bias, cov, float(sigma_b), float(sigma_e))


def gibbs(scores, model, annotator, sigma_b: float = 1.0, sigma_e: float = 1.0, iterations: int = 2000,
          burn_in: int = 500, chains: int = 32, seed: int = 0, models: int | None = None,
          annotators: int | None = None) -> dict:
    """Gibbs sampler of the same posterior: alternately q | b, y and b | q, y, for ``chains``
    independent chains at once. Returns posterior means and sds of q (pooled draws after
    ``burn_in``) and the number of draws. Slow to mix when annotators rate many items
    (q and the mean of b trade off): use it as a check, not as the estimator."""
    y = np.asarray(scores, dtype=float)
    model, annotator, m, a = _design(model, annotator, models, annotators)
    rng = np.random.default_rng(seed)
    lam = sigma_e ** 2 / sigma_b ** 2
    n = len(y)
    to_model = sparse.csr_matrix((np.ones(n), (model, np.arange(n))), shape=(m, n))
    to_ann = sparse.csr_matrix((np.ones(n), (annotator, np.arange(n))), shape=(a, n))
    n_model = np.asarray(to_model.sum(axis=1)).ravel()
    n_ann = np.asarray(to_ann.sum(axis=1)).ravel()
    safe_nm = np.maximum(n_model, 1.0)
    y_col = y[:, None]
    bias = np.zeros((a, chains))
    total = np.zeros((m, chains))
    total_sq = np.zeros((m, chains))
    kept = 0
    for step in range(iterations):
        resid = y_col - to_ann.T @ bias                               # (n, chains): y - b
        mean_q = (to_model @ resid) / safe_nm[:, None]
        quality = mean_q + rng.standard_normal((m, chains)) * (sigma_e / np.sqrt(safe_nm))[:, None]
        resid = y_col - to_model.T @ quality                          # y - q
        precision = n_ann + lam
        mean_b = (to_ann @ resid) / precision[:, None]
        bias = mean_b + rng.standard_normal((a, chains)) * (sigma_e / np.sqrt(precision))[:, None]
        if step >= burn_in:
            total += quality
            total_sq += quality ** 2
            kept += 1
    draws = kept * chains
    mean = total.sum(axis=1) / draws
    var = np.maximum(total_sq.sum(axis=1) / draws - mean ** 2, 0.0)
    mean[n_model == 0] = np.nan
    return {"quality": mean, "quality_sd": np.sqrt(var), "draws": draws, "chains": chains,
            "iterations": iterations, "burn_in": burn_in, "seed": seed}


def estimate_variances(scores, model, annotator) -> tuple[float, float]:
    """REML estimates (sigma_b, sigma_e) from statsmodels' MixedLM: model fixed effects,
    an annotator random intercept. Falls back to a small sigma_b when the estimate is zero."""
    import pandas as pd
    import statsmodels.formula.api as smf

    frame = pd.DataFrame({"y": np.asarray(scores, dtype=float), "m": np.asarray(model).astype(str),
                          "a": np.asarray(annotator).astype(str)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter on boundary fits
        fit = smf.mixedlm("y ~ 0 + C(m)", frame, groups=frame["a"]).fit(reml=True)
    sigma_e = float(np.sqrt(fit.scale))
    sigma_b = float(np.sqrt(max(float(np.asarray(fit.cov_re)[0, 0]), 1e-6)))
    return sigma_b, sigma_e
