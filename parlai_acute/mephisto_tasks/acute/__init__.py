"""ACUTE-Eval as a Mephisto task: blueprint, page, Hydra config, simulated workers.

Importing :mod:`.blueprint` registers ``mephisto/blueprint=parlai_acute_eval``.
"""
