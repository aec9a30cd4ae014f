"""``parlai-acute ssa generate``: the items an SSA labelling task shows (a reply in its context).

Static SSA: every ``--model NAME=SPEC`` answers every context once (the packaged static
contexts, 1-3 turns of real human conversations, or ``--contexts FILE``: .jsonl or .csv
with a 'context' column); ``--human`` adds the real next turns as the replies of a model
named "human". Labelling existing conversations: ``--from-log LOG --speaker ID`` makes an
item of every turn of that speaker, its context the turns before it. Writes ``-o`` (JSON
lines: item, context_id, context, model, reply, source, decoding, model_config).

  parlai-acute ssa generate --model smol=parlai_acute.agents.llama_cpp:LlamaCppAgent --model generic=parlai_acute.agents.generic_bot:GenericBotAgent --human --num-contexts 50 -o items.jsonl
  parlai-acute ssa generate --contexts my_contexts.csv --model "smol=parlai_acute.agents.llama_cpp:LlamaCppAgent --max-new-tokens 32" -o items.jsonl
  parlai-acute ssa generate --from-log logs/me_vs_smollm2.jsonl --speaker LlamaCpp -o items.jsonl
"""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError
from parlai_acute.scripts.options import add_progress, progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from parlai_acute.worlds.model_spec import MODEL_HELP

    parser.add_argument("--model", action="append", default=[], metavar="NAME=SPEC",
                        help=f"a model to generate replies with, named; repeat for several. SPEC is {MODEL_HELP}")
    parser.add_argument("--human", action="store_true", help="also label the real next turns, as model 'human'")
    parser.add_argument("--contexts", metavar="FILE", help="contexts from a .jsonl or .csv file (default: the packaged "
                                                           "static contexts)")
    parser.add_argument("--num-contexts", type=int, default=50, help="packaged static contexts to use")
    parser.add_argument("--max-turns", type=int, default=3, help="longest packaged context (1-3 turns)")
    parser.add_argument("--context-seed", type=int, default=0, help="which packaged contexts (a fixed function of it)")
    parser.add_argument("--split", choices=["train", "valid", "test"], default="test", help="packaged contexts' split")
    parser.add_argument("--from-log", metavar="LOG", action="append", default=[],
                        help="a Conversations log whose turns of --speaker become items (repeatable)")
    parser.add_argument("--speaker", help="with --from-log: the speaker id whose turns are labelled")
    parser.add_argument("--model-name", help="with --from-log: the model name to record (default: the speaker id)")
    parser.add_argument("-b", "--batchsize", type=int, default=4, help="contexts per batch for this package's wrappers")
    parser.add_argument("--datapath", default=None, help="ParlAI --datapath (default: the package's data directory)")
    parser.add_argument("-o", "--output", "--outfile", dest="outfile", required=True, metavar="FILE",
                        help="the items file to write (.jsonl)")
    add_progress(parser)


def _named(value: str) -> tuple[str, str]:
    name, sep, spec = value.partition("=")
    if not sep or not name.strip() or not spec.strip() or " " in name.strip():
        raise UserError(f"--model {value!r} must be NAME=SPEC, e.g. generic=parlai_acute.agents.generic_bot:GenericBotAgent")
    return name.strip(), spec.strip()


def run(args) -> int:
    from parlai_acute.ssa.generate import model_items, packaged_contexts
    from parlai_acute.ssa.items import human_items, items_from_log, read_contexts, write_items

    if not args.outfile.lower().endswith(".jsonl"):
        raise UserError(f"-o {args.outfile} must end in .jsonl")
    models = [_named(m) for m in args.model]
    names = [n for n, _ in models] + (["human"] if args.human else [])
    if len(set(names)) != len(names):
        raise UserError("two models have the same name; give each --model a different NAME")
    items = []
    if args.from_log:
        if not args.speaker:
            raise UserError("--from-log needs --speaker, the speaker id whose turns are labelled")
        for log in args.from_log:
            items += items_from_log(log, args.speaker, args.model_name)
    if models or args.human or not args.from_log:
        if not models and not args.human:
            raise UserError("nothing to generate: give --model NAME=SPEC (repeatable), --human, or --from-log")
        contexts = (read_contexts(args.contexts) if args.contexts else
                    packaged_contexts(args.num_contexts, args.context_seed, args.max_turns, args.split))
        if args.human:
            items += human_items(contexts)
        if models:
            from parlai_acute.paths import default_datapath
            from parlai_acute.worlds.model_spec import create_agent_checked, model_opt

            datapath = args.datapath or default_datapath()
            for name, spec in models:
                agent = create_agent_checked(model_opt(spec, datapath, what=f"--model {name!r}", param=None))
                with progress(args, len(contexts), f"{name} replies", unit="context") as bar:
                    mine = model_items(name, spec, agent, contexts, batchsize=args.batchsize, progress=bar.update)
                items += mine
                print(f"{name}: {len(mine)} replies")
    count = write_items(args.outfile, items)
    per_model = {}
    for item in items:
        per_model[item["model"]] = per_model.get(item["model"], 0) + 1
    print(f"wrote {count} items to {args.outfile}: " + ", ".join(f"{m} {n}" for m, n in per_model.items()))
    return 0
