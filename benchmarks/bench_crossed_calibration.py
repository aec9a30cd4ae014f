"""Calibration of the marks where two facets are sampled (issue 23; not a timing: ``value`` is the
null mark rate). One row per design x facet size (8, 20, 60 levels of each facet) x effect (weak:
logit 0.3, strong: 0.8): ``value`` = how often the mark fires when the models are equal (target
3-7 %), ``coverage`` = how often its interval holds the true value (target 93-97 %), ``power`` at
the effect beside ``reference_power`` (a Wald test that knows the estimator's true sd), and the
same three figures of the one-facet test the mark replaces (``one_facet_*``; for ``ppi-static-ssa``
the PPI++ interval over independent replies, tests/stats/test_ppi_crossed.py). The designs and
the candidates are :mod:`parlai_acute.stats.crossed_designs`; the fast assertions of the same
facts are tests/stats/test_crossed_calibration.py; the numbers are in docs/inference.md.
"""
REPLICATES = 2000
TARGET = (0.03, 0.07)


def run():
    from parlai_acute.stats.crossed_designs import DESIGNS, EFFECTS, calibrate

    for design in DESIGNS:
        for size in (8, 20, 60):
            for strength, effect in EFFECTS.items():
                result = calibrate(design, size, effect, REPLICATES, seed=size + int(100 * effect))
                names = list(result)
                mark, one = result[names[0]], result[names[-2]]
                reference = result["reference: Wald with the true sd"]
                yield {"name": "crossed_calibration", "design": design, "levels": size, "effect": strength,
                       "effect_logit": effect, "replicates": REPLICATES, "mark": names[0],
                       "value": round(mark["null"], 4), "unit": "null mark rate", "target": list(TARGET),
                       "coverage": round(mark["coverage"], 4), "power": round(mark["power"], 4),
                       "coverage_at_effect": round(mark["coverage_at_effect"], 4),
                       "reference_power": round(reference["power"], 4),
                       "one_facet": names[-2], "one_facet_null": round(one["null"], 4),
                       "one_facet_coverage": round(one["coverage"], 4), "one_facet_power": round(one["power"], 4)}
