"""Run every benchmark module (or those named on the command line) and print JSON lines."""
import importlib
import json
import pkgutil
import sys
import traceback

import benchmarks


def main(argv):
    names = argv or sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith("bench_"))
    failed = 0
    for name in names:
        try:
            for row in importlib.import_module(f"benchmarks.{name}").run():
                print(json.dumps(row), flush=True)
        except Exception:  # report and go on with the other benchmarks
            failed += 1
            traceback.print_exc()
            print(json.dumps({"name": name, "error": traceback.format_exc(limit=1).strip().splitlines()[-1]}), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
