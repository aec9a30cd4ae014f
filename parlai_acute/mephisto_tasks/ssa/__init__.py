"""Static SSA labelling (Meena's sensibleness and specificity) as a Mephisto task: workers label model
replies in context, several items per unit, each item by several workers.

Importing :mod:`.blueprint` registers ``mephisto/blueprint=parlai_acute_ssa_label``.
"""
