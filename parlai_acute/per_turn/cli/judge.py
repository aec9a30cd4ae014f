"""``parlai-acute judge per-turn``: a language model judges the turns of a per-turn evaluation (SOBA, SATA, SM).

Reads a per-turn choices table (CSV/JSONL, the columns of parlai_acute.per_turn.turns);
each model turn is shown with the conversation so far (rebuilt from the earlier rows of
the same dialogue) and its candidates in every rotation of their order; the judge picks
the best (SOBA), all acceptable (SATA) or says whether the one reply is appropriate (SM).
Writes into ``--outdir``: turns.csv (the judge's rows of the same table, ``worker`` = the
judge), items.jsonl (exact prompts and raw answers) and summary.json (judge
configuration, templates, seed, consistency, position bias, calls and tokens).

Examples::

    parlai-acute judge per-turn --turns turns.csv --outdir judge_turns
    parlai-acute judge per-turn --turns turns.jsonl --answer-from logprobs --num-items 20 -o judge_turns
"""
from __future__ import annotations

import argparse

from parlai_acute.judges.record import cost_line
from parlai_acute.scripts.judge_options import add_judge_arguments, make_runner

NEEDS = ("models",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--turns", required=True, help="per-turn choices table (.csv or .jsonl)")
    parser.add_argument("--worker", default=None,
                        help="judge the turns as seen by this worker (default: the first worker of each dialogue)")
    add_judge_arguments(parser)


def run(args) -> int:
    from parlai_acute.errors import UserError
    from parlai_acute.files import output_dir
    from parlai_acute.judges import record
    from parlai_acute.per_turn.judge import PerTurnProtocol
    from parlai_acute.per_turn.turns import read_turns, write_turns

    if args.inconsistent != "drop":
        raise UserError("the per-turn table has no ties (SOBA needs exactly one pick); use --inconsistent drop")
    protocol = PerTurnProtocol()
    items = protocol.items(read_turns(args.turns), args.worker)[: args.limit]
    if not items:
        raise UserError(f"{args.turns} has no turns with a shown candidate to judge")
    runner = make_runner(args)
    results = runner.run(protocol, items)
    table = protocol.table(results, runner.judge.name, record.run_id(runner))
    counts = record.status_counts(results)
    summary = {**record.provenance(runner, [i.template.id for i in items]), "protocol": "per-turn",
               "turns_file": str(args.turns), "items": counts, "rows_written": len(table),
               "position_bias": record.bias(results), "costs": record.costs(runner),
               "onboarding": "none: the per-turn task has no gold items yet; score a judge on ACUTE gold pairs "
                             "with `parlai-acute judge acute`"}
    with output_dir(args.outdir) as outdir:  # all or nothing (the judge's calls stay in its cache)
        write_turns(outdir / "turns.csv", table)
        record.write_items(outdir / "items.jsonl", results, protocol)
        record.write_summary(outdir / "summary.json", summary)
    print(f"judge {runner.judge.name} ({runner.judge.backend}, templates {', '.join(summary['templates'])}, "
          f"answers from {args.answer_from}, orders {args.order_mode})")
    print("\n".join(record.count_lines(counts, "turns", "dropped", summary["position_bias"])))
    print(cost_line(summary))
    print(f"wrote {len(table)} rows to {outdir / 'turns.csv'}")
    return 0
