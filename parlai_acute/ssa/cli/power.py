"""``parlai-acute ssa power``: labels, workers and contexts a static SSA design needs to detect a
difference between two models' sensibleness or specificity.

Without ``--pilot``: the labels per model the normal approximation needs when every label is
independent (two rates, ``--base-rate`` and ``--base-rate`` + delta). Workers and contexts are
both sampled in static SSA and the analysis treats them so; their shares of the variance come
only from a pilot. ``--pilot`` (a labels table whose workers labelled several contexts) estimates
the worker, context and residual variance of each label's signed outcome (parlai_acute/ssa/power.py
says how) and prints, for each difference, the workers needed at several numbers of contexts and
the fewest contexts any number of workers can do with; neither below what the test needs to give
a mark at all. Then the plan for what the analysis tests, the replies' yes majorities at the
pilot's labels per reply (the split of the analysis' own variance, scaled): the plan to use, and
the one the cost is for.

  parlai-acute ssa power --delta 0.05 0.1
  parlai-acute ssa power --delta 0.1 --pilot pilot/labels.csv
  parlai-acute ssa power --delta 0.1 --pilot pilot/labels.csv --pay-per-hour 15 --json plan.json
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.cost_options import add_cost_options, finish
from parlai_acute.scripts.options import add_alpha

MEASURES = ("sensibleness", "specificity")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--delta", type=float, nargs="+", default=[0.05, 0.1, 0.15],
                        help="differences of two models' rates to detect (default 0.05 0.1 0.15)")
    parser.add_argument("--base-rate", type=float, default=0.5,
                        help="without --pilot: the weaker model's yes rate (default 0.5, the most labels)")
    add_alpha(parser, "the planned two-sided test")
    parser.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    parser.add_argument("--measure", choices=MEASURES + ("both",), default="both",
                        help="with --pilot: the question whose variance the plan uses (default both)")
    parser.add_argument("--labels-per-worker", type=float, default=None, metavar="M", dest="per_worker",
                        help="labels one worker gives to one pair of models (default: the pilot's)")
    parser.add_argument("--contexts", type=int, nargs="+", default=None, metavar="C",
                        help="numbers of contexts to plan workers for (default 10 20 50 100 200 500)")
    parser.add_argument("--pilot", metavar="FILE", default=None,
                        help="a static SSA pilot's labels table (.csv/.jsonl): estimate the worker and context "
                             "variance from it")
    parser.add_argument("--seed", type=int, default=0, help="seed of the pilot's time bootstrap (cost)")
    parser.add_argument("--json", metavar="FILE", help="also write the tables and configuration as JSON")
    add_cost_options(parser)


def run(args: argparse.Namespace) -> int:
    import parlai_acute
    from parlai_acute.errors import UserError
    from parlai_acute.ssa import power as ssa_power
    from parlai_acute.stats.inference import min_clusters

    contexts = args.contexts or list(ssa_power.CONTEXT_STEPS)
    if any(c < 1 for c in contexts):
        raise UserError("--contexts values must be positive numbers of contexts")
    sizes = ssa_power.sample_size_table(args.delta, args.base_rate, args.alpha, args.power)
    result = {"parlai_acute_version": parlai_acute.__version__, "seed": args.seed,
              "config": {"deltas": args.delta, "base_rate": args.base_rate, "alpha": args.alpha, "power": args.power,
                         "pilot": args.pilot, "measure": args.measure, "contexts": contexts,
                         "labels_per_worker": args.per_worker,
                         "normal_approximation": "statsmodels NormalIndPower(ratio=1), proportion_effectsize",
                         "crossed": "parlai_acute.stats.power.pilot_components + crossed_plan (normal test, "
                                    "Var = s_w/W + s_c/C + s_e/(W m))"},
              "sample_size": sizes.to_dict(orient="records")}
    print(f"two-sided test of a difference of two models' rates, alpha={args.alpha}, power={args.power}")
    print(f"\nlabels independent (normal approximation, weaker model at {args.base_rate:g}):")
    print(f"{'delta':>7} {'labels/model':>13} {'labels':>8}")
    for r in sizes.itertuples():
        print(f"{r.delta:>7.3f} {r.labels_per_model:>13d} {r.labels:>8d}")
    pilot = None
    if args.pilot:
        from parlai_acute.ssa.labels import read_labels

        pilot = read_labels(args.pilot)
        result["crossed"] = [_crossed(pilot, measure, args, contexts)
                             for measure in (MEASURES if args.measure == "both" else (args.measure,))]
    else:
        print(f"\nworkers and contexts are both sampled in static SSA, and the test over them needs at least "
              f"{min_clusters(args.alpha)} of each; how many of each this design needs depends on their shares of "
              f"the variance, which only a pilot gives: --pilot LABELS (workers labelling several contexts)")
    return finish(args, result, _needs(result), lambda: (ssa_power.label_seconds(pilot), ssa_power.SECONDS_SOURCE),
                  unit="labels")


def _crossed(pilot, measure: str, args, contexts: list[int]) -> dict:
    """One measure's components and plan from the pilot, printed."""
    from parlai_acute.ssa import power as ssa_power

    comp = ssa_power.pilot_components(pilot, measure)
    plans = ssa_power.crossed_table(args.delta, comp, args.per_worker, contexts, args.alpha, args.power)
    m = plans[0]["per_worker"]
    print(f"\n{measure}, workers and contexts both sampled: variance of a label's signed outcome {comp['total']:.4f} = "
          f"worker {comp['worker']:.4f} + context {comp['context']:.4f} + residual {comp['residual']:.4f} "
          f"(pilot {args.pilot}: {comp['workers']} workers and {comp['contexts']} contexts summed over pairs, "
          f"{comp['labels']} labels over {comp['pairs']} pair(s) of models; {m:.1f} labels per worker and pair)")
    _print_plans(plans, "labels/reply", "labels_per_reply", 13)
    majority = ssa_power.majority_components(pilot, measure)
    tables = ssa_power.majority_table(args.delta, majority, contexts, args.alpha, args.power)
    k = tables[0]["labels_per_reply"]
    print(f"\n{measure}, the replies' yes majorities (what `ssa analyze` tests), {k:g} labels per reply as in the "
          f"pilot: one context's variance of the majority difference {majority['context_var']:.4f}, one worker's labels "
          f"in two contexts covary {majority['worker_cov']:.5f}")
    _print_plans(tables, "labels/worker", "labels_per_worker", 14)
    print(ssa_power.MAJORITY_NOTE)
    return {"components": comp, "plans": plans, "majority": {"components": majority, "plans": tables},
            "note": ssa_power.MAJORITY_NOTE}


def _needs(result: dict) -> list[tuple[str, int]]:
    """(label, labels) to price: per difference, the fewest labels of any planned number of contexts
    (the first measure's majority plan, with a pilot: what the analysis tests), else the independent
    labels of two models."""
    crossed = result.get("crossed")
    if not crossed:
        return [(f"delta {r['delta']:.3f}", int(r["labels"])) for r in result["sample_size"]]
    needs = []
    for plan in crossed[0]["majority"]["plans"]:
        rows = [r for r in plan["rows"] if r["labels"]]
        if rows:
            best = min(rows, key=lambda r: r["labels"])
            needs.append((f"delta {plan['delta']:.3f}, {best['contexts']} contexts, {best['workers']} workers",
                          int(best["labels"])))
    return needs


def _print_plans(plans: list, last: str, key: str, width: int) -> None:
    """A plan table: per difference and number of contexts, the workers and labels it needs (and the
    ``last`` column, ``key`` of each row), or why there is no plan; then the contexts floor."""
    print(f"{'delta':>7} {'contexts':>9} {'workers':>8} {'labels':>8} {last:>{width}}")
    for plan in plans:
        for row in plan["rows"]:
            shown = (f"{row['workers']:>8d} {row['labels']:>8d} {row[key]:>{width}.1f}"
                     if row["workers"] else f"  {row['why']}")
            print(f"{plan['delta']:>7.3f} {row['contexts']:>9d} {shown}")
        print(f"{plan['delta']:>7.3f}  at least {plan['contexts_min']} contexts whatever the workers")
