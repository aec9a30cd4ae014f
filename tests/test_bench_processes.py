"""`python -m benchmarks` runs every benchmark module in a process of its own."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_each_module_runs_in_its_own_process_and_a_failure_is_a_row(tmp_path):
    probe = ROOT / "benchmarks" / "bench_zz_probe_pid.py"
    probe.write_text("import os\n\ndef run():\n    yield {'name': 'probe', 'pid': os.getpid()}\n")
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-m", "benchmarks", "bench_zz_probe_pid", "bench_zz_probe_pid",
                              "bench_zz_missing"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink()
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    pids = [r["pid"] for r in rows if r.get("name") == "probe"]
    assert len(pids) == 2 and len(set(pids)) == 2  # one fresh interpreter per module run
    assert {"name": "bench_zz_missing"}.items() <= rows[-1].items() and "error" in rows[-1]
    assert out.returncode == 1
