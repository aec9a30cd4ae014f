"""Models as judges: a language model answers this package's evaluation protocols in the annotator's seat.

The parts, one concept per module:

* :mod:`.templates` -- versioned prompt templates (``acute_engaging@1``, ``perturn_soba@1``, ...);
* :mod:`.parse` -- the strict answer format (``Answer: 2`` / ``Reason: ...``) and its parser;
* :mod:`.model` -- the judge: any of this package's model wrappers (or any ParlAI agent),
  created from a model string by :mod:`parlai_acute.worlds.model_spec`;
* :mod:`.cache` -- on-disk cache of calls keyed by (prompt, judge configuration, decoding);
* :mod:`.orders` -- position swap: the orders an item is shown in, and how the verdicts of
  all orders resolve into one (consistent, inconsistent, missing);
* :mod:`.runner` -- concurrency, retries of unparseable answers, then "missing";
* :mod:`.protocol` -- what a protocol's judge adapter provides; the adapters live with their
  protocols (:mod:`parlai_acute.acute.judge`, :mod:`parlai_acute.per_turn.judge`,
  :mod:`parlai_acute.ssa.judge`) and are handed to :mod:`.runner` as objects, so nothing here
  imports them;
* :mod:`.agreement` -- judge-vs-human and human-vs-human agreement on the same items.
"""
