"""Planned designs reach their power (issue 23; not a timing: ``value`` is the achieved power).
For each protocol's two-facet plan (``acute power --pilot``, ``per-turn power --pilot``, ``ssa power
--pilot``), :mod:`parlai_acute.stats.planned_power` draws a pilot from a known design, plans for
the true difference at 80 % power, and analyses seeded studies of the planned size with the
protocol's own mark: ``value`` = achieved power (target 72-88 %), ``null_rate`` with the models
equal (3-7 %), over several pilots (the plan of each, averaged); a large pilot (what the planner
does) and a small one (what a pilot of that size gives). Static SSA twice: ``ssa`` is the plan for
the labels' yes rates (the first table of ``ssa power --pilot``), ``ssa-majority`` the plan for the
replies' yes majorities the analysis tests (the second). The fast assertions are
tests/stats/test_planned_power.py; the figures are in docs/benchmarks.md.
"""
REPLICATES = 1000
PILOTS = 4
CASES = [
    ("acute", "large pilot", dict(effect=0.8, conversations=30, pilot_workers=300, pilot_conversations=200)),
    ("acute", "large pilot", dict(effect=0.5, conversations=100, pilot_workers=300, pilot_conversations=200)),
    ("acute", "small pilot", dict(effect=0.8, conversations=50, pilot_workers=30, pilot_conversations=30)),
    ("per-turn", "large pilot", dict(effect=0.8, pilot_workers=300)),
    ("per-turn", "large pilot", dict(effect=0.5, pilot_workers=300)),
    ("per-turn", "small pilot", dict(effect=0.5, pilot_workers=20)),
    ("ssa", "large pilot", dict(effect=0.8, contexts=60, pilot_workers=200, pilot_contexts=200)),
    ("ssa-majority", "large pilot", dict(effect=0.8, contexts=100, pilot_workers=200, pilot_contexts=200)),
    ("ssa-majority", "large pilot", dict(effect=0.5, contexts=300, pilot_workers=200, pilot_contexts=200)),
    ("ssa-majority", "small pilot", dict(effect=0.8, contexts=100, pilot_workers=40, pilot_contexts=40)),
]


def run():
    import numpy as np

    from parlai_acute.stats.planned_power import check

    for protocol, pilot, kwargs in CASES:
        results = [check(protocol, replicates=REPLICATES, seed=10 * s, **kwargs) for s in range(PILOTS)]
        done = [r for r in results if r.get("workers")]
        yield {"name": "planned_power", "protocol": protocol, "pilot": pilot,
               **{k: v for k, v in kwargs.items()}, "pilots": PILOTS, "replicates": REPLICATES,
               "planned_power": 0.8, "value": round(float(np.mean([r["achieved_power"] for r in done])), 4),
               "unit": "achieved power", "target": [0.72, 0.88],
               "achieved_each": [round(r["achieved_power"], 3) for r in done],
               "workers_each": [r["workers"] for r in done], "df_each": [r["df"] for r in done],
               "null_rate": round(float(np.mean([r["null_rate"] for r in done])), 4),
               "no_plan": len(results) - len(done)}
