"""``parlai-acute acute import``: other people's pairwise judgments -> an ACUTE judgments table.

Chatbot Arena battles (``--arena FILE``: a JSON list such as ``clean_battle_*.json`` or JSON
lines, with model_a, model_b, winner in model_a / model_b / tie / tie (bothbad), judge, turn,
language) become one judgment per battle: A on the left, the voter as the worker, a tie as
outcome tie and "tie (bothbad)" as both_bad (the column mapping is in
``parlai_acute.acute.imports``). Arena collects no reasons and a voter judges a pair many
times, so analyse with ``--min-reason-chars 0 --max-per-worker none``.

Spot The Bot's annotation dump (``--spot-the-bot FILE``: annotated-dialogues-full-<domain>.json
from jderiu/spot-the-bot-code's data_dump/MongoDump.zip, its sampled-dialogues-full-<domain>.json
beside it or given with --dialogues) becomes one judgment per annotated segment: the
conversation's two speakers are the two sides (both carry the conversation's id), the one
judged more human wins (human > undecided > bot), equal verdicts are a tie (both spotted as
bots: both_bad). Conversations with a human speaker are left out as in the authors' win rates
(--with-humans keeps them). Analyse with ``--min-reason-chars 0 --max-per-worker none``.

  parlai-acute acute import --arena battles.json -o judgments.csv
  parlai-acute acute import --arena battles.jsonl --language English --max-turns 1 -o judgments.csv
  parlai-acute acute import --arena conversations.parquet -o judgments.csv --replies replies.csv
  parlai-acute acute import --spot-the-bot annotated-dialogues-full-convai2.json -o judgments.csv

``--replies FILE`` also writes each reply's length and markdown counts (from ``conv_metadata``, or
counted in ``conversation_a``/``conversation_b``) for ``acute analyze --style-control --replies FILE``.
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import add_output_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--arena", metavar="FILE", help="Chatbot Arena battles (JSON list, JSON lines or Parquet)")
    source.add_argument("--spot-the-bot", metavar="FILE",
                        help="Spot The Bot annotations (annotated-dialogues-full-<domain>.json of the dump)")
    add_output_file(parser, "judgments table (.csv or .jsonl)")
    parser.add_argument("--language", action="append", default=None, metavar="LANG",
                        help="keep battles in this language only (Arena's 'language', e.g. English); repeatable")
    parser.add_argument("--max-turns", type=int, default=None, metavar="N",
                        help="keep battles of at most N turns (Arena's 'turn')")
    parser.add_argument("--replies", metavar="FILE", default=None,
                        help="also write the replies' length and markdown counts (.csv or .jsonl), for "
                             "`acute analyze --style-control --replies FILE`")
    parser.add_argument("--dialogues", metavar="FILE", default=None,
                        help="Spot The Bot conversations (default: sampled-dialogues-full-<domain>.json beside FILE)")
    parser.add_argument("--with-humans", action="store_true",
                        help="Spot The Bot: keep conversations with a human speaker (the authors' win rates leave "
                             "them out)")


def run(args: argparse.Namespace) -> int:
    from parlai_acute.acute.imports import arena_judgments, arena_replies, arena_tables
    from parlai_acute.acute.judgments import write_judgments

    if args.spot_the_bot:
        return _spot_the_bot(args)
    if args.replies:
        table, replies = arena_tables(args.arena, languages=args.language, max_turns=args.max_turns)
        if replies is None:
            arena_replies(args.arena)  # says why there are none, in one line
    else:
        table = arena_judgments(args.arena, languages=args.language, max_turns=args.max_turns)
    write_judgments(args.output, table)
    if args.replies:
        from parlai_acute.acute.replies import write_replies

        write_replies(args.replies, replies)
    counts = table["outcome"].value_counts()
    print(f"{len(table)} battles -> {args.output}: {counts.get('win', 0)} won, {counts.get('tie', 0)} ties, "
          f"{counts.get('both_bad', 0)} both bad; {table['worker'].nunique()} voters, "
          f"{len(set(table['model_left']) | set(table['model_right']))} models")
    if args.replies:
        print(f"{len(replies)} replies' length and markdown ({replies['source'].iloc[0]}) -> {args.replies}")
    print(f"next: parlai-acute acute analyze --judgments {args.output} -o arena_out --min-reason-chars 0 "
          f"--max-per-worker none" + (f" --style-control --replies {args.replies}" if args.replies else ""))
    return 0


def _spot_the_bot(args: argparse.Namespace) -> int:
    from parlai_acute.acute.imports import spot_the_bot_judgments
    from parlai_acute.acute.judgments import write_judgments

    table = spot_the_bot_judgments(args.spot_the_bot, args.dialogues, with_humans=args.with_humans)
    write_judgments(args.output, table)
    counts = table["outcome"].value_counts()
    humans = table.attrs.get("conversations_with_humans_left_out", 0)
    print(f"{len(table)} annotated segments -> {args.output}: {counts.get('win', 0)} won, {counts.get('tie', 0)} "
          f"ties, {counts.get('both_bad', 0)} both spotted as bots (both_bad); {table['worker'].nunique()} "
          f"annotators, {table['dialogue_left'].nunique()} conversations, "
          f"{len(set(table['model_left']) | set(table['model_right']))} systems"
          + (f"; {humans} annotations of conversations with a human speaker left out (--with-humans keeps them)"
             if humans else ""))
    print(f"next: parlai-acute acute analyze --judgments {args.output} -o spot_the_bot_out --min-reason-chars 0 "
          f"--max-per-worker none")
    return 0
