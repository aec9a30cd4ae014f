"""A running evaluation watched as it goes: :mod:`.status` (where it stands, with intervals valid at
every look) and :mod:`.stopping` (the stop rule a live task applies to it). Both are pure functions
of the tidy tables, so they import neither Mephisto nor ParlAI."""
