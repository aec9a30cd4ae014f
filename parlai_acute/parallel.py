"""Independent pieces of work over one table, done side by side on the machine's cores.

Why: checking a table is a column at a time, and each column's check is independent of the
others (a million judgments: 20 columns, 15-100 ms each). Their heavy parts run in Arrow and
numpy, which release the GIL, so threads overlap them: the judgments check of a CSV file's
million rows went from 0.74 s of column work to 0.46 s on two cores. Threads, not processes:
nothing is copied or pickled, and a notebook's process is never forked.

Why not the analysis too: the ACUTE analysis' ranking, matchups and agreement side by side took
2.2 s instead of 3.1 s on a million judgments, but each statistic's temporaries then live at
once (peak memory 1.63 -> 1.94 GB, against a 2 GB budget), so it stays one after the other.

The results do not depend on the order the calls run in: each call only reads shared data, so
they are the same as one after the other (tested). Failures surface as they would one after the
other: the results are collected in the order given, so the first failing call, in that order,
raises (the others have finished by then).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

from parlai_acute.errors import UserError

#: most threads one call starts (beyond the cores, threads only take turns)
MAX_THREADS = 4


def cores() -> int:
    """CPU cores this process may run on (a container's or taskset's limit, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def threads_of(value, param: str) -> int:
    """The CPU threads an option ``param`` asks for: 0 is the machine's cores (llama.cpp's own
    default), None (an opt without it) one; fewer than 0 is a one-line error naming ``param``."""
    threads = 1 if value is None else int(value)
    if threads < 0:
        raise UserError(f"{param} {threads} is too small; use 1 or more, or 0 for the machine's cores", param=param)
    return threads or cores()


def run_side_by_side(calls: dict[str, Callable[[], object]]) -> dict[str, object]:
    """``{name: call()}`` for independent calls that only read shared data, run on up to
    ``min(cores, MAX_THREADS)`` threads (one call, or one core: here, one after the other)."""
    threads = min(len(calls), cores(), MAX_THREADS)
    if threads <= 1:
        return {name: call() for name, call in calls.items()}
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="side-by-side") as pool:
        futures = {name: pool.submit(call) for name, call in calls.items()}
        return {name: future.result() for name, future in futures.items()}
