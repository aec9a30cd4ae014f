"""``parlai-acute release``: a bundle of a Mephisto run ready to publish.

Writes into the output directory the protocol tables the run stored (per-turn runs: also their
SSA labels, ConvAI2 ratings and the Conversations log), the per-worker review table, every
worker id replaced by a stable salted pseudonym (``worker_`` + 16 hex digits: HMAC-SHA256 of the
id with the salt), ``pii_flags.json`` (free text holding an e-mail address or a phone number:
flagged, not changed) and a datasheet (``datasheet.md``, ``datasheet.json``: what was asked, pay,
units, exclusions and why, quality checks, configuration, package version). The salt is read from
--salt-file, or generated there, always outside the bundle: keep it to give the same workers the
same pseudonyms in a later bundle, never publish it. README.md is a dataset card naming each CSV
table as a configuration: ``datasets.load_dataset(DIR, "judgments")`` reads it. See
docs/review_and_release.md.

parlai-acute release --task-name my-acute-task --mephisto-db data/database.db -o release/
parlai-acute release --task-name my-per-turn-task -o release/ --salt-file ~/secrets/study.salt
"""
from __future__ import annotations

import argparse

from parlai_acute.scripts.options import add_mephisto_db, add_output_dir


NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task-name", required=True, help="the Mephisto task (its mephisto.task.task_name)")
    add_mephisto_db(parser)
    add_output_dir(parser, "the bundle")
    parser.add_argument("--salt-file", metavar="FILE", default=None,
                        help="the pseudonyms' salt: read, or generated and written when absent (default: "
                             "DIR.salt beside the bundle; never inside it)")


def run(args) -> int:
    from parlai_acute.files import check_outdir
    from parlai_acute.mephisto_tasks.live.database import open_mephisto_db
    from parlai_acute.mephisto_tasks.live.release import release

    check_outdir(args.outdir)
    done = release(open_mephisto_db(args.mephisto_db), args.task_name, args.outdir, args.salt_file)
    for path in done["files"]:
        print(f"wrote {path}")
    print(f"{done['workers']} worker ids replaced by pseudonyms; salt "
          f"{'generated in' if done['salt_created'] else 'read from'} {done['salt_file']} (keep it, do not publish it)")
    print(f"{done['pii_flags']} e-mail addresses or phone numbers flagged in pii_flags.json (not changed): "
          f"{'check them before publishing' if done['pii_flags'] else 'none found'}")
    return 0
