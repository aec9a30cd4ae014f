"""Per-turn interactive evaluation as a Mephisto task: a worker chats with live models and judges
every turn's candidate replies (PM, MM, SM; SOBA, SATA-Random, SATA-User).

Importing :mod:`.blueprint` registers ``mephisto/blueprint=parlai_acute_per_turn``.
"""
