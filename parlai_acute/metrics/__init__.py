"""Automatic metrics and conversation analytics (issue 9).

Data flows one way: a test set and replies (:mod:`.inputs`, :mod:`.replies`) become items;
every metric scores each (reply, reference) pair or pools statistics over the corpus
(:mod:`.reference`: F1, BLEU, ROUGE-L, METEOR, chrF; :mod:`.embeddings`); :mod:`.score`
turns pair scores into single- and multi-reference results with intervals
(:mod:`.bootstrap`) and diversity (:mod:`.diversity`). :mod:`.ranking` gives perplexity
and hits@1/N, :mod:`.loganalytics` per-speaker statistics of Conversations logs (word
frequencies from :mod:`.wordcounts`), :mod:`.correlation` the agreement with human
ratings. :mod:`.tables` and :mod:`.reports` write the results. Every metric is a
:mod:`.base` class with a :class:`.signature.Signature` recording how its numbers were made.
"""
