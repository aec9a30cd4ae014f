"""Chatbot Arena scale: three million battles from a released-layout file to a tie-aware ranking.

* ``arena_battles_seconds``: 3,000,000 battles among 200 models, 20 % ties (15 % "tie", 5 % "tie
  (bothbad)"), 100,000 voters, written by the bench as Parquet in Arena's layout (question_id,
  model_a, model_b, winner, judge, turn, language, tstamp). Timed: the import
  (:func:`parlai_acute.acute.imports.arena_judgments`: read, check, the judgments table) and
  Davidson's tie-aware ranking with its intervals (:func:`parlai_acute.stats.davidson.davidson`;
  with 100,000 voters the cluster-robust sandwich over voters). Targets < 15 s and < 3 GB peak
  resident memory (``peak_rss_mb``, reset before the import) on the 2-core machine; ``cpu_s`` is
  the process's CPU time over the same stretch (every thread), the figure a loaded machine does
  not inflate as much as the wall clock (``load_average`` beside it).
* ``arena_rank_ratio``: our ordinary Bradley-Terry (a tie half a win each; fit on the count matrix
  and the sandwich over voters: :func:`~parlai_acute.stats.bradley_terry.fit_counts`,
  :func:`~parlai_acute.stats.bradley_terry.sandwich_intervals`) against LMArena's arena-rank 0.1.1
  (``BradleyTerry`` + ``compute_ratings_and_cis(ci_method="sandwich")``, its ``PairDataset``
  built from the same battles) on the same battles in the same run; target <= 0.5, and the
  strengths equal within 1e-3 after centring (arena-rank's ratings divided by 400 / ln 10). arena-rank
  needs jax, so it runs in its own virtualenv (``/tmp/arena_style``, made with ``python3.11 -m venv``
  and ``pip install arena-rank==0.1.1``; never at run time): without it the row says so.
"""
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.memory import peak_rss_mb, reset_peak

N = 3_000_000
MODELS = 200
VOTERS = 100_000
TARGET_S = 15.0
TARGET_MB = 3072.0
TARGET_RATIO = 0.5
ARENA_PYTHON = Path("/tmp/arena_style/bin/python")

_ARENA_RANK = r"""
import json, sys, time
import numpy as np, pandas as pd
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset
battles = pd.read_parquet(sys.argv[1], columns=["model_a", "model_b", "winner"])
battles["winner"] = battles["winner"].replace({"tie (bothbad)": "both_bad"})
times, cpus, out = [], [], None
for _ in range(2):  # the first call compiles (jax.jit); both are reported
    start, cpu = time.perf_counter(), time.process_time()
    data = PairDataset.from_pandas(battles)
    model = BradleyTerry(n_competitors=len(data.competitors))
    out = model.compute_ratings_and_cis(data, significance_level=0.05, ci_method="sandwich")
    np.asarray(out["rating_upper"])
    times.append(time.perf_counter() - start)
    cpus.append(time.process_time() - cpu)
print(json.dumps({"seconds": times, "cpu_seconds": cpus, "competitors": list(out["competitors"]),
                  "ratings": np.asarray(out["ratings"]).tolist(), "alpha": model.alpha}))
"""


def write_battles(path: Path, n: int = N, models: int = MODELS, voters: int = VOTERS, seed: int = 0) -> np.ndarray:
    """``n`` battles in Arena's layout drawn from Davidson's model (P(tie | equal) = 0.2 / (2 + ...)),
    written as Parquet; returns the true strengths."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    a = rng.integers(0, models, n)
    b = (a + rng.integers(1, models, n)) % models
    d = strength[a] - strength[b]
    nu = 0.62  # about 20 % ties over these strengths
    pa, pb = np.exp(d / 2), np.exp(-d / 2)
    denom = pa + pb + nu
    u = rng.random(n) * denom
    winner = np.where(u < pa, "model_a", np.where(u < pa + pb, "model_b",
                                                  np.where(rng.random(n) < 0.75, "tie", "tie (bothbad)")))
    names = np.array([f"model-{i:03d}" for i in range(models)], dtype=object)
    judges = np.array([f"arena_user_{i}" for i in range(voters)], dtype=object)
    pd.DataFrame({"question_id": [f"{i:08x}" for i in range(n)], "model_a": names[a], "model_b": names[b],
                  "winner": winner, "judge": judges[rng.integers(0, voters, n)],
                  "turn": rng.choice([1, 1, 1, 2, 3], n), "language": rng.choice(["English", "Chinese"], n),
                  "tstamp": 1.7e9 + np.arange(n, dtype=float)}).to_parquet(path, index=False)
    return strength


def run():
    import pandas as pd

    from parlai_acute.acute.imports import arena_judgments
    from parlai_acute.stats.bradley_terry import DEFAULT_ALPHA, fit_counts, sandwich_intervals
    from parlai_acute.stats.davidson import davidson
    from parlai_acute.stats.winrates import win_matrix

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "battles.parquet"
        write_battles(path)
        measured = reset_peak()
        start, cpu = time.perf_counter(), time.process_time()
        table = arena_judgments(path)
        imported = time.perf_counter() - start
        ranking, tie = davidson(table, bootstrap=1000, seed=0, models=None, cluster="worker")
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        peak = peak_rss_mb() if measured else float("nan")
        ties = float((table["outcome"] != "win").mean())
        assert len(table) == N and np.isfinite(ranking["ci_low"]).all()
        yield {"name": "arena_battles_seconds", "value": round(seconds, 2), "unit": "s", "target": TARGET_S,
               "ratio": round(seconds / TARGET_S, 3), "import_s": round(imported, 2),
               "davidson_s": round(seconds - imported, 2), "cpu_s": round(cpu, 2),
               "load_average": round(os.getloadavg()[0], 1), "peak_rss_mb": round(peak, 1),
               "peak_target_mb": TARGET_MB, "battles": N, "models": MODELS, "voters": VOTERS,
               "tie_share": round(ties, 3), "interval": tie["interval"], "cores": os.cpu_count()}

        start, cpu = time.perf_counter(), time.process_time()
        wins, models = win_matrix(table)
        theta = fit_counts(wins, alpha=DEFAULT_ALPHA)
        low, high = sandwich_intervals(table, "worker", models, theta, wins, DEFAULT_ALPHA, 0.95)
        ours, cpu = time.perf_counter() - start, time.process_time() - cpu
        row = {"name": "arena_rank_ratio", "target": TARGET_RATIO, "ours_s": round(ours, 2), "ours_cpu_s": round(cpu, 2),
               "battles": N}
        if not ARENA_PYTHON.exists():
            yield {**row, "value": None, "why": f"arena-rank 0.1.1 is not installed in {ARENA_PYTHON.parent.parent} "
                                                "(python3.11 -m venv /tmp/arena_style && /tmp/arena_style/bin/pip "
                                                "install arena-rank==0.1.1)"}
            return
        del table
        done = subprocess.run([str(ARENA_PYTHON), "-c", _ARENA_RANK, str(path)], capture_output=True, text=True)
        if done.returncode:
            yield {**row, "value": None, "why": f"arena-rank failed: {done.stderr.strip().splitlines()[-1:]}"}
            return
        theirs = json.loads(done.stdout)
        rating = pd.Series(theirs["ratings"], index=theirs["competitors"]).reindex(models).to_numpy()
        rating = rating / theirs["alpha"]  # 400 / ln 10 per unit of log-odds
        gap = float(np.abs((rating - rating.mean()) - (theta - theta.mean())).max())
        warm = min(theirs["seconds"])
        yield {**row, "value": round(ours / warm, 3), "arena_rank_s": round(warm, 2),
               "arena_rank_cpu_s": round(min(theirs["cpu_seconds"]), 2),
               "cpu_ratio": round(cpu / min(theirs["cpu_seconds"]), 3),
               "arena_rank_first_call_s": round(theirs["seconds"][0], 2), "max_abs_difference": gap,
               "equal_within_1e-3": gap < 1e-3, "ours_interval": "sandwich over voters (t, G-1 df)",
               "arena_rank_interval": "sandwich over (pair, outcome) cells (normal)",
               "load_average": round(os.getloadavg()[0], 1)}
