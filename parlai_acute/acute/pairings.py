"""ACUTE-Eval pairings files: the format ParlAI's ``acute_eval`` task reads, validated and built.

A pairings file has one JSON object per line; each line is one comparison shown to an
annotator (Li, Weston, Roller 2019)::

    {"is_onboarding": false,
     "speakers_to_eval": ["model_a", "model_b"],
     "dialogue_ids": [3, 17],
     "dialogue_dicts": [
        {"id": 3, "speakers": ["model_a", "other_speaker"], "context": [],
         "dialogue": [{"id": "model_a", "text": "..."}, {"id": "other_speaker", "text": "..."}]},
        {"id": 17, "speakers": ["other_speaker", "model_b"], ...}]}

Onboarding (gold) lines have ``"is_onboarding": true`` and ``correct_answer`` (the
speaker id that must win); ``dialogue_ids`` is optional there, as in ParlAI's
``onboarding.json``. The evaluated speaker of dialogue *i* is ``speakers_to_eval[i]`` and
must not speak in the other dialogue: ParlAI's ``AcuteEvalRunner`` asserts exactly that
order. The same file therefore runs in ParlAI's task and in ours.

Building pairings (:func:`build_pairings`) follows the paper: each specific pair of
conversations is shown at most once; with at least as many conversations as comparisons
each conversation is used at most once; otherwise use is spread evenly.
"""
from __future__ import annotations

import itertools
import json
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from parlai_acute.errors import UserError
from parlai_acute.logs import Episode

#: Speaker id given to the side of a conversation that is not evaluated (as ParlAI's fast_eval).
OTHER_SPEAKER = "other_speaker"
#: Turn id ParlAI uses for context turns (prepended personas, topics) in Conversations logs.
CONTEXT_ID = "context"
RESERVED_NAMES = (OTHER_SPEAKER, CONTEXT_ID)


# ----------------------------------------------------------------------------- validation


def _fail(where: str, field_name: str, problem: str, fix: str) -> None:
    raise UserError(f"{where}: field '{field_name}' {problem}; {fix}")


def _check_dialogue(where: str, index: int, dd: Any) -> None:
    name = f"dialogue_dicts[{index}]"
    if not isinstance(dd, dict):
        _fail(where, name, "is not an object", "each entry needs 'speakers' and 'dialogue'")
    speakers = dd.get("speakers")
    if not isinstance(speakers, list) or not speakers or not all(isinstance(s, str) for s in speakers):
        _fail(where, f"{name}.speakers", "is missing or not a list of speaker ids",
              "list the speaker ids that appear in 'dialogue'")
    dialogue = dd.get("dialogue")
    if not isinstance(dialogue, list) or not dialogue:
        _fail(where, f"{name}.dialogue", "is missing or empty", "give the turns as a list of {id, text} objects")
    for t, turn in enumerate(dialogue):
        if not isinstance(turn, dict) or not isinstance(turn.get("id"), str) or not isinstance(turn.get("text"), str):
            _fail(where, f"{name}.dialogue[{t}]", "is not an object with string 'id' and 'text'",
                  "write every turn as {\"id\": SPEAKER, \"text\": TEXT}")
        if turn["id"] not in speakers:
            _fail(where, f"{name}.dialogue[{t}].id", f"is {turn['id']!r}, which is not in 'speakers'",
                  "add it to 'speakers' or fix the turn id")
        if t and turn["id"] == dialogue[t - 1]["id"]:
            _fail(where, f"{name}.dialogue[{t}].id", f"repeats speaker {turn['id']!r} (turns must alternate)",
                  "merge consecutive turns of one speaker")


def validate_pairing(obj: Any, where: str = "<pairing>") -> dict:
    """Check one pairings line (already JSON-decoded); return it unchanged or raise UserError.

    ``where`` is put in front of the message, e.g. ``"pairings.jsonl:7"``. Extra keys are
    allowed (ParlAI ignores them too); the checks are those ParlAI's runner and analysis
    rely on, so a file that passes here loads there.
    """
    if not isinstance(obj, dict):
        raise UserError(f"{where}: a pairing must be a JSON object; write one object per line")
    if not isinstance(obj.get("is_onboarding"), bool):
        _fail(where, "is_onboarding", "is missing or not true/false", "add \"is_onboarding\": false (true for gold pairs)")
    ste = obj.get("speakers_to_eval")
    if (not isinstance(ste, list) or len(ste) != 2 or not all(isinstance(s, str) and s for s in ste)
            or ste[0] == ste[1]):
        _fail(where, "speakers_to_eval", "must be a list of two different speaker ids",
              "name the evaluated speaker of each dialogue, in dialogue order")
    dds = obj.get("dialogue_dicts")
    if not isinstance(dds, list) or len(dds) != 2:
        _fail(where, "dialogue_dicts", "must be a list of two dialogues", "give one dialogue per evaluated speaker")
    for i, dd in enumerate(dds):
        _check_dialogue(where, i, dd)
    for i in (0, 1):
        if ste[i] not in dds[i]["speakers"]:
            _fail(where, "speakers_to_eval", f"names {ste[i]!r}, who is not a speaker of dialogue_dicts[{i}]",
                  "speakers_to_eval[i] must speak in dialogue_dicts[i]")
        if ste[1 - i] in dds[i]["speakers"]:
            _fail(where, "speakers_to_eval", f"names {ste[1 - i]!r}, who also speaks in dialogue_dicts[{i}]",
                  "rename the other speaker (e.g. 'other_speaker') so each evaluated id appears in one dialogue")
    ids = obj.get("dialogue_ids")
    if ids is not None or not obj["is_onboarding"]:
        if (not isinstance(ids, list) or len(ids) != 2 or ids[0] == ids[1]
                or not all(isinstance(d, (int, str)) and not isinstance(d, bool) for d in ids)):
            _fail(where, "dialogue_ids", "must be a list of two different ids (numbers or strings)",
                  "give each conversation a unique id so annotators are not shown it twice")
    if obj["is_onboarding"]:
        if obj.get("correct_answer") not in ste:
            _fail(where, "correct_answer", f"is {obj.get('correct_answer')!r}, not one of speakers_to_eval",
                  "set it to the speaker id that must win this gold pair")
    return obj


def read_pairings(path: str | Path) -> list[dict]:
    """Read and validate a pairings JSONL file (ours or ParlAI's); blank lines are skipped."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"pairings file {path} does not exist; create it with `parlai-acute acute pairings`")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read pairings file {path}: {exc}; check it is a UTF-8 JSONL file") from None
    pairings = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not valid JSON ({exc.msg}); each line must be one pairing object") from None
        pairings.append(validate_pairing(obj, where))
    if not pairings:
        raise UserError(f"pairings file {path} is empty; create it with `parlai-acute acute pairings`")
    return pairings
