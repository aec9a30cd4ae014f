"""Benchmarks (``make bench``): one JSON object per line on stdout.

Each ``benchmarks/bench_*.py`` module defines ``run() -> Iterable[dict]``; every dict has at
least ``name``, ``value`` and ``unit``, and for comparisons ``baseline``, ``ratio`` and
``target``. Progress and logs go to stderr. Timings live here, never in tests.
"""
