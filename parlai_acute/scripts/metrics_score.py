"""``parlai-acute metrics score``: reference-based scores of a model's replies, single- and multi-reference.

F1 (ParlAI's), BLEU-1..4 (sentence: best over references; corpus: all references,
sacrebleu), ROUGE-L (rouge-score), METEOR (nltk, Debian's WordNet), chrF, and embedding
average / extrema / greedy matching (all-MiniLM-L6-v2 token vectors), each against the
first reference and against all; distinct-1/2 and Self-BLEU of the replies. Replies come
from a file (--replies) or from any ParlAI agent (--model). Writes report.html
(tables as LaTeX/Markdown in tables/, figures in figures/), per_item.csv, summary.csv,
diversity.json and run.json (configuration, seed, signatures).

Examples:
  parlai-acute metrics score --data test.jsonl --replies replies.jsonl -o out/
  parlai-acute metrics score -t static_contexts --num-contexts 50 -m parlai_acute.agents.constant_reply:ConstantReplyAgent -o toy/
"""
from __future__ import annotations

import argparse

from parlai_acute.errors import UserError
from parlai_acute.scripts.metrics_options import (add_metric_arguments, add_test_set_arguments, load_test_set,
                                                  score_config, test_set_description)
from parlai_acute.scripts.options import add_model, add_output_dir, add_progress, progress

NEEDS = ("metrics",)  # the extras this command needs beyond the analysis core (main checks them first)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_test_set_arguments(parser)
    replies = parser.add_argument_group("replies (one of --replies, --model; a CSV may carry a reply column)")
    replies.add_argument("--replies", default=None, metavar="FILE",
                         help="JSON lines {id, reply} (several per id: several hypotheses) or one reply per line")
    add_model(replies, "generate the replies: ")
    replies.add_argument("--reply-column", default="reply", help="CSV: the column holding the model reply")
    replies.add_argument("-b", "--batchsize", type=int, default=4, help="contexts answered at once (default: 4)")
    replies.add_argument("--save-replies", default=None, metavar="FILE", help="also write generated replies here")
    add_metric_arguments(parser)
    parser.add_argument("--self-bleu-sample", type=int, default=200,
                        help="Self-BLEU over at most this many replies, sampled with --seed (default: 200)")
    add_output_dir(parser, "the result files")
    add_progress(parser)


def get_replies(args, items) -> tuple[dict, str]:
    from parlai_acute.metrics.replies import build_agent, generate_replies, match_replies, read_replies

    given = [flag for flag, value in (("--replies", args.replies), ("--model", args.model)) if value]
    if len(given) > 1:
        raise UserError("give only one of --replies and --model")
    if args.replies:
        return read_replies(args.replies, items), f"file {args.replies}"
    if args.model:
        agent = build_agent(args.model, args.datapath, ["--batchsize", str(args.batchsize)])  # llama.cpp sizes its slots by it
        with progress(args, len(items), "replies", unit="context") as bar:
            replies = generate_replies(agent, items, args.batchsize, bar.update)
        if args.save_replies:
            from parlai_acute.files import write_jsonl

            write_jsonl(args.save_replies, ({"id": k, "reply": v[0]} for k, v in replies.items()))
        return replies, f"model {args.model}"
    in_csv = {it.id: [it.extra["reply"]] for it in items if "reply" in it.extra}
    if in_csv:
        return match_replies(in_csv, items, f"{args.data} column {args.reply_column!r}"), f"column {args.reply_column}"
    raise UserError("no replies: give --replies FILE, --model MODEL, or a CSV with a reply column")


def run(args) -> int:
    from parlai_acute.files import output_dir, write_json
    from parlai_acute.metrics.reports import score_report
    from parlai_acute.metrics.score import score
    from parlai_acute.metrics.tables import write_csv, write_run
    from parlai_acute.report.tables import interval_text

    if args.batchsize < 1:
        raise UserError(f"--batchsize must be at least 1, got {args.batchsize}")
    config = score_config(args, self_bleu_sample=args.self_bleu_sample)
    items = load_test_set(args)
    replies, source = get_replies(args, items)
    with progress(args, None, "scoring", unit="metric") as bar:
        result = score(items, replies, config, progress=bar)
    with output_dir(args.outdir) as outdir:  # all or nothing
        write_csv(result.per_item, outdir / "per_item.csv")
        write_csv(result.summary, outdir / "summary.csv")
        write_json(outdir / "diversity.json", result.diversity)
        write_run(outdir, "metrics score", result.config, result.signatures, test_set=test_set_description(args),
                  replies=source)
        score_report(result, config, source).write(outdir)
    print(f"{len(items)} contexts, {result.config['references']} references, {result.config['empty_replies']} "
          f"empty replies ({source})")
    width = max([14] + [len(m) + 1 for m in result.summary["metric"]])  # corpus_coco_bleu4 is longer
    print(f"{'metric':<{width}} {'level':<9} {'single-ref':>24} {'multi-ref':>24}")
    missing = []
    for row in result.summary.itertuples(index=False):
        cells = [interval_text(getattr(row, kind), getattr(row, f"{kind}_low"), getattr(row, f"{kind}_high"), 4)
                 for kind in ("single", "multi")]
        print(f"{row.metric:<{width}} {row.level:<9} {cells[0]:>24} {cells[1]:>24}")
        missing += [(getattr(row, f"{kind}_note"), f"{row.metric} {kind}-ref") for kind in ("single", "multi")
                    if getattr(row, f"{kind}_note")]
    for why in dict.fromkeys(w for w, _ in missing):  # one line per reason, in order
        cells = [cell for w, cell in missing if w == why]
        print(f"  no interval ({why}): " + ("every score" if len(cells) == 2 * len(result.summary) else ", ".join(cells)))
    div = result.diversity
    print("diversity: " + ", ".join(f"{k} {div[f'{k}_note'] or 'undefined'}" if div.get(f"{k}_note") else
                                    f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                    for k, v in div.items() if not k.endswith("_note")))
    for signature in result.signatures.values():
        print(f"  {signature['signature']}")
    print(f"report: {outdir}/report.html (tables/summary.tex|md, per_item.csv, run.json)")
    return 0

