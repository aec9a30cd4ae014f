"""Turn a ``--model`` value into ParlAI agent arguments and agents.

A model is given as one string, in any of the forms ParlAI users already know:

* an opt string: ``"-m parlai_acute.agents.generic_bot:GenericBotAgent"``,
  ``"-mf zoo:blender/blender_90M/model --beam-size 3"`` (split like a shell line);
* an agent name or path: ``repeat_query``, ``pkg.module:AgentClass``;
* a ParlAI model file (has a ``.opt`` beside it): ``/models/blender/model``;
* a GGUF file: ``/models/x.gguf`` (run by the llama.cpp agent).
"""
from __future__ import annotations

import os
import shlex

from parlai_acute.errors import UserError

DEFAULT_AGENT = "parlai_acute.agents.llama_cpp:LlamaCppAgent"


def model_args(spec: str | None) -> list[str]:
    """ParlAI command-line arguments for one model string (``None``: the default SmolLM2 agent)."""
    if spec is None or not spec.strip():
        return ["-m", DEFAULT_AGENT]
    spec = spec.strip()
    if spec.startswith("-"):
        try:
            return shlex.split(spec)
        except ValueError as exc:
            raise UserError(f"cannot split the model options {spec!r}: {exc}; check the quotes") from None
    if spec.endswith(".gguf"):
        if not os.path.isfile(spec):
            raise UserError(f"GGUF model file {spec} does not exist; pass the path of a .gguf file")
        return ["-m", DEFAULT_AGENT, "-mf", spec]
    if os.path.isfile(spec + ".opt") or spec.startswith("zoo:"):
        return ["-mf", spec]
    if os.path.sep in spec or os.path.exists(spec):
        raise UserError(f"model file {spec} has no {spec}.opt beside it; pass a ParlAI model file, "
                        "a .gguf file or an agent such as -m repeat_query")
    return ["-m", spec]


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
