"""ACUTE-Eval planning speed: building a pairings file and scanning exact power.

* pairings: 5 models x 500 self-chat conversations (8 turns) -> 10 model pairs x 300
  comparisons, logs read and validated; target < 5 s.
* power: smallest n for a 0.03 win-rate difference (n about 2,200, scan to about 4,500) with the
  closed form for p0 = 0.5, against the definition (sum over each n's rejection region,
  the path used for p0 != 0.5) on the first 2,000 n; the ratio is the speed-up.
"""
import contextlib
import io
import tempfile
import time
from pathlib import Path

PAIRINGS_TARGET_S = 5.0


def _logs(root: Path, models: int, conversations: int) -> list[str]:
    from parlai_acute.files import write_jsonl

    specs = []
    for m in range(models):
        rows = [{"dialog": [[{"id": "bot", "text": f"m{m} c{c} t{t}a"}, {"id": "bot", "text": f"m{m} c{c} t{t}b"}]
                            for t in range(4)], "context": []} for c in range(conversations)]
        write_jsonl(root / f"m{m}.jsonl", rows)
        specs.append(f"m{m}={root / f'm{m}.jsonl'}")
    return specs


def run():
    import parlai_acute  # noqa: F401
    from parlai_acute.scripts.main import main
    from parlai_acute.stats import power as pw

    with tempfile.TemporaryDirectory() as tmp:
        specs = _logs(Path(tmp), 5, 500)
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # keep stdout for the JSON lines
            assert main(["acute", "pairings", *specs, "-o", f"{tmp}/p.jsonl", "-n", "300", "--seed", "0"]) == 0
        took = time.perf_counter() - start
    yield {"name": "acute_pairings_seconds", "value": round(took, 3), "unit": "s", "target": PAIRINGS_TARGET_S,
           "ratio": round(took / PAIRINGS_TARGET_S, 3), "models": 5, "conversations_per_model": 500,
           "comparisons": 3000}

    start = time.perf_counter()
    res = pw.required_n_exact(0.53)
    fast = time.perf_counter() - start
    yield {"name": "acute_power_required_n_seconds", "value": round(fast, 3), "unit": "s",
           "delta": 0.03, "n": res["n"], "scanned_to": res["scanned_to"]}

    n_max = 2000
    start = time.perf_counter()
    pw.power_curve(n_max, 0.53)
    closed = time.perf_counter() - start
    start = time.perf_counter()
    for n in range(n_max + 1):
        pw.exact_power(n, 0.53)
    definition = time.perf_counter() - start
    yield {"name": "acute_power_curve_speedup", "value": round(definition / closed, 1), "unit": "x",
           "baseline": round(definition, 3), "closed_form_s": round(closed, 4), "n_max": n_max,
           "ratio": round(closed / definition, 5)}
