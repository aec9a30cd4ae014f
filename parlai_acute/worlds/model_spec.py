"""Turn a ``--model`` value into ParlAI agent arguments and agents.

A model is given as one string, in any of the forms ParlAI users already know:

* an opt string: ``"-m parlai_acute.agents.generic_bot:GenericBotAgent"``,
  ``"-mf zoo:blender/blender_90M/model --beam-size 3"`` (split like a shell line; on the
  command line write it as ``--model="-m ..."`` so argparse does not take it for a flag);
* an agent name or path, optionally followed by its options: ``repeat_query``,
  ``"pkg.module:AgentClass --temperature 0.7"``;
* a ParlAI model file (has a ``.opt`` beside it): ``/models/blender/model``;
* a GGUF file: ``/models/x.gguf`` (run by the llama.cpp agent).
"""
from __future__ import annotations

import contextlib
import io
import os
import shlex

from parlai_acute.errors import UserError

DEFAULT_AGENT = "parlai_acute.agents.llama_cpp:LlamaCppAgent"

#: ``--help`` text of every ``--model`` option that takes these forms.
MODEL_HELP = ("the model: an agent name or ParlAI model file or .gguf file, optionally followed by "
              "options ('repeat_query', 'pkg.mod:Agent --temperature 0.7'), or a ParlAI opt string "
              "written as --model='-m pkg.mod:Agent --opt v' (default: the embedded SmolLM2 via llama.cpp)")


def model_args(spec: str | None) -> list[str]:
    """ParlAI command-line arguments for one model string (``None``: the default SmolLM2 agent).

    A name or path may be followed by more options: ``"repeat_query --fixed-response hi"``.
    """
    if spec is None or not spec.strip():
        return ["-m", DEFAULT_AGENT]
    try:
        tokens = shlex.split(spec)
    except ValueError as exc:
        raise UserError(f"cannot split the model options {spec!r}: {exc}; check the quotes") from None
    if tokens[0].startswith("-"):
        return tokens
    return _resolve(tokens[0]) + tokens[1:]


def _resolve(name: str) -> list[str]:
    if name.endswith(".gguf"):
        if not os.path.isfile(name):
            raise UserError(f"GGUF model file {name} does not exist; pass the path of a .gguf file")
        return ["-m", DEFAULT_AGENT, "-mf", name]
    if os.path.isfile(name + ".opt") or name.startswith("zoo:"):
        return ["-mf", name]
    if os.path.sep in name or os.path.exists(name):
        raise UserError(f"model file {name} has no {name}.opt beside it; pass a ParlAI model file, "
                        "a .gguf file or an agent such as -m repeat_query")
    return ["-m", name]


def create_agent_checked(opt):
    """``parlai.core.agents.create_agent`` with missing models reported as a UserError."""
    from parlai.core.agents import create_agent

    try:
        return create_agent(opt, requireModelExists=True)
    except UserError:
        raise
    except (ImportError, RuntimeError, FileNotFoundError, OSError) as exc:
        what = opt.get("model_file") or opt.get("model")
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise UserError(f"cannot load model {what!r}: {message}; check -m/-mf or the model path") from None


def parse_parlai(parser, argv: list[str], model: str | None, what: str, param: str | None = None):
    """Parse with a ParlAI parser; its usage dump is swallowed and its complaint becomes one line
    naming ``what`` gave ``model`` (the Python parameter ``param``, or words such as ``model 'smol'``)."""
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            return parser.parse_args(argv)
    except SystemExit:
        complaint = next((line.split(":", 1)[1].strip() for line in reversed(buffer.getvalue().splitlines())
                          if "error:" in line.lower()), "invalid options")
        raise UserError(f"ParlAI rejected {what} {model!r}: {complaint}; "
                        "`parlai self_chat -m AGENT --help` lists an agent's options", param=param) from None
    except (ImportError, RuntimeError) as exc:
        raise UserError(load_error(exc, model)) from None


def load_error(exc: Exception, model: str | None) -> str:
    """One line for a task or model that ParlAI cannot import."""
    message = " ".join(str(exc).split())
    if ".tasks." in message:
        return f"cannot load the task: {message}; use chitchat, persona, topics or a ParlAI task path"
    return f"cannot load model {model or 'default'!r}: {message}; check the agent name or model path"


def model_opt(spec: str | None, datapath: str, what: str = "model", param: str | None = "model",
              extra: list[str] = ()):
    """The ParlAI opt of one model string, as ParlAI's ``interactive`` script would build it (``what``
    and ``param``: where the string came from, see :func:`parse_parlai`)."""
    from parlai.core.params import ParlaiParser

    parser = ParlaiParser(True, True, "model options")
    parser.set_params(interactive_mode=True)  # zoo agents then decode as in `parlai interactive`
    argv = ["--datapath", datapath, *extra] + model_args(spec)
    return parse_parlai(parser, argv, spec, what, param)
