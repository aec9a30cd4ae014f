"""Calibration of the headline marks (not a timing: ``value`` is a rejection rate) (issue 15): seeded A/A studies with cluster random
effects at 8, 20 and 60 clusters, and the power beside it. For each protocol and size:
how often the mark (cluster-aware randomisation test, :mod:`parlai_acute.stats.inference`)
fires when the models are equal, against the per-judgment exact test (judgments assumed
independent), the percentile cluster bootstrap and the CR2 sandwich t on G-1 df; and its
power at a true effect beside a reference permutation test of the cluster *means* (each
cluster weighted equally). One JSON line per (protocol, clusters, effect sd, candidate).
The numbers are in docs/inference.md; the fast test of the mark is
tests/stats/test_inference_calibration.py.
"""
import numpy as np
from scipy import stats

REPLICATES = 2000
RESAMPLES = 2000
BOOT = 400
ALPHA = 0.05


def cr2_paired(sums, counts):
    """CR2 sandwich t-test of the mean per-judgment difference, t on G-1 df (vectorised over
    columns of ``sums``)."""
    n = counts.sum()
    est = sums.sum(axis=0) / n
    resid = sums - est * counts[:, None]
    var = ((resid ** 2) / (1 - counts[:, None] / n)).sum(axis=0) / n ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        t = est / np.sqrt(var)
    return 2 * stats.t.sf(np.abs(t), len(counts) - 1)


def cr2_two_sample(sums, counts, second):
    parts = []
    for mask in (second, ~second):
        n = counts[mask].sum()
        est = sums[mask].sum(axis=0) / n
        resid = sums[mask] - est * counts[mask][:, None]
        parts.append((est, ((resid ** 2) / (1 - counts[mask][:, None] / n)).sum(axis=0) / n ** 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (parts[0][0] - parts[1][0]) / np.sqrt(parts[0][1] + parts[1][1])
    return 2 * stats.t.sf(np.abs(t), len(counts) - 2)


def bootstrap_paired(sums, counts, rng):
    from parlai_acute.stats.resample import resample_weights

    w = resample_weights(len(counts), BOOT, rng).astype(float)
    est = sums.sum(axis=0) / counts.sum()
    boot = (w @ sums) / (w @ counts)[:, None]
    return (1 + (np.abs(boot - est) >= np.abs(est) - 1e-12).sum(axis=0)) / (BOOT + 1)


def bootstrap_two_sample(sums, counts, second, rng):
    from parlai_acute.stats.resample import resample_weights

    out = []
    for mask in (second, ~second):
        w = resample_weights(int(mask.sum()), BOOT, rng).astype(float)
        out.append(((w @ sums[mask]) / (w @ counts[mask])[:, None], sums[mask].sum(axis=0) / counts[mask].sum()))
    boot, est = out[0][0] - out[1][0], out[0][1] - out[1][1]
    return (1 + (np.abs(boot - est) >= np.abs(est) - 1e-12).sum(axis=0)) / (BOOT + 1)


def plain_sign_flip(sums):
    """The sign-flip p-value counting ties fully (what the mark would be without mid-p)."""
    from parlai_acute.stats.inference import _sign_projections

    a, _, exact, total = _sign_projections(sums, np.zeros(len(sums)), RESAMPLES, 1)
    hits = (np.abs(a) >= np.abs(sums.sum(axis=0)) - 1e-9).sum(axis=0)
    return hits / total if exact else (1 + hits) / (1 + total)


def paired_rates(picks, present, design):
    """(R,) p-values of every candidate for the pair (model 0, model 1) and, for MM, Holm
    over the three pairs of models 0-2 (family) and the omnibus permutation test."""
    from parlai_acute.stats import inference, paired

    r, d, t, k = picks.shape
    diff = picks[..., 1].astype(float) - picks[..., 0]  # (R, D, T)
    sums = diff.sum(axis=2).T  # (D, R)
    counts = present.sum(axis=1).astype(float)
    rng = np.random.default_rng(7)
    out = {"mark": inference.sign_flip_pvalues(sums, n_resamples=RESAMPLES, seed=1),
           "sign-flip without mid-p": plain_sign_flip(sums),
           "cluster mean permutation (reference)": inference.sign_flip_pvalues(sums / counts[:, None],
                                                                               n_resamples=RESAMPLES, seed=1),
           "CR2 sandwich, t on G-1 df": cr2_paired(sums, counts),
           "percentile cluster bootstrap": bootstrap_paired(sums, counts, rng)}
    a_only = ((picks[..., 0] & ~picks[..., 1]).sum(axis=(1, 2)))
    b_only = ((~picks[..., 0] & picks[..., 1]).sum(axis=(1, 2)))
    out["exact, judgments independent"] = np.array([paired.binomial_test(int(b), int(a + b))
                                                    for a, b in zip(a_only, b_only)])
    if design.startswith("mm"):
        family = [out["mark"]]
        for i, j in ((0, 2), (1, 2)):
            s = (picks[..., j].astype(float) - picks[..., i]).sum(axis=2).T
            family.append(inference.sign_flip_pvalues(s, n_resamples=RESAMPLES, seed=1))
        family = np.array(family)
        out["mark, any pair after Holm"] = np.minimum(1.0, family.min(axis=0) * len(family))
    return out


def omnibus_rates(picks, replicates=1000):
    from parlai_acute.stats.inference import omnibus_pvalues

    return omnibus_pvalues(picks[:replicates].sum(axis=2).astype(float), n_resamples=1000, seed=2)[0]


def ssa_rates(verdicts):
    from parlai_acute.stats import inference, paired

    r, g, items = verdicts.shape
    sums = verdicts.sum(axis=2).T.astype(float)  # (G, R)
    counts = np.full(g, float(items))
    second = np.arange(g) >= g // 2
    rng = np.random.default_rng(7)
    k1, k0 = sums[second].sum(axis=0), sums[~second].sum(axis=0)
    n = items * g // 2
    return {"mark": inference.permutation_pvalues(sums, counts, second, n_resamples=RESAMPLES, seed=1),
            "CR2 sandwich, t on G-2 df": cr2_two_sample(sums, counts, second),
            "percentile cluster bootstrap": bootstrap_two_sample(sums, counts, second, rng),
            "exact, judgments independent": np.array([paired.fisher_exact(int(a), n, int(b), n)
                                                      for a, b in zip(k0, k1)])}


def _rows(protocol, clusters, sd, effect, pvalues):
    for candidate, p in pvalues.items():
        p = np.asarray(p, float)
        yield {"name": "inference_calibration", "protocol": protocol, "clusters": clusters, "effect_sd": sd,
               "effect": effect, "candidate": candidate, "replicates": int(len(p)),
               "value": round(float(np.mean(p < ALPHA)), 4), "unit": "rejection rate", "alpha": ALPHA}


def run():
    from parlai_acute.per_turn.simulate import simulate_pick_arrays
    from parlai_acute.ssa.simulate import simulate_conversation_verdicts

    for design, k, protocol in (("pm-soba", 2, "soba"), ("pm-sata", 2, "sata_user"), ("mm-soba", 3, "soba"),
                                ("mm-sata", 3, "sata_user")):
        for clusters in (8, 20, 60):
            for sd in (1.0, 2.0):
                for effect in (0.0, 0.5):
                    quality = np.zeros(k)
                    quality[1] = effect
                    picks, present = simulate_pick_arrays(k, protocol, clusters, 10, REPLICATES, dialogue_sd=sd,
                                                          common_sd=sd if protocol != "soba" else 0.0,
                                                          quality=quality, ragged=True, seed=clusters)
                    pvalues = paired_rates(picks, present, design)
                    if design.startswith("mm") and effect == 0.0:
                        pvalues["omnibus permutation"] = omnibus_rates(picks)
                    yield from _rows(design, clusters, sd, effect, pvalues)
    for clusters in (8, 20, 60):
        for sd in (1.0, 2.0):
            for effect in (0.0, 0.15):
                verdicts = simulate_conversation_verdicts((0.6, 0.6 + effect), clusters // 2, 10, REPLICATES,
                                                          conversation_sd=sd, seed=clusters)
                yield from _rows("ssa-interactive", clusters, sd, effect, ssa_rates(verdicts))
