"""``parlai-acute`` in a new process, as a user runs it after a task finished: its exit status,
output, and which of this package's task blueprints it imported (reading a run needs none).

(ParlAI itself is imported by ``import mephisto``: Mephisto 1.1.1 fills its registry at import
time, ParlAI's chat blueprint included; that is Mephisto's, not ours.)"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

_SNIPPET = """
import json, sys
from parlai_acute.scripts.main import main
code = main(sys.argv[1:])
# a task folder's blueprint, runner or live set-up (parlai_acute.mephisto_tasks.<task>.<module>), not the
# shared plumbing package parlai_acute.mephisto_tasks.live, whose database reader is what reads a run
heavy = sorted(m for m in sys.modules if m.startswith("parlai_acute.mephisto_tasks.") and m.count(".") == 3
               and m.rsplit(".", 1)[1] in ("blueprint", "runner", "live"))
print("@@IMPORTED@@" + json.dumps(heavy), file=sys.stderr)
sys.exit(code)
"""


@dataclass
class Done:
    code: int
    out: str
    err: str
    imported: list[str]


def run_cli(*args: str, timeout: float = 300) -> Done:
    proc = subprocess.run([sys.executable, "-c", _SNIPPET, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    err, marker, imported = proc.stderr.rpartition("@@IMPORTED@@")
    if not marker:  # it crashed before reporting
        return Done(proc.returncode, proc.stdout, proc.stderr, [])
    return Done(proc.returncode, proc.stdout, err, json.loads(imported))


def analyze_and_export(protocol: str, task_name: str, data_dir, out_dir, table: str) -> tuple[Done, Done]:
    """``PROTOCOL analyze --task-name`` and ``PROTOCOL export`` of a finished run, each in a new process;
    both must succeed without importing a task's blueprint, runner or live set-up."""
    db = str(data_dir / "database.db")
    analysis = run_cli(protocol, "analyze", "--task-name", task_name, "--mephisto-db", db, "-o", out_dir / "analysis",
                       "--bootstrap", "50", "--no-report")
    assert analysis.code == 0, analysis.err
    export = run_cli(protocol, "export", "--task-name", task_name, "--mephisto-db", db, "-o", out_dir / table)
    assert export.code == 0, export.err
    for done in (analysis, export):
        assert done.imported == [], f"reading the run imported {done.imported}"
    return analysis, export
