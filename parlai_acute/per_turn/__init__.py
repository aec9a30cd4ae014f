"""Per-turn interactive evaluation (Liu et al.): the turns table, its analysis and sample-size planning.

No Mephisto here: the live task lives in :mod:`parlai_acute.mephisto_tasks.per_turn` and
hands its stored data to :mod:`.turns`, the one table every per-turn analysis reads.
"""
