"""Independent statistics of one table, computed side by side on the machine's cores.

Why: an analysis runs several statistics over the same judgments that share nothing but the
table (ACUTE's Bradley-Terry ranking, its 1,225 matchup tests and the agreement on a million
judgments take about 1 s, 1 s and 0.4 s). Most of their time is spent in numpy and BLAS, which
release the GIL, so threads overlap them: the three together took 1.9 s instead of 2.8 s on two
cores. Threads, not processes: nothing is copied or pickled, and a notebook's process is never
forked.

The results do not depend on the order the calls run in: each call draws from its own seeded
generator and only reads the table, so the outputs are the same to the bit as one after the
other (tested). Failures surface as they would one after the other: the results are collected in
the order given, so the first failing call, in that order, raises.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

#: most threads one analysis starts (beyond the cores, threads only take turns)
MAX_THREADS = 4


def run_side_by_side(calls: dict[str, Callable[[], object]]) -> dict[str, object]:
    """``{name: call()}`` for independent calls that only read shared data, run on up to
    ``min(cores, MAX_THREADS)`` threads (one call, or one core: here, one after the other)."""
    threads = min(len(calls), os.cpu_count() or 1, MAX_THREADS)
    if threads <= 1:
        return {name: call() for name, call in calls.items()}
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="analysis") as pool:
        futures = {name: pool.submit(call) for name, call in calls.items()}
        return {name: future.result() for name, future in futures.items()}
