"""``parlai-acute metrics logs``: ConvAI2-style statistics of Conversations logs, per speaker.

For each log and speaker (models; people in human-model logs; seed turns belong to no
one): words and characters per utterance, rare words (Freq1h / Freq1k against a reference
corpus, default: the chitchat corpus), unigram/bigram/trigram repeats within an
utterance and against the speaker's earlier turns, unique responses, questions (question
word first, question mark) and persona copying. Writes report.html (with
plots; the table as LaTeX/Markdown in tables/), logs_table.csv and run.json.

Examples:
  parlai-acute metrics logs smol=logs/smollm2.jsonl generic=logs/generic.jsonl -o logs_out/
  parlai-acute metrics logs logs/me_vs_smollm2.jsonl --human-ids localHuman --reference-corpus corpus.txt -o out/
"""
from __future__ import annotations

import argparse
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.scripts.options import add_output_dir

SHOWN = ["log", "speaker", "role", "utterances", "words_per_utt", "chars_per_utt", "freq1h", "freq1k",
         "repeat_within_1", "repeat_within_2", "repeat_within_3", "repeat_self_1", "repeat_self_2", "repeat_self_3",
         "unique_share", "question_word", "question_mark", "persona_copy"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from parlai_acute.logs import HUMAN_IDS

    parser.add_argument("logs", nargs="+", metavar="[NAME=]LOG", help="Conversations logs (.jsonl), optionally named")
    parser.add_argument("--human-ids", default=",".join(HUMAN_IDS),
                        help=f"speaker ids that are people, comma-separated (default: {','.join(HUMAN_IDS)})")
    parser.add_argument("--reference-corpus", default=None, metavar="FILE",
                        help="word counts for Freq1h/Freq1k: a text file (one utterance a line) or word<TAB>count "
                             "lines (default: every turn of chitchat-dataset)")
    parser.add_argument("--persona-threshold", type=float, default=0.8,
                        help="a turn copies a persona line when this share of the line's tokens is in it (default: 0.8)")
    add_output_dir(parser, "the result files")


def named_logs(specs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        if not name or not path:
            raise UserError(f"{spec!r}: write NAME=LOG or just LOG")
        if name in out:
            raise UserError(f"two logs are named {name!r}; name them NAME=LOG")
        out[name] = path
    return out


def run(args) -> int:
    from parlai_acute.files import output_dir
    from parlai_acute.logs import read_log
    from parlai_acute.metrics.loganalytics import LogsConfig, analyse_episodes
    from parlai_acute.metrics.reports import logs_report
    from parlai_acute.metrics.tables import write_csv, write_run
    from parlai_acute.metrics.wordcounts import corpus_name, default_counts, read_counts

    if not 0 < args.persona_threshold <= 1:
        raise UserError(f"--persona-threshold {args.persona_threshold} must be in (0, 1]")
    paths = named_logs(args.logs)
    logs = {name: read_log(path) for name, path in paths.items()}
    counts = read_counts(args.reference_corpus) if args.reference_corpus else default_counts()
    config = LogsConfig(human_ids=tuple(h.strip() for h in args.human_ids.split(",") if h.strip()),
                        persona_threshold=args.persona_threshold)
    table = analyse_episodes(logs, config, counts)
    run_config = {"human_ids": list(config.human_ids), "persona_threshold": config.persona_threshold,
                  "rare_thresholds": list(config.rare_thresholds), "reference_corpus": corpus_name(args.reference_corpus),
                  "reference_words": int(sum(counts.values())), "seed": None,
                  "tokenisation": "words (lowercase Unicode words)"}
    with output_dir(args.outdir) as outdir:  # all or nothing
        write_csv(table, outdir / "logs_table.csv")
        write_run(outdir, "metrics logs", run_config, logs={k: str(v) for k, v in paths.items()})
        logs_report(table, run_config).write(outdir)
    print(table[SHOWN].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"report: {outdir}/report.html (tables/logs_table.tex|md, logs_table.csv, run.json)")
    return 0
