"""Automatic metrics and conversation analytics (issue 9).

Data flows one way: an input (test set + replies) becomes a tidy table of items
(:mod:`.inputs`), each metric scores every (reply, reference) pair (:mod:`.reference`,
:mod:`.embeddings`), :mod:`.score` turns pair scores into single- and multi-reference
results, and the scripts write tables. Every metric is a :class:`.base.Metric` with a
:class:`.signature.Signature` recording how its numbers were made.
"""
