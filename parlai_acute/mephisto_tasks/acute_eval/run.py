"""Launch the ACUTE-Eval task from its folder, as Mephisto's and ParlAI's task folders do.

The Hydra config is ``hydra_configs/conf/default.yaml`` beside this file; every argument is a Hydra
override, and the code is the same as ``parlai-acute acute launch``::

    python -m parlai_acute.mephisto_tasks.acute_eval.run conf=default mephisto.blueprint.pairings_file=pairings.jsonl \\
        mephisto/architect=heroku mephisto/provider=mturk_sandbox mephisto.provider.requester_name=NAME

``--print-config`` prints the resolved configuration, ``--help-blueprint`` the blueprint's options.
"""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from parlai_acute.scripts.main import main as parlai_acute_main

    return parlai_acute_main(["acute", "launch", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
