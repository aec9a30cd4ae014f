"""``parlai-acute acute power``: judgments needed for an ACUTE-Eval win-rate difference, and back.

Prints the exact-binomial answer beside statsmodels' normal approximation; ``--json``
writes both tables with the configuration and the package version.

One worker's judgments of a matchup share that worker's taste, and the marks come from a
test over workers: ``--judgments-per-worker`` (per matchup) and ``--icc`` turn independent
judgments into workers (design effect 1 + (m - 1) ICC); ``--pilot`` estimates both from a
pilot's judgments table (after the analysis' quality control) and also plans at the
upper end of the ICC's interval. Where the pilot reused conversations, the worker, conversation
and residual variance components are estimated from it and the plan says how many workers each
number of conversations per model needs, and the fewest conversations any number of workers can
do with (conversations are sampled too, and the analysis treats them so).

  parlai-acute acute power --delta 0.05 0.1 0.15 0.2 --budget 100 300 1000
  parlai-acute acute power --delta 0.1 --pilot pilot/judgments.csv
"""
from __future__ import annotations

import argparse

import parlai_acute
from parlai_acute.errors import UserError
from parlai_acute.acute import power as acute_power
from parlai_acute.stats import power as pw
from parlai_acute.scripts.cost_options import add_cost_options, finish
from parlai_acute.scripts.options import add_alpha


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--delta", type=float, nargs="+", default=None,
                        help="win-rate differences p1 - p0 to detect (default 0.05 0.1 0.15 0.2 unless --budget)")
    parser.add_argument("--budget", type=int, nargs="+", default=[],
                        help="numbers of judgments: report the smallest detectable difference for each")
    parser.add_argument("--p0", type=float, default=0.5, help="win rate under the null hypothesis (default 0.5)")
    add_alpha(parser, "the planned two-sided test")
    parser.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    parser.add_argument("--judgments-per-worker", type=float, default=None, metavar="M",
                        help="judgments one worker makes of one matchup (default: the pilot's, else 1)")
    parser.add_argument("--icc", type=float, default=None,
                        help="correlation of one worker's judgments of a matchup (default: from --pilot, else 0)")
    parser.add_argument("--pilot", metavar="FILE", default=None,
                        help="a pilot's judgments table (.csv/.jsonl): estimate the within-worker correlation")
    parser.add_argument("--seed", type=int, default=0, help="seed of the pilot's bootstrap")
    parser.add_argument("--json", metavar="FILE", help="also write the tables and configuration as JSON")
    add_cost_options(parser)


def run(args: argparse.Namespace) -> int:
    deltas = args.delta if args.delta is not None else ([] if args.budget else [0.05, 0.1, 0.15, 0.2])
    if any(d == 0 for d in deltas):
        raise UserError("--delta 0 cannot be detected; give a non-zero difference such as 0.1")
    if any(n < 1 for n in args.budget):
        raise UserError("--budget values must be positive numbers of judgments")
    head = f"two-sided exact binomial test, p0={args.p0}, alpha={args.alpha}, power={args.power}"
    result = {"parlai_acute_version": parlai_acute.__version__,
              "config": {"p0": args.p0, "alpha": args.alpha, "power": args.power, "deltas": deltas,
                         "budgets": args.budget, "seed": None, "test": "two-sided exact binomial (scipy.stats.binomtest)",
                         "normal_approximation": "statsmodels NormalIndPower(ratio=0), proportion_effectsize"},
              "sample_size": [], "detectable": []}
    sizes = acute_power.sample_size_table(deltas, args.p0, args.alpha, args.power) if deltas else None
    budgets = acute_power.detectable_table(args.budget, args.p0, args.alpha, args.power) if args.budget else None
    print(head)
    if sizes is not None:
        table = sizes
        result["sample_size"] = table.to_dict(orient="records")
        print(f"\n{'delta':>7} {'p1':>6} {'n exact':>8} {'(first)':>8} {'power@n':>8} {'n normal':>9}")
        for r in table.itertuples():
            print(f"{r.delta:>7.3f} {r.p1:>6.3f} {r.n_exact:>8d} {r.n_exact_first:>8d} {r.power_at_n_exact:>8.3f} "
                  f"{r.n_normal:>9d}")
        print("n exact: smallest n from which exact power stays >= target (checked up to 2x normal n + 100); "
              "(first): first n reaching it")
    if budgets is not None:
        table = budgets
        result["detectable"] = table.to_dict(orient="records")
        print(f"\n{'n':>7} {'delta exact':>12} {'delta normal':>13}")
        for r in table.itertuples():
            print(f"{r.n:>7d} {r.delta_exact:>12.4f} {r.delta_normal:>13.4f}")
    if deltas and (args.pilot or args.icc is not None or args.judgments_per_worker):
        result["clustered"] = _clustered(args, sizes)
    return finish(args, result, _needs(result), lambda: _pilot_seconds(args.pilot))


def _clustered(args, sizes) -> dict:
    """Workers per matchup the cluster-aware test needs, at the ICC given or estimated."""
    pilot = None
    if args.pilot:
        from parlai_acute.acute.judgments import read_judgments
        from parlai_acute.report.tables import interval_text

        pilot = pw.pilot_icc(*acute_power.pilot_outcomes(read_judgments(args.pilot)), seed=args.seed)
        pilot["file"] = str(args.pilot)
        print(f"\npilot {pilot['file']}: {pilot['clusters']} (worker, matchup) clusters, "
              f"{pilot['per_cluster']:.2f} judgments each; within-worker correlation "
              f"{interval_text(pilot['icc'], pilot['icc_low'], pilot['icc_high'])} (95% bootstrap of workers)")
    icc = args.icc if args.icc is not None else (pilot["icc"] if pilot and pilot["icc"] == pilot["icc"] else 0.0)
    m = args.judgments_per_worker or (pilot["per_cluster"] if pilot else 1.0)
    iccs = [("estimate" if pilot and args.icc is None else "given", icc)]
    if pilot and args.icc is None and pilot["icc_high"] == pilot["icc_high"]:
        iccs.append(("upper end", pilot["icc_high"]))
    rows = []
    print(f"\nclustered by worker: m = {m:g} judgments per worker and matchup; the test over workers needs at least "
          f"{pw.clustered_plan(1, m, 0.0, args.alpha)['min_clusters']} workers per matchup to give a mark at all")
    print(f"{'delta':>7} {'icc':>14} {'design eff':>11} {'judgments':>10} {'workers':>8}")
    for r in sizes.itertuples():
        for label, value in iccs:
            plan = pw.clustered_plan(r.n_exact, m, value, args.alpha)
            rows.append({"delta": r.delta, "icc": value, "icc_from": label, "per_worker": m, **plan})
            print(f"{r.delta:>7.3f} {f'{value:.3f} ({label})':>14} {plan['design_effect']:>11.3f} "
                  f"{plan['judgments']:>10d} {plan['clusters']:>8d}")
    out = {"pilot": pilot, "per_worker": m, "plans": rows}
    if args.pilot:
        out["crossed"] = _crossed(args, sizes, m)
    return out


def _crossed(args, sizes, m: float) -> dict | None:
    """Workers and conversations per model the plan needs when the pilot reused conversations:
    both facets' variance components from the pilot (:func:`parlai_acute.stats.power.pilot_components`)."""
    from parlai_acute.acute.judgments import read_judgments

    facets = acute_power.pilot_facets(read_judgments(args.pilot))
    if not facets["reused"]:
        print("\nthe pilot used each conversation once per matchup: the conversations' share of the variance cannot be "
              "told from the judgment noise; plan conversations per model at least as many as workers, or run a "
              "pilot that reuses conversations")
        return None
    comp = pw.pilot_components(facets["value"], facets["worker"], facets["conversations"])
    print(f"\nworkers and conversations both sampled (the pilot reused conversations): variance of a judgment "
          f"{comp['total']:.3f} = worker {comp['worker']:.3f} + conversations {comp['conversation']:.3f} + "
          f"residual {comp['residual']:.3f} ({comp['workers']} worker-matchups, {comp['conversations']} "
          f"conversations per side)")
    print(f"{'delta':>7} {'conversations/model':>20} {'workers':>8} {'judgments':>10}")
    plans = []
    for r in sizes.itertuples():
        plan = pw.crossed_plan(2 * r.delta, comp, m, list(acute_power.CONVERSATION_STEPS), args.alpha, args.power)
        plans.append({"delta": r.delta, **plan})
        for row in plan["rows"]:
            shown = (f"{row['workers']:>8d} {row['judgments']:>10d}" if row["workers"] else
                     f"  {row['why']}")
            print(f"{r.delta:>7.3f} {row['conversations']:>20d} {shown}")
        print(f"{r.delta:>7.3f}  at least {plan['conversations_min']} conversations per model whatever the workers")
    return {"components": comp, "plans": plans}


def _needs(result: dict) -> list[tuple[str, int]]:
    """(label, judgments) to price: each delta's judgments (clustered by worker when planned so, at the
    ICC given or estimated), and each budget."""
    clustered = {r["delta"]: r["judgments"] for r in (result.get("clustered") or {}).get("plans", [])
                 if r["icc_from"] in ("estimate", "given")}
    needs = [(f"delta {r['delta']:.3f}", int(clustered.get(r["delta"], r["n_exact"]))) for r in result["sample_size"]]
    return needs + [(f"budget {r['n']}", int(r["n"])) for r in result["detectable"]]


def _pilot_seconds(path: str):
    from parlai_acute.acute.judgments import read_judgments
    from parlai_acute.review.cost import SOURCES, acute_judgment_seconds

    return acute_judgment_seconds(read_judgments(path)), SOURCES["acute"]
