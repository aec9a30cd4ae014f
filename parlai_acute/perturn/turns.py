"""Per-turn evaluation choices: the one tidy table every per-turn analysis reads.

One row per (dialogue, model turn, candidate). At each model turn the worker saw the
candidate replies of the ``k`` models of the dialogue's model set, in a random order
(``position``), and said which are good:

* ``setting``: ``pm`` (two models per turn), ``mm`` (three or more), ``sm`` (one);
* ``protocol``: ``soba`` (exactly one picked; it continues the conversation),
  ``sata_random`` (0..k picked; one picked continues; several: one of them at random;
  none: one of all at random), ``sata_user`` (as sata_random, but when none is picked the
  worker's own reply continues), ``sm`` (one candidate, appropriate or not; it continues).

A candidate whose model failed at that turn (error, timeout) has ``incomplete`` true,
was not shown and has no ``position``; analyses drop turns with an incomplete candidate
and report how many.
"""
from __future__ import annotations

SETTINGS = ("pm", "mm", "sm")
PROTOCOLS = ("soba", "sata_random", "sata_user", "sm")
FALLBACKS = ("picked", "random_picked", "random_all", "user", "none")

# name -> (required in files?, description). Order is the column order of written tables.
COLUMNS: dict[str, tuple[bool, str]] = {
    "run_id": (False, "Mephisto task run id (or any id of the collection run)"),
    "unit_id": (False, "Mephisto unit id"),
    "dialogue": (True, "dialogue id, unique within the collection"),
    "worker": (True, "annotator id"),
    "turn": (True, "0-based index of the model turn within the dialogue"),
    "setting": (True, "pm | mm | sm"),
    "protocol": (True, "soba | sata_random | sata_user | sm"),
    "model_set": (True, "the models of the dialogue, sorted, joined by '|'"),
    "model": (True, "model that produced this candidate"),
    "position": (False, "0-based position of the candidate on the page (empty when not shown)"),
    "picked": (True, "the worker selected this candidate (SOBA: the best; SATA: acceptable; SM: appropriate)"),
    "continued": (True, "this candidate's text continued the conversation"),
    "fallback": (False, "how the continuation was chosen: picked (SOBA, SM, exactly one picked), "
                        "random_picked (several picked), random_all (none picked, SATA-Random), "
                        "user (none picked, the worker's reply, SATA-User), none (no candidate at all)"),
    "incomplete": (False, "the model failed at this turn (error or timeout); its candidate was not shown"),
    "error": (False, "why the candidate is incomplete"),
    "text": (False, "the candidate reply"),
    "worker_message": (False, "the worker's message this turn answers"),
    "user_reply": (False, "SATA-User: the reply the worker wrote when none was picked"),
    "justification": (False, "the worker's optional or required reason for the choice"),
    "decision_seconds": (False, "seconds from the candidates being shown to the choice being sent"),
    "latency_seconds": (False, "seconds the model took to produce this candidate"),
    "timestamp": (False, "when the choice was stored, seconds since the epoch (UTC)"),
    "dialogue_status": (False, "complete | partial (worker left or run stopped before the end)"),
}
REQUIRED = [name for name, (required, _) in COLUMNS.items() if required]
