"""The live Mephisto tasks: one folder per protocol (``acute``, ``per_turn``, ``ssa``, ``multiref``)
beside ``live``, the plumbing they all share, so a protocol's live side is in one folder of the same
name as its analysis package. Nothing is imported here: a task's blueprint registers itself when its
folder's ``blueprint`` module is imported (the compatibility fixes come with ``parlai_acute``)."""
