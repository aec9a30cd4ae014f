"""``parlai-acute judge ssa``: a language model labels the items of a static SSA task (sensible, then specific).

Reads an SSA items file (from ``parlai-acute ssa generate``: item_id, context turns, reply,
model); the judge answers "Does the response make sense?" and, only for a reply it says
makes sense, "Is the response specific?" (``Answer: yes|no`` then ``Reason: ...``;
unparseable answers are asked again, then recorded as missing). One reply per item, so
there is no position swap. The SSA task's gold items are judged too and scored. Writes
into ``--outdir``: labels.csv (the SSA labels table, ``worker`` = the judge; ``parlai-acute
ssa analyze --labels`` reads it), onboarding.jsonl (the gold items and the judge's
answers), items.jsonl (exact prompts and raw answers) and summary.json (judge
configuration, templates, seed, answers, onboarding, calls and tokens).

Examples::

    parlai-acute judge ssa --items ssa_items.jsonl --outdir judge_ssa
    parlai-acute ssa analyze --labels judge_ssa/labels.csv --outdir judge_ssa/analysis
"""
from __future__ import annotations

import argparse

from parlai_acute.judges.record import cost_line
from parlai_acute.scripts.judge_options import add_judge_arguments, add_onboarding_arguments, make_runner

NEEDS = ("models",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--items", required=True, help="SSA items .jsonl (from `parlai-acute ssa generate`)")
    parser.add_argument("--sensible-template", default=None, help="template id NAME@VERSION (default: ssa_sensible, newest)")
    parser.add_argument("--specific-template", default=None, help="template id NAME@VERSION (default: ssa_specific, newest)")
    add_onboarding_arguments(parser, "JSON list of gold items {context, reply, sensible[, specific]}",
                             "the SSA task's own")
    add_judge_arguments(parser, orders=False)


def run(args) -> int:
    from parlai_acute.errors import UserError
    from parlai_acute.files import output_dir, write_jsonl
    from parlai_acute.judges import record
    from parlai_acute.ssa.judge import SsaProtocol, onboarding_score
    from parlai_acute.ssa.items import load_gold, read_items
    from parlai_acute.ssa.labels import write_labels

    protocol = SsaProtocol(args.sensible_template, args.specific_template)
    ssa_items = read_items(args.items)[: args.limit]
    gold = [] if args.no_onboarding else load_gold(args.onboarding)
    runner = make_runner(args)
    sensible = runner.run(protocol, protocol.gold_items(gold) + protocol.items(ssa_items))
    says, says_gold = protocol.answers(real(sensible)), protocol.answers(golden(sensible))
    gold_specific = [item for item in protocol.gold_items(gold, "specific") if says_gold.get(item.options[0])]
    specific = runner.run(protocol, gold_specific + protocol.items([i for i in ssa_items if says.get(i.item_id)],
                                                                   "specific"))
    table = protocol.table(ssa_items, real(sensible), real(specific), runner.judge.name, record.run_id(runner))
    specific_gold = protocol.answers(golden(specific))
    score = onboarding_score(gold, golden(sensible), golden(specific))
    counts = {}
    for question, results in (("sensible", sensible), ("specific", specific)):
        said = [v for v in protocol.answers(real(results)).values() if v is not None]
        counts[question] = {**record.status_counts(real(results)), "yes": int(sum(said))}
    same = counts["sensible"]["consistent"] >= 5 and counts["sensible"]["yes"] in (0, counts["sensible"]["consistent"])
    warning = (f"the judge answered {'yes' if counts['sensible']['yes'] else 'no'} to every sensible question: "
               f"it does not tell replies apart (the gold items are all nonsensical, so an always-no judge passes "
               f"them)") if same else ""
    summary = {**record.provenance(runner, [t.id for t in protocol.templates.values()]), "protocol": "ssa",
               "items_file": str(args.items), "items": len(ssa_items), "answers": counts,
               "labels_written": len(table), "sensible": int(table["sensible"].sum()),
               "specific": int(table["specific"].sum()), "onboarding": score, "costs": record.costs(runner),
               "position_swap": "none: one reply per item, nothing to swap",
               "warning": warning}
    with output_dir(args.outdir) as outdir:  # all or nothing (the judge's calls stay in its cache)
        write_labels(outdir / "labels.csv", table)
        record.write_items(outdir / "items.jsonl", sensible + specific, protocol)
        write_jsonl(outdir / "onboarding.jsonl",
                    [{**g, "judge_sensible": says_gold.get(f"gold-{i}"), "judge_specific": specific_gold.get(f"gold-{i}")}
                     for i, g in enumerate(gold)])
        record.write_summary(outdir / "summary.json", summary)
    print(f"judge {runner.judge.name} ({runner.judge.backend}, templates {', '.join(summary['templates'])}, "
          f"answers from {args.answer_from}; one reply per item, no position swap)")
    for question, c in counts.items():
        print(f"{question}: {c['items']} asked, {c['consistent']} answered ({c['yes']} yes), {c['missing']} missing "
              f"({c['orders_missing_unparseable']} unparseable, {c['orders_missing_error']} failed)")
        if c["first_error"]:
            print(f"  first error: {c['first_error']}")
    print(f"labels: {len(table)} of {len(ssa_items)} items, {summary['sensible']} sensible, "
          f"{summary['specific']} specific")
    if score["gold_items"]:
        flag = "passed" if score["passed"] else "FAILED (flagged: do not trust this judge)"
        print(f"onboarding: {score['correct']}/{score['gold_items']} gold items right "
              f"({score['missing']} missing): {flag}")
    if warning:
        print(f"WARNING: {warning}")
    print(cost_line(summary))
    print(f"wrote {len(table)} labels to {outdir / 'labels.csv'}")
    return 0


def golden(results) -> list:
    return [r for r in results if r.item.gold is not None]


def real(results) -> list:
    """The results of the items to label (not the gold items)."""
    return [r for r in results if r.item.gold is None]
