"""Multi-reference collection (Gupta et al. 2019) as a Mephisto task: workers write several different
replies to each context (4R1W, 2R2W, 1R4W), exported in the DailyDialog multi-reference layout.

Importing :mod:`.blueprint` registers ``mephisto/blueprint=parlai_acute_multiref``.
"""
