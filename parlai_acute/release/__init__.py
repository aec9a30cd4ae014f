"""A release bundle of a run: its tables and logs with worker ids replaced by salted pseudonyms,
free text checked for e-mail addresses and phone numbers, and a datasheet. Pure (no Mephisto):
:mod:`parlai_acute.mephisto_tasks.live.release` reads the run and writes the bundle."""
