"""The ``parlai-acute`` console script.

Subcommands are registered lazily as ``module`` names (each module defines
``add_arguments(parser)`` and ``run(args) -> int``), so ``--help`` is fast and a broken
optional dependency only affects its own subcommand.
"""
from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from parlai_acute import extras
from parlai_acute.errors import UserError

# name -> (module, one-line help[, defaults the module's run reads]). Groups are nested dicts.
COMMANDS: dict = {
    "self-chat": ("parlai_acute.scripts.self_chat", "run model-model conversations and write a ParlAI Conversations log"),
    "chat": ("parlai_acute.scripts.chat", "chat with a model in the terminal and save the conversation as a Conversations log"),
    "demo": ("parlai_acute.scripts.demo", "end-to-end run on the embedded default model (what `make demo` runs)"),
    "ppi": ("parlai_acute.scripts.ppi", "people's judgments corrected by a model judge's (prediction-powered inference): results beside people-only, the judge's worth, planning"),
    "mephisto": ("parlai_acute.scripts.mephisto_cli", "Mephisto's own CLI (review tool, scripts, check) with the compatibility fixes it needs on Python 3.11"),
    "review": ("parlai_acute.scripts.review", "review every worker of a Mephisto run from the stored evidence, propose and apply approve/reject/block/bonus, pay to a wage"),
    "release": ("parlai_acute.scripts.release", "a run's tables and logs ready to publish: salted worker pseudonyms, e-mail/phone flags, a datasheet"),
    "serve": ("parlai_acute.scripts.serve", "serve the embedded model (or any GGUF) as an OpenAI-compatible endpoint for models and judges (--openai-base-url)"),
    "status": ("parlai_acute.scripts.status", "where a running ACUTE, per-turn or SSA evaluation stands: intervals valid at every look, what is decided, judgments still needed"),
    "acute": {
        "_help": "ACUTE-Eval: pairings, Mephisto task, analysis, sample size",
        "pairings": ("parlai_acute.acute.cli.pairings", "turn Conversations logs into an ACUTE-Eval pairings file"),
        "launch": ("parlai_acute.acute.cli.launch", "serve the ACUTE-Eval Mephisto task (local by default, MTurk by config)"),
        "analyze": ("parlai_acute.acute.cli.analyze", "win rates, significance, Bradley-Terry ranking and an HTML report"),
        "export": ("parlai_acute.scripts.export", "write the judgments a Mephisto run stored to a judgments table file", {"protocol": "acute"}),
        "import": ("parlai_acute.acute.cli.importer", "other people's pairwise judgments (Chatbot Arena battles) to a judgments table file"),
        "power": ("parlai_acute.acute.cli.power", "how many judgments are needed to detect a win-rate difference"),
        "fast": ("parlai_acute.acute.cli.fast", "model configurations to results in one command (self-chats, pairings, launch, analysis)"),
    },
    "per-turn": {
        "_help": "per-turn interactive evaluation: people chat with live models and judge every turn's replies",
        "launch": ("parlai_acute.per_turn.cli.launch", "serve the per-turn Mephisto task with live models (PM, MM, SM; SOBA, SATA)"),
        "demo": ("parlai_acute.per_turn.cli.demo", "a short multi-model SATA-User per-turn evaluation on the embedded model"),
        "analyze": ("parlai_acute.per_turn.cli.analyze", "pick rates, paired tests, dialogue-level bootstrap, flags, settings side by side"),
        "export": ("parlai_acute.scripts.export", "write the turns a Mephisto run stored to a turns table file", {"protocol": "per-turn"}),
        "power": ("parlai_acute.per_turn.cli.power", "how many turns a per-turn design needs, and what a budget detects"),
    },
    "judge": {
        "_help": "models as judges: a language model answers a protocol, and its agreement with people",
        "acute": ("parlai_acute.acute.cli.judge", "a model judges the comparisons of an ACUTE-Eval pairings file"),
        "per-turn": ("parlai_acute.per_turn.cli.judge", "a model judges the turns of a per-turn evaluation (SOBA, SATA, SM)"),
        "ssa": ("parlai_acute.ssa.cli.judge", "a model labels SSA items: does the reply make sense, is it specific"),
        "agreement": ("parlai_acute.scripts.judge_agreement", "agreement of judge and human judgments on the same items, with the human-human ceiling"),
    },
    "metrics": {
        "_help": "automatic metrics: reference-based scores, ranking and perplexity, log analytics, correlation with people",
        "score": ("parlai_acute.scripts.metrics_score", "reference-based scores (F1, BLEU, ROUGE-L, METEOR, chrF, embedding metrics) and diversity, single- and multi-reference"),
        "rank": ("parlai_acute.scripts.metrics_rank", "perplexity of gold replies and hits@1/N with and without the parrot"),
        "logs": ("parlai_acute.scripts.metrics_logs", "ConvAI2-style statistics of Conversations logs per speaker"),
        "correlate": ("parlai_acute.scripts.metrics_correlate", "correlation of the metrics with human ratings; perplexity vs human scores"),
    },
    "ssa": {
        "_help": "sensibleness and specificity (Meena's SSA): items to label, labelling task, analysis",
        "launch": ("parlai_acute.ssa.cli.launch", "serve the static SSA labelling Mephisto task over an items file"),
        "generate": ("parlai_acute.ssa.cli.generate", "items to label: each model's reply to fixed contexts, or the model turns of a log"),
        "analyze": ("parlai_acute.ssa.cli.analyze", "sensibleness, specificity and SSA per model with intervals, agreement, report"),
        "export": ("parlai_acute.scripts.export", "write the SSA labels a Mephisto run stored (labelling or per-turn runs) to a labels table file", {"protocol": "ssa"}),
        "power": ("parlai_acute.ssa.cli.power", "how many labels, workers and contexts a static SSA design needs to detect a difference"),
    },
    "convai2": {
        "_help": "ConvAI2's human evaluation: end-of-chat Likert ratings and persona detection",
        "analyze": ("parlai_acute.convai2.cli.analyze", "Likert means, Bayesian calibration of annotator bias, persona detection"),
        "export": ("parlai_acute.scripts.export", "write the ConvAI2 survey answers of per-turn runs to a ratings table file", {"protocol": "convai2"}),
    },
    "multiref": {
        "_help": "multi-reference collection (Gupta et al. 2019): collection task, export, analysis of the references",
        "launch": ("parlai_acute.multiref.cli.launch", "serve the multi-reference collection Mephisto task (4R1W, 2R2W, 1R4W)"),
        "export": ("parlai_acute.multiref.cli.export", "write the collected replies in the DailyDialog multi-reference layout, and per-worker timing"),
        "analyze": ("parlai_acute.multiref.cli.analyze", "Self-BLEU, Gt-BLEU and unique n-grams of collected references per mode"),
    },
}


class _Parser(argparse.ArgumentParser):
    """argparse with the project's one-line errors: a wrong choice, a missing or unknown option is
    ``parlai-acute: error: ...`` naming the valid choices and the --help to read (exit 2), not the
    usage block above it. Subcommands' parsers are of this class too (argparse makes them so)."""

    #: the chosen subcommand's prog: the help an error at the top (an unrecognised option) points to
    leaf_prog = ""

    def error(self, message: str):
        self.exit(2, f"parlai-acute: error: {message}; see `{self.leaf_prog or self.prog} --help`\n")


def describe_from_docstring(parser: argparse.ArgumentParser, doc: str, purpose: str = "") -> None:
    """Subcommand help: its purpose (the one-line help, else the docstring's "``cmd``: summary"),
    the docstring's details, then its examples (paragraphs of ``parlai-acute ...`` lines) as the epilog."""
    def heading(line: str) -> bool:  # "Examples:", reST's "Examples::": the epilog has its own heading
        return re.fullmatch(r"examples?::?", line.strip().lower()) is not None

    paragraphs = ["\n".join(line for line in p.splitlines() if not heading(line)) for p in doc.strip().split("\n\n")]
    paragraphs = [p for p in paragraphs if p.strip()]

    def example(paragraph: str) -> bool:
        lines = [line.strip() for line in paragraph.strip().splitlines()]
        return bool(lines) and lines[0].startswith(("parlai-acute ", "python -m ", "$ "))

    examples = [p for p in paragraphs[1:] if example(p)]
    details = [p for p in paragraphs[1:] if not example(p)]
    summary = purpose or paragraphs[0].split(": ", 1)[-1]
    parser.description = "\n\n".join([summary, *details])
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("examples:\n" + "\n".join(examples)) if examples else None


def _add(subparsers, name: str, entry, prefix: str = "") -> None:
    if isinstance(entry, dict):
        group = subparsers.add_parser(name, help=entry["_help"], description=entry["_help"])
        inner = group.add_subparsers(dest=f"{name}_command", metavar="COMMAND", required=True)
        for sub, sub_entry in entry.items():
            if sub != "_help":
                _add(inner, sub, sub_entry, f"{prefix}{name} ")
        return
    module, help_text = entry[:2]
    parser = subparsers.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(_module=module, _command=f"parlai-acute {prefix}{name}")
    # The module's own arguments are added only for the subcommand actually used.
    parser.set_defaults(_lazy_args=True)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="parlai-acute",
        description="Evaluate open-domain dialogue models with people, models as judges and automatic metrics. "
                    "Conversations: self-chat and human chat as ParlAI logs. Protocols, each with a Mephisto task "
                    "(launch), its table (export) and its analysis (analyze): ACUTE-Eval (pairwise comparison of "
                    "whole conversations), per-turn evaluation with live models (PM/MM/SM, SOBA/SATA), SSA "
                    "(sensibleness and specificity), ConvAI2 ratings (Likert, calibration, persona detection) and "
                    "multi-reference collection. Also: sample size (power), models as judges (judge) and "
                    "reference-based metrics (metrics). `parlai-acute COMMAND --help` explains each, with examples.",
        epilog="Python: `from parlai_acute import api` (load_table, analyze, write_outputs, export); see the README.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, entry in COMMANDS.items():
        _add(subparsers, name, entry)
    # Load arguments of the chosen leaf command only.
    entry, path = COMMANDS, []
    for token in argv:
        if isinstance(entry, dict) and token in entry and token != "_help":
            entry, path = entry[token], path + [token]
        elif not token.startswith("-"):
            break
    if isinstance(entry, tuple):
        leaf = subparsers.choices[path[0]]
        for token in path[1:]:
            leaf = next(a for a in leaf._actions if isinstance(a, argparse._SubParsersAction)).choices[token]
        module = importlib.import_module(entry[0])
        describe_from_docstring(leaf, module.__doc__ or "", entry[1])
        if getattr(module, "NEEDS", ()):
            leaf.description += f"\n\nNeeds {' and '.join(f'the {e} extra' for e in module.NEEDS)}: " \
                                f"{extras.pip_line(module.NEEDS)}."
        module.add_arguments(leaf)
        parser.leaf_prog = leaf.prog
        leaf.set_defaults(**(entry[2] if len(entry) > 2 else {}))
        parser.leaf = leaf  # whose flags a UserError's parameters are spelled with
    return parser


def flag_of(parser: argparse.ArgumentParser, name: str) -> str:
    """The flag ``parser`` spells the Python parameter ``name`` with: the first long option of the
    (visible, not deprecated) option whose dest it is; else ParlAI's rule, ``--`` + dashes (an
    agent's options inside a model string, e.g. ``hf_model`` -> ``--hf-model``)."""
    for action in parser._actions:
        if action.dest == name and action.option_strings and action.help is not argparse.SUPPRESS:
            return next((s for s in action.option_strings if s.startswith("--")), action.option_strings[0])
    return "--" + name.replace("_", "-")


def flag_message(exc: UserError, parser: argparse.ArgumentParser | None) -> str:
    """A library error as the command line says it: each parameter it names (``exc.params``) as the
    command's flag, ``name=value`` as ``--flag value``."""
    from parlai_acute.errors import param_pattern

    message = str(exc)
    for name in exc.params:
        flag = flag_of(parser, name) if parser is not None else "--" + name.replace("_", "-")
        message = param_pattern(name).sub(lambda m: flag + (" " if m.group().endswith("=") else ""), message)
    return message


def _output_closed() -> int:
    """The reader of our stdout went away (``parlai-acute ... | head``): stop quietly.

    As Python's documentation on SIGPIPE advises: point stdout at devnull so the flush at
    interpreter exit cannot raise again, and exit 1 as Python does on EPIPE.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def _run(args) -> int:
    """Run the chosen subcommand: first the extras its module declares it ``NEEDS`` (one line naming
    the install if one is missing), then a package of an extra met on the way (e.g. ``status
    --task-name`` reaching for Mephisto) is the same one line, not a ModuleNotFoundError."""
    module = importlib.import_module(args._module)
    declared = tuple(getattr(module, "NEEDS", ()))
    if extras.missing(declared):
        raise extras.needs(args._command, extras.missing(declared))
    try:
        return int(module.run(args) or 0)
    except ModuleNotFoundError as exc:
        raise extras.explain(exc, args._command, declared) or exc


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = None
    try:
        try:
            parser = build_parser(argv)  # kept: a library error's parameter is said as this parser's flag
            args = parser.parse_args(argv)
            code = _run(args)
        except SystemExit:  # --help and usage errors: their text is still in the buffer
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return code
    except UserError as exc:
        print(f"parlai-acute: error: {flag_message(exc, getattr(parser, 'leaf', parser))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("parlai-acute: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _output_closed()


def launch_from_task_folder(group: str) -> None:
    """What a Mephisto task folder's ``run.py`` does: ``parlai-acute GROUP launch`` with this process's
    arguments (Hydra overrides such as ``conf=default mephisto.provider.requester_name=NAME``); exits
    with its status. A ``run.py`` is a command-line entry point, so it comes here, to the CLI."""
    sys.exit(main([group, "launch", *sys.argv[1:]]))


if __name__ == "__main__":
    sys.exit(main())
