"""``parlai-acute judge acute``: a language model judges the comparisons of an ACUTE-Eval pairings file.

Every comparison is shown in both orders (position swap); the answer must be ``Answer: 1|2``
then ``Reason: ...`` (or, with ``--answer-from logprobs``, is read from the answer
token's probabilities); unparseable answers are asked again, then recorded as missing.
The gold (onboarding) pairs are judged too and scored. Writes into ``--outdir``:
judgments.csv (resolved, the judgments table ``acute analyze`` reads), raw_judgments.csv
(every order), onboarding.csv, items.jsonl (exact prompts and raw answers),
summary.json (judge configuration, templates, seed, consistency, position bias,
onboarding, calls and tokens). ``--analyze`` also runs the ACUTE analysis on the judge's
judgments into OUTDIR/analysis.

Examples::

    parlai-acute judge acute --pairings pairings.jsonl --outdir judge_out
    parlai-acute judge acute --pairings pairings.jsonl --question humanlike --answer-from logprobs \\
        --judge="-m parlai_acute.agents.openai_compat:OpenAICompatAgent --openai-base-url http://127.0.0.1:8080/v1" \\
        --outdir judge_out
"""
from __future__ import annotations

import argparse

from parlai_acute.judges.record import cost_line
from parlai_acute.scripts.judge_options import add_judge_arguments, add_onboarding_arguments, make_runner

NEEDS = ("models",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pairings", required=True, help="pairings .jsonl (from `parlai-acute acute pairings` or ParlAI's)")
    parser.add_argument("--question", default="engaging",
                        help="question preset: engaging, interesting, humanlike, knowledgeable (default: engaging)")
    parser.add_argument("--custom-question", default=None, help="your own question text (key 'custom')")
    parser.add_argument("--template", default=None,
                        help="prompt template id NAME@VERSION (default: acute_<question>, or acute_<question>_tie with "
                             "--allow-tie; newest)")
    parser.add_argument("--allow-tie", action="store_true",
                        help="the judge may answer 'tie' (a study that offers people a tie); a tie in every order is "
                             "a judgment with outcome tie (default: the paper's forced choice)")
    add_onboarding_arguments(parser, "gold pairs to score the judge on", "the pairings file's own, else the "
                                                                          "package's five")
    parser.add_argument("--analyze", action="store_true",
                        help="run the ACUTE analysis on the judge's judgments into OUTDIR/analysis")
    add_judge_arguments(parser)


def run(args) -> int:
    from parlai_acute.acute.analysis import AnalysisConfig, write_outputs
    from parlai_acute.acute.judgments import write_judgments
    from parlai_acute.acute.pairings import read_onboarding, read_pairings
    from parlai_acute.errors import UserError
    from parlai_acute.files import output_dir
    from parlai_acute.judges import record
    from parlai_acute.acute.judge import AcuteProtocol, onboarding_score

    protocol = AcuteProtocol(args.question, args.custom_question, args.template, allow_tie=args.allow_tie)
    lines = read_pairings(args.pairings)
    comparisons = [p for p in lines if not p["is_onboarding"]][: args.limit]
    if not comparisons:
        raise UserError(f"{args.pairings} has no comparisons (only gold pairs); build one with `parlai-acute acute pairings`")
    if args.no_onboarding:
        gold = []
    elif args.onboarding:
        gold = read_onboarding(args.onboarding)
    else:
        gold = [p for p in lines if p["is_onboarding"]] or read_onboarding()
    runner = make_runner(args)
    items = protocol.items(gold + comparisons)
    results = runner.run(protocol, items)
    tables = protocol.tables(results, runner.judge.name, record.run_id(runner), args.inconsistent)
    real = [r for r in results if r.item.gold is None]
    counts = record.status_counts(real)
    onboarding = onboarding_score(results)
    summary = {**record.provenance(runner, [protocol.template.id]), "protocol": "acute", "pairings": str(args.pairings),
               "question_key": protocol.question_key, "question": protocol.question, "allow_tie": protocol.allow_tie,
               "items": counts,
               "judgments_written": len(tables["judgments"]), "position_bias": record.bias(real),
               "onboarding": onboarding, "costs": record.costs(runner)}
    with output_dir(args.outdir) as outdir:  # all or nothing (the judge's calls stay in its cache)
        for name in ("judgments", "raw", "onboarding"):
            write_judgments(outdir / ("raw_judgments.csv" if name == "raw" else f"{name}.csv"), tables[name])
        record.write_items(outdir / "items.jsonl", results, protocol)
        record.write_summary(outdir / "summary.json", summary)
        if args.analyze:
            if tables["judgments"].empty:
                raise UserError("the judge produced no usable judgments to analyze; run without --analyze to keep "
                                "its answers in items.jsonl (its calls are cached: nothing is asked twice)")
            from parlai_acute import api

            # exactly what `acute analyze --judgments judgments.csv` does with this table and its summary.json
            table = api.load_table("acute", tables["judgments"])
            table.attrs["source"] = str(outdir / "judgments.csv")
            result = api.analyze("acute", table, AnalysisConfig(seed=args.seed), warn=False, judges=[summary])
            paths = write_outputs(result, outdir / "analysis")
    print(f"judge {runner.judge.name} ({runner.judge.backend}, template {protocol.template.id}, "
          f"answers from {args.answer_from}, orders {args.order_mode})")
    print("\n".join(record.count_lines(counts, "comparisons", f"rule: {args.inconsistent}", summary["position_bias"])))
    if onboarding["gold_items"]:
        flag = "passed" if onboarding["passed"] else "FAILED (flagged: do not trust this judge)"
        print(f"onboarding: {onboarding['orders_correct']}/{onboarding['orders']} gold orders correct, "
              f"{onboarding['items_correct_every_order']}/{onboarding['gold_items']} gold pairs right in every order: {flag}")
    print(cost_line(summary))
    print(f"wrote {len(tables['judgments'])} judgments to {outdir / 'judgments.csv'}")
    if args.analyze:
        print(f"analysis: {paths['report.html']}")
    return 0
