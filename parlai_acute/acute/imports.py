"""Other people's pairwise judgments into the ACUTE judgments table, as they were released.

Researchers re-analyse released evaluations; this module reads them into
:data:`parlai_acute.acute.judgments.COLUMNS` (validated by its one reader) so ``acute analyze``,
``status`` and ``ppi`` treat them as the project's own. Ties stay ties (``outcome``).

**Chatbot Arena battles** (LMSYS; ``clean_battle_*.json`` is a JSON list, the Hugging Face dump
``chatbot_arena_conversations`` JSON lines; one battle per record). Column mapping:

==========================  ===================================================================
Arena field                 judgments table
==========================  ===================================================================
``model_a``                 ``model_left`` (Arena shows A on the left)
``model_b``                 ``model_right``
``winner``                  ``model_a``/``model_b``: ``winner`` = that model, ``outcome`` win;
                            ``tie``: ``outcome`` tie; ``tie (bothbad)``: ``outcome`` both_bad
``judge``                   ``worker`` (the person who voted)
``question_id``             ``pair_id``; ``dialogue_left``/``_right`` = ``question_id`` + ``:a``/``:b``
                            (both sides of one battle; ``battle-N`` by position when absent)
``tstamp``                  ``timestamp``
``turn``, ``language``      filters (``max_turns``, ``languages``); not columns of the table
(none)                      ``question_key`` ``arena`` ("Which response is better?"),
                            ``reason`` empty (Arena collects none: analyse with
                            ``min_reason_chars=0``), ``is_onboarding`` false, ``run_id`` ``arena``
==========================  ===================================================================

A voter judges many battles of one pair of models, so analyse with ``max_per_worker="none"``
(the protocol's default cap of one judgment per pair and worker is ACUTE's own design).
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from parlai_acute.acute.judgments import BOTH_BAD, TIE, judgments_table
from parlai_acute.errors import UserError
from parlai_acute.jsonl import read_jsonl, read_text

__all__ = ["ARENA_QUESTION", "ARENA_WINNERS", "arena_judgments"]

ARENA_QUESTION = ("arena", "Which response is better?")
#: Arena's ``winner`` values -> (side that won or None, outcome)
ARENA_WINNERS = {"model_a": ("a", "win"), "model_b": ("b", "win"), "tie": (None, TIE), "tie (bothbad)": (None, BOTH_BAD)}
_FIX = "pass Chatbot Arena battles: a JSON list or JSON lines of records with model_a, model_b, winner and judge"


def _records(path: Path) -> list[tuple[str, object]]:
    """(where, record) of a JSON list or a JSON-lines file."""
    text = read_text(path, "Arena battles file", _FIX)
    if text.lstrip("\ufeff \t\r\n").startswith("["):
        try:
            data = json.loads(text.lstrip("\ufeff"))
        except json.JSONDecodeError as exc:
            raise UserError(f"Arena battles file {path}: not valid JSON ({exc.msg} at line {exc.lineno}); {_FIX}") \
                from None
        return [(f"{path} record {i + 1}", record) for i, record in enumerate(data)]
    return list(read_jsonl(path, "Arena battles file", _FIX))


def arena_judgments(path: str | Path, languages: list[str] | None = None, max_turns: int | None = None) -> pd.DataFrame:
    """Chatbot Arena battles (module docstring: the column mapping) as a judgments table.

    ``languages``: keep battles in these languages only (Arena's ``language``, e.g. "English");
    ``max_turns``: keep battles of at most this many turns (Arena's ``turn``). Errors name the
    record and the field."""
    path = Path(path).expanduser()
    if max_turns is not None and max_turns < 1:
        raise UserError(f"max_turns must be at least 1, got {max_turns}", param="max_turns")
    wanted = set(languages or [])
    rows, where = [], []
    for number, (at, record) in enumerate(_records(path)):
        if not isinstance(record, dict):
            raise UserError(f"{at}: a battle must be an object; {_FIX}")
        for field in ("model_a", "model_b", "winner", "judge"):
            if field not in record or record[field] in (None, ""):
                raise UserError(f"{at}: missing field {field!r}; {_FIX}")
        if record["winner"] not in ARENA_WINNERS:
            raise UserError(f"{at}: field 'winner' is {record['winner']!r}; Arena's values are "
                            f"{', '.join(ARENA_WINNERS)}")
        if wanted and record.get("language") not in wanted:
            continue
        if max_turns is not None:
            try:
                turns = int(record.get("turn", 1))
            except (TypeError, ValueError):
                raise UserError(f"{at}: field 'turn' must be a whole number, got {record.get('turn')!r}") from None
            if turns > max_turns:
                continue
        side, outcome = ARENA_WINNERS[record["winner"]]
        a, b = str(record["model_a"]), str(record["model_b"])
        battle = str(record.get("question_id") or f"battle-{number + 1}")
        rows.append({"run_id": "arena", "worker": str(record["judge"]), "pair_id": battle,
                     "model_left": a, "model_right": b, "dialogue_left": f"{battle}:a",
                     "dialogue_right": f"{battle}:b", "winner": {"a": a, "b": b}.get(side, ""),
                     "outcome": outcome, "reason": "", "question": ARENA_QUESTION[1],
                     "question_key": ARENA_QUESTION[0], "is_onboarding": False, "timestamp": record.get("tstamp")})
        where.append(at)
    if not rows:
        raise UserError(f"Arena battles file {path}: no battle is left" +
                        (f" in {', '.join(sorted(wanted))}" if wanted else "") +
                        (f" of at most {max_turns} turns" if max_turns else "") + "; check the file and the filters")
    return judgments_table(rows, where)
