"""``parlai-acute review``: review every worker of a Mephisto run from what it stored, and pay them.

One row per worker (any task: ACUTE-Eval, per-turn, SSA labelling, multi-reference): units and
judgments, seconds per unit and per judgment, gold/onboarding/practice results, reason length,
position bias (binomial test; the table says how many judgments it needs to fire), leave-one-out
agreement with the other workers, straight-lining, message checks (too short, all capitals,
greetings only, exact repeats), the analysis's exclusions, and pay: hours from the stored times,
effective hourly pay, and the bonus that brings each worker to --min-hourly-wage; then the run's
effective hourly pay across workers, its seconds of work per judgment (to plan the next study with
`power --seconds-per-judgment`) and its cost with the provider's --fee.

Rules (--rules, YAML or JSON: `when: gold_accuracy < 0.5`, `action: reject`, `reason: ...`) turn
the table into proposed actions: approve (no rule fired), soft_reject, reject with a reason, block
(the block qualification), bonus. Dry run by default; --apply carries them out through Mephisto's
unit and worker API, once: work already decided, workers already blocked and bonuses already paid
(read from --log) are skipped, and every action is logged with its evidence (JSON lines).
See docs/review_and_release.md.

parlai-acute review --task-name my-acute-task --mephisto-db data/database.db --min-hourly-wage 12
parlai-acute review --task-name my-acute-task --rules rules.yaml -o workers.csv --apply
"""
from __future__ import annotations

import argparse
import math

from parlai_acute.scripts.options import add_alpha, add_mephisto_db


NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task-name", required=True, help="the Mephisto task (its mephisto.task.task_name)")
    add_mephisto_db(parser)
    parser.add_argument("--rules", metavar="FILE", default=None,
                        help="YAML or JSON rules: a list of {when, action, reason[, amount]} or a mapping with "
                             "rules, min_hourly_wage, block_qualification (default: approve everyone)")
    parser.add_argument("--min-hourly-wage", type=float, default=None, metavar="AMOUNT",
                        help="bonus every worker whose work is not rejected up to this hourly pay (the unit's "
                             "currency, from Mephisto's stored start and end times)")
    parser.add_argument("--block-qualification", default=None, metavar="NAME",
                        help="qualification granted to block a worker (default: the run's "
                             "mephisto.blueprint.block_qualification, else TASK_block)")
    add_alpha(parser, "the position-bias test")
    parser.add_argument("-o", "--output", metavar="FILE", default=None,
                        help="write the per-worker table (.csv) with the proposed action of each worker")
    parser.add_argument("--fee", type=float, default=0.0, metavar="SHARE",
                        help="the crowd provider's fee as a share of workers' pay (0.2 for 20%%): added to the run's "
                             "cost line (default 0)")
    parser.add_argument("--apply", action="store_true",
                        help="carry the proposed actions out through Mephisto (default: a dry run)")
    parser.add_argument("--log", metavar="FILE", default=None,
                        help="the actions log, JSON lines (default: parlai_acute_review/TASK.actions.jsonl beside "
                             "the database); read to pay no bonus twice")


def _number(value, fmt: str, missing: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return missing
    return format(value, fmt)


def describe(row: dict) -> str:
    """One worker's evidence in a line (undefined values in words)."""
    parts = [f"{row['units']} unit{'s' * (row['units'] != 1)}", f"{row['judgments']} judgments",
             f"{_number(row['seconds_per_judgment'], '.0f', 'no time')} s each"]
    if row["gold_items"]:
        parts.append(f"gold {row['gold_correct']}/{row['gold_items']}")
    if row["position_judgments"]:
        parts.append(f"first position {row['first_position_share']:.0%}" +
                     (f" (p {row['position_p']:.3g})" if not math.isnan(row["position_p"]) else
                      f" (test needs {int(row['position_needs'])})"))
    parts.append(f"agreement {row['agreement']:.2f} on {row['agreement_items']}" if row["agreement_items"]
                 else "agreement: no shared items")
    if not math.isnan(row["straight_share"]):
        parts.append(f"same answer {row['straight_share']:.0%}")
    if row["messages"]:
        parts.append(f"{row['messages_flagged']}/{row['messages']} messages flagged")
    if row["excluded"]:
        parts.append(f"excluded {row['excluded']} ({row['excluded_because']})")
    parts.append(f"{_number(row['hourly_pay'], '.2f', 'no stored time, so no')} per hour")
    return ", ".join(parts)


def run(args) -> int:
    from parlai_acute import api
    from parlai_acute.files import write_csv

    plan = api.review(args.task_name, args.mephisto_db, args.rules, min_hourly_wage=args.min_hourly_wage,
                      block_qualification=args.block_qualification, apply=args.apply, log=args.log,
                      alpha=args.alpha)
    proposals = {p["worker"]: p for p in plan.proposals}
    print(f"review of {args.task_name} ({plan.protocol}): {len(plan.table)} workers")
    for row in plan.table.to_dict(orient="records"):
        p = proposals[row["worker"]]
        action = p["decision"] + (f": {'; '.join(p['reasons'])}" if p["reasons"] else "")
        extra = [f"block ({'; '.join(p['block'])})"] if p["block"] else []
        extra += [f"bonus {amount:.2f} ({why})" for amount, why in p["bonuses"]]
        print(f"  {row['worker']}: {describe(row)}")
        print(f"    -> {action}" + "".join(f"; {e}" for e in extra))
        if row["notes"]:
            print(f"    note: {row['notes']}")
    counts = plan.counts()
    print("proposed: " + ", ".join(f"{n} {name.replace('_', '-')}" for name, n in counts.items()))
    t = plan.table
    hours, base = float(t["hours"].sum(skipna=True)), float(t["base_pay"].sum())
    bonus = sum(amount for p in plan.proposals for amount, _ in p["bonuses"])
    paid = float(t["bonus_paid"].sum())
    print(f"pay: {hours:.2f} hours of work, base {base:.2f}, bonuses paid {paid:.2f}, proposed bonuses "
          f"{bonus:.2f}" + (f" (wage {plan.policy.min_hourly_wage:g} per hour)" if plan.policy.min_hourly_wage
                            is not None else " (no --min-hourly-wage set)"))
    from parlai_acute.review.cost import run_cost_lines

    lines = run_cost_lines(t, bonus, args.fee)
    print("\n".join(line + (" (`power ... --seconds-per-judgment`)" if line.startswith("seconds of work") else "")
                    + (" (--fee)" if line.endswith("(no provider fee given)") else "") for line in lines))
    if args.output:
        table = t.assign(action=[proposals[w]["decision"] for w in t["worker"]],
                         action_reasons=["; ".join(proposals[w]["reasons"]) for w in t["worker"]],
                         block=[bool(proposals[w]["block"]) for w in t["worker"]],
                         bonus=[round(sum(a for a, _ in proposals[w]["bonuses"]), 2) for w in t["worker"]])
        write_csv(args.output, table)
        print(f"wrote {args.output}")
    if not args.apply:
        print("dry run: nothing was done; --apply carries these actions out through Mephisto")
        return 0
    done = [e for e in plan.done if e["result"] == "done"]
    skipped = [e for e in plan.done if e["result"].startswith("skipped")]
    failed = [e for e in plan.done if e["result"].startswith("failed")]
    print(f"{len(done)} actions done, {len(skipped)} skipped (already done or not this agent's to take), "
          f"{len(failed)} failed; logged with their evidence")
    for e in failed:
        print(f"  failed: {e['action']} {e['worker']}: {e['result']}")
    if any(e["action"] == "block" for e in done):
        print(f"blocked workers hold the qualification {plan.block_qualification}; launch with "
              f"mephisto.blueprint.block_qualification={plan.block_qualification} to keep them out")
    return 1 if failed else 0
