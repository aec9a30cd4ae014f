"""``parlai-acute mephisto``: Mephisto's own command line (``mephisto review``, ``mephisto scripts``,
``mephisto check``, ...) with parlai_acute's compatibility fixes applied first.

Mephisto 1.1.1's console script (``.venv/bin/mephisto``) crashes at start on Python 3.11
(``ValueError: mutable default ... TaskRunArgs``); ``import parlai_acute`` installs the fix
(:mod:`parlai_acute.compat`), so this command is the same CLI, working. Everything after
``mephisto`` is passed to it unchanged; ``--help`` right after ``mephisto`` prints this help and
then Mephisto's list of commands.

parlai-acute mephisto --help
parlai-acute mephisto check
parlai-acute mephisto review --help
"""
from __future__ import annotations

import argparse
import sys


NEEDS = ("live",)  # the extras this command needs beyond the analysis core (main checks them first)

def mephisto_cli(args: list[str]) -> int:
    """Run Mephisto's click CLI on ``args``; its exit code (click's ``SystemExit`` turned into one)."""
    import parlai_acute  # noqa: F401 - the compatibility fixes, before Mephisto is imported
    from mephisto.client.cli import cli

    try:
        cli.main(args=list(args), prog_name="parlai-acute mephisto", standalone_mode=True)
    except SystemExit as done:
        code = done.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


class _Help(argparse.Action):
    """``parlai-acute mephisto --help``: this command's help, then Mephisto's own commands."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.print_help()
        print("\nMephisto's commands (`parlai-acute mephisto COMMAND --help` for each):\n")
        sys.stdout.flush()
        try:
            code = mephisto_cli(["--help"])
        except ModuleNotFoundError:  # an analysis-only install: the help still says what to install
            from parlai_acute import extras

            print(f"(none here: Mephisto comes with the live extra, not installed: {extras.pip_line(['live'])})")
            code = 0
        parser.exit(code)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser._optionals.conflict_handler = "resolve"  # our -h/--help replaces argparse's
    parser.add_argument("-h", "--help", action=_Help, help="show this help and Mephisto's commands, then exit")
    parser.add_argument("mephisto_args", nargs=argparse.REMAINDER, metavar="ARGS",
                        help="Mephisto's command and its arguments, passed on unchanged")


def run(args: argparse.Namespace) -> int:
    return mephisto_cli(args.mephisto_args)
