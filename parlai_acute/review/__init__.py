"""Review from evidence: one per-worker table from what a run stored, rules that turn it into
proposed actions (approve, soft-reject, reject, block, bonus), and the pay each worker earned.

Protocol-neutral: a protocol hands in its *evidence rows* (``<protocol>/review.py``,
``evidence(units)``: one row per judgment, answer or written message, in :data:`.evidence.ROW`'s
fields) and the run's units; nothing here imports a protocol by name, nor Mephisto (carrying the
actions out is :mod:`parlai_acute.mephisto_tasks.live.review`).
"""
