"""Run every benchmark module (or those named on the command line), each in its own process,
and print their JSON lines.

One process per module: a benchmark measured after others in the same process paid for
what they left behind (the per-turn analysis read 3.7 s inside ``make bench`` against
0.67 s alone: allocator state, imported libraries' threads, caches); a fresh interpreter
measures every figure alone, and a peak-memory figure is that module's own.
``python -m benchmarks --one NAME`` runs one module in this process (what each child does).
"""
import importlib
import json
import pkgutil
import subprocess
import sys
import traceback

import benchmarks


def run_one(name: str) -> int:
    """Run one benchmark module here; print its rows (or an error row)."""
    try:
        for row in importlib.import_module(f"benchmarks.{name}").run():
            print(json.dumps(row), flush=True)
    except Exception:  # report it as a row; the parent goes on with the other modules
        traceback.print_exc()
        print(json.dumps({"name": name, "error": traceback.format_exc(limit=1).strip().splitlines()[-1]}), flush=True)
        return 1
    return 0


def main(argv):
    if argv[:1] == ["--one"] and len(argv) == 2:
        return run_one(argv[1])
    names = argv or sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))
    failed = 0
    for name in names:
        code = subprocess.run([sys.executable, "-m", "benchmarks", "--one", name]).returncode
        if code:
            failed += 1
            if code < 0:  # killed (e.g. out of memory): no row was printed for it
                print(json.dumps({"name": name, "error": f"the benchmark process died (signal {-code})"}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
