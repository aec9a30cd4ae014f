"""The options every command spells the same way (one vocabulary for the CLI).

* ``-o/--output-dir`` a directory of results (``--outdir`` still accepted); ``--output`` one file;
* ``--confidence`` the level of every interval (``--level`` still accepted, with a note);
* ``--alpha`` the significance level of marks and decisions, familywise (never an interval's level);
* ``--people`` the people's table beside a judge's ``--judge-table`` (``--human`` still accepted);
* ``--seed``, ``--bootstrap`` (resamples, 0: none), ``--no-report`` (tables and JSON only);
* ``--task-name`` / ``--mephisto-db``: read a Mephisto run instead of a table file;
* ``--progress`` / ``--no-progress``: the progress bar on stderr (default: only on a terminal).
"""
from __future__ import annotations

import argparse
import sys


class DeprecatedAlias(argparse.Action):
    """Stores like the option it stands for, and says once on stderr which spelling to use.

    ``convert``: for an old option whose value meant the same idea the other way round (``ppi
    --alpha A`` was the interval level ``1 - A``), the new option's value from the old one's; the
    note then says how the one became the other."""

    def __init__(self, option_strings, dest, preferred: str, convert=None, says: str = "", **kwargs):
        self.preferred, self.convert, self.says = preferred, convert, says
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if self.convert is None:
            print(f"parlai-acute: note: {option_string} is now spelled {self.preferred}; it still works",
                  file=sys.stderr)
            setattr(namespace, self.dest, values)
            return
        value = self.convert(values)
        print(f"parlai-acute: note: {option_string} is now {self.preferred} ({self.says}): {option_string} "
              f"{values:g} was read as {self.preferred} {value:g}", file=sys.stderr)
        setattr(namespace, self.dest, value)


def add_model(parser: argparse.ArgumentParser, what: str = "") -> None:
    """``-m/--model MODEL``: the model string of ``chat``, ``self-chat`` and ``metrics score`` (``what``
    says what the model does there)."""
    from parlai_acute.worlds.model_spec import MODEL_HELP

    parser.add_argument("-m", "--model", default=None, metavar="MODEL", help=what + MODEL_HELP)


def add_output_dir(parser: argparse.ArgumentParser, what: str = "the tables, JSON results and report",
                   required: bool = True) -> None:
    parser.add_argument("-o", "--output-dir", "--outdir", dest="outdir", required=required, metavar="DIR",
                        default=None, help=f"directory for {what} (made if missing; files of the same names are "
                                            f"replaced, others left; a run that fails writes nothing there)"
                                            + ("" if required else "; default: print only"))


def add_output_file(parser: argparse.ArgumentParser, what: str, *aliases: str, metavar: str = "FILE") -> None:
    """``-o/--output FILE`` (plus older spellings in ``aliases``, e.g. ``--outfile``)."""
    parser.add_argument("-o", "--output", *aliases, dest="output", required=True, metavar=metavar,
                        help=f"{what} to write")


def add_confidence(parser: argparse.ArgumentParser, level_alias: bool = False, default: float = 0.95) -> None:
    parser.add_argument("--confidence", type=float, default=default,
                        help=f"level of every interval (default: {default})")
    if level_alias:
        parser.add_argument("--level", dest="confidence", type=float, action=DeprecatedAlias,
                            preferred="--confidence", help=argparse.SUPPRESS)


MARKS = "the marks (* p < alpha, ** p < alpha/5), familywise: Holm within each family of comparisons"


def add_alpha(parser: argparse.ArgumentParser, what: str = MARKS, default: float = 0.05) -> None:
    """``--alpha``: a significance level, of marks or decisions (``what``), never an interval's level
    (that is ``--confidence``)."""
    parser.add_argument("--alpha", type=float, default=default,
                        help=f"significance level of {what} (default: {default})")


def add_people(parser: argparse.ArgumentParser) -> None:
    """``--people FILE``: the people's table a judge's ``--judge-table`` is set beside (``--human`` still
    accepted, with a note)."""
    either = parser.add_mutually_exclusive_group(required=True)
    either.add_argument("--people", metavar="FILE", help="the people's table (.csv or .jsonl)")
    either.add_argument("--human", dest="people", action=DeprecatedAlias, preferred="--people", help=argparse.SUPPRESS)


def add_resampling(parser: argparse.ArgumentParser, bootstrap: str = "bootstrap resamples (0: none)",
                   seed: str = "random seed of the bootstrap", default_seed: int = 0) -> None:
    parser.add_argument("--bootstrap", type=int, default=1000, help=f"{bootstrap} (default: 1000)")
    parser.add_argument("--seed", type=int, default=default_seed, help=f"{seed} (default: {default_seed})")


def add_report_switch(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-report", action="store_true", help="write tables and JSON only (no report.html)")


def outputs_line(paths: dict, results: str = "results.json") -> str:
    """The last line every ``analyze`` prints: where its report is, or with --no-report its results."""
    return f"report: {paths['report.html']}" if "report.html" in paths else f"results: {paths[results]}"


def add_table_source(parser: argparse.ArgumentParser, option: str, what: str, task: str,
                     required: bool = True) -> None:
    """A table file (``option``) or a Mephisto run (``--task-name``), and ``--mephisto-db``."""
    source = parser.add_mutually_exclusive_group(required=required)
    source.add_argument(option, metavar="FILE", help=f"read the {what} table from a .csv, .jsonl or .parquet file")
    source.add_argument("--task-name", help=f"read every {what.rstrip('s')} stored for this Mephisto {task} task "
                                            f"(its mephisto.task.task_name)")
    add_mephisto_db(parser)


def add_exclusion_rules(parser: argparse.ArgumentParser, cap_default: str) -> None:
    """ACUTE's two switchable quality rules, one spelling for ``acute analyze`` and ``status``:
    ``--max-per-worker N|none`` (read with :func:`cap_value`) and ``--min-reason-chars N`` (0: no
    reasons were collected, as in released data such as Chatbot Arena's or Spot The Bot's)."""
    parser.add_argument("--max-per-worker", default=None, metavar="N|none",
                        help="cap on judgments per worker, or 'none' for no cap (released data whose workers judged "
                             f"a pair many times); default: {cap_default}")
    parser.add_argument("--min-reason-chars", type=int, default=3,
                        help="a reason with fewer letters/digits counts as no reason; 0: no reasons were collected "
                             "(the rule is off; the summary says so)")


def cap_value(text: str | None):
    """``--max-per-worker``: a whole number of at least 1, or ``none`` (no cap); one line otherwise."""
    from parlai_acute.errors import UserError

    if text is None or text.strip().lower() == "none":
        return text and "none"
    try:
        return int(text)  # 0 or less: the analysis refuses it, in words the command line gives its flag
    except ValueError:
        raise UserError(f"--max-per-worker must be a whole number of at least 1, or 'none' for no cap; got {text!r}") \
            from None


def add_mephisto_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mephisto-db", metavar="PATH", default=None,
                        help="Mephisto database.db (default: the one in Mephisto's configured data directory)")


def add_progress(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="show a progress bar with an estimate on stderr even when it is not a terminal")
    group.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bar (default: shown when stderr is a terminal)")


def progress(args, total: int | None, desc: str, unit: str = "it"):
    """A tqdm bar on stderr (elapsed, rate, time left), or a no-op one: off when stderr is not a
    terminal unless ``--progress``; ``--no-progress`` always off."""
    from tqdm import tqdm

    wanted = getattr(args, "progress", None)
    disable = (not sys.stderr.isatty()) if wanted is None else not wanted
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=disable, dynamic_ncols=True)
