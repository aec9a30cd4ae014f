"""``parlai-acute acute power``: judgments needed for an ACUTE-Eval win-rate difference, and back.

Prints the exact-binomial answer beside statsmodels' normal approximation; ``--json``
writes both tables with the configuration and the package version.

  parlai-acute acute power --delta 0.05 0.1 0.15 0.2 --budget 100 300 1000
"""
from __future__ import annotations

import argparse

import parlai_acute
from parlai_acute.errors import UserError
from parlai_acute.files import write_json
from parlai_acute.stats import power as pw


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--delta", type=float, nargs="+", default=None,
                        help="win-rate differences p1 - p0 to detect (default 0.05 0.1 0.15 0.2 unless --budget)")
    parser.add_argument("--budget", type=int, nargs="+", default=[],
                        help="numbers of judgments: report the smallest detectable difference for each")
    parser.add_argument("--p0", type=float, default=0.5, help="win rate under the null hypothesis (default 0.5)")
    parser.add_argument("--alpha", type=float, default=0.05, help="two-sided significance level (default 0.05)")
    parser.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    parser.add_argument("--json", metavar="FILE", help="also write the tables and configuration as JSON")


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
    sizes = pw.sample_size_table(deltas, args.p0, args.alpha, args.power) if deltas else None
    budgets = pw.detectable_table(args.budget, args.p0, args.alpha, args.power) if args.budget else None
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
    if args.json:
        write_json(args.json, result)
        print(f"\nwrote {args.json}")
    return 0
