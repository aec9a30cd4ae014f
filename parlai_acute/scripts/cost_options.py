"""The cost options of the power commands (``acute power``, ``per-turn power``, ``ssa power``), spelled once:
``--pay-per-hour`` turns the sample sizes into hours of work and money, time per judgment from
``--pilot`` (the stored times) or ``--seconds-per-judgment``, plus ``--fee`` (the provider's share)
and ``--workers-at-once`` (how long the study runs). The plan itself is :mod:`parlai_acute.review.cost`.
:func:`finish` is the common end of the three commands (price, record, write the JSON), so the
commands differ only in their plans.
"""
from __future__ import annotations

import argparse


def add_cost_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cost and duration (with --pay-per-hour)")
    group.add_argument("--pay-per-hour", type=float, default=None, metavar="AMOUNT",
                       help="hourly pay: also print what the judgments needed cost and take, from the time per "
                            "judgment of --pilot (its stored times) or --seconds-per-judgment")
    group.add_argument("--seconds-per-judgment", type=float, default=None, metavar="S",
                       help="seconds of work per judgment (default: the mean of --pilot's stored times; `review` "
                            "prints a run's figure with instructions and checks included)")
    group.add_argument("--fee", type=float, default=0.0, metavar="SHARE",
                       help="the crowd provider's fee as a share of workers' pay (0.2 for 20%%; default 0)")
    group.add_argument("--workers-at-once", type=int, default=None, metavar="N",
                       help="workers working at the same time: also print the hours from launch to the last judgment")


def print_cost(args, needs: list[tuple[str, int]], pilot_rows, unit: str = "judgments") -> dict | None:
    """Print the cost lines for ``needs`` [(label, n)] and return them for the JSON (None: no
    --pay-per-hour). ``pilot_rows()``: the pilot's (worker, seconds) rows and where they come from, in
    words, read only when needed."""
    from parlai_acute.errors import UserError
    from parlai_acute.review import cost

    if args.pay_per_hour is None:
        if args.seconds_per_judgment is not None or args.fee or args.workers_at_once:
            raise UserError("--seconds-per-judgment, --fee and --workers-at-once price the plan: give "
                            "--pay-per-hour too")
        return None
    if args.workers_at_once is not None and args.workers_at_once < 1:
        raise UserError(f"--workers-at-once must be at least 1, got {args.workers_at_once}")
    cost.check_pay(args.pay_per_hour, args.fee, args.seconds_per_judgment)
    if args.seconds_per_judgment is not None:
        time = args.seconds_per_judgment
    elif args.pilot:
        time = cost.pilot_time(*pilot_rows(), seed=args.seed)
    else:
        raise UserError("--pay-per-hour needs the time per judgment: --pilot FILE (its stored times) or "
                        "--seconds-per-judgment S")
    lines, rows = cost.plan_lines(needs, time, args.pay_per_hour, args.fee, args.workers_at_once, unit)
    print("\n" + "\n".join(lines))
    return {"seconds_per_judgment": time if isinstance(time, float) else time.__dict__, "plans": rows}


def finish(args, result: dict, needs: list[tuple[str, int]], pilot_rows, unit: str = "judgments") -> int:
    """The end of every power command: price ``needs`` (:func:`print_cost`), put the cost in
    ``result``, write ``result`` to ``--json`` atomically when asked, and return the exit code."""
    from parlai_acute.files import write_json

    cost = print_cost(args, needs, pilot_rows, unit)
    if cost is not None:
        result["cost"] = cost
    if args.json:
        write_json(args.json, result)
        print(f"\nwrote {args.json}")
    return 0
