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

**Spot The Bot** (Deriu et al. 2020; the MongoDB dump of jderiu/spot-the-bot-code,
``data_dump/MongoDump.zip``: per domain, ``annotated-dialogues-full-<domain>.json`` (the
annotations) and ``sampled-dialogues-full-<domain>.json`` (the conversations), each a JSON
list as ``mongoexport --jsonArray`` writes it, or JSON lines; ``{"$oid": ...}`` and the other
extended-JSON wrappers are unwrapped). A conversation is between two speakers ("entities" 0 and
1: two bots, or a bot and a person); an annotator reads a segment of it (the first exchanges)
and says of each entity whether it is a human, a bot, or leaves it undecided. Both entities of
one annotated segment become the two sides of one judgment, ranked as the authors' own win rate
(``segment_analysis/win_function.compute_naive_winner_for_annotation``) does: human over
undecided over bot. Column mapping:

=====================================  ==============================================================
Spot The Bot field                     judgments table
=====================================  ==============================================================
conversation ``system_type0``          ``model_left`` (entity 0; the page shows it first)
conversation ``system_type1``          ``model_right`` (entity 1)
annotation ``convo_id``                ``dialogue_left`` and ``dialogue_right`` (one conversation
                                       holds both speakers, so both sides carry its id)
``convo_id`` + segment                 ``pair_id`` ``<convo_id>@<segment>``; the segment is
                                       ``entity0_annotation.decision_turn // 2`` (the exchange the
                                       authors group annotations by)
``entity0/1_annotation.is_human``      ``outcome``/``winner``: the entity judged more human wins
                                       (true > null, undecided > false); equal: ``outcome`` tie, and
                                       both spotted as bots (false, false): ``outcome`` both_bad (a
                                       tie too: half a win each in every win rate)
``user_name``                          ``worker``
``end_time`` (ms), ``elapsed_time``    ``timestamp`` (s), ``duration`` (s)
``_id`` of the annotation              ``assignment_id``
``package_id``                         ``unit_id``
conversation ``domain_name``           ``run_id`` ``spot-the-bot:<domain>``
(none)                                 ``question_key`` ``spot_the_bot`` ("Is each speaker a bot or a
                                       human?"), ``reason`` empty (none collected:
                                       analyse with ``min_reason_chars=0``), ``is_onboarding`` false
=====================================  ==============================================================

Conversations with a human speaker (``system_type`` ``human``) are the task's controls; the
authors' win rates leave them out (``ignore_humans=True``) and so does the import unless
``with_humans`` is set. An annotator reads several segments of the same pair of systems, so
analyse with ``max_per_worker="none"``: the authors count every annotation.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from parlai_acute.acute.judgments import BOTH_BAD, TIE, judgments_table
from parlai_acute.errors import UserError
from parlai_acute.jsonl import read_jsonl, read_text

__all__ = ["ARENA_QUESTION", "ARENA_WINNERS", "arena_judgments", "SPOT_THE_BOT_QUESTION", "spot_the_bot_judgments"]

ARENA_QUESTION = ("arena", "Which response is better?")
#: Arena's ``winner`` values -> (side that won or None, outcome)
ARENA_WINNERS = {"model_a": ("a", "win"), "model_b": ("b", "win"), "tie": (None, TIE), "tie (bothbad)": (None, BOTH_BAD)}
_FIX = "pass Chatbot Arena battles: a JSON list or JSON lines of records with model_a, model_b, winner and judge"


def _records(path: Path, what: str = "Arena battles file", fix: str = _FIX) -> list[tuple[str, object]]:
    """(where, record) of a JSON list or a JSON-lines file."""
    text = read_text(path, what, fix)
    if text.lstrip("\ufeff \t\r\n").startswith("["):
        try:
            data = json.loads(text.lstrip("\ufeff"))
        except json.JSONDecodeError as exc:
            raise UserError(f"{what} {path}: not valid JSON ({exc.msg} at line {exc.lineno}); {fix}") from None
        if not isinstance(data, list):
            raise UserError(f"{what} {path}: not a JSON list; {fix}")
        return [(f"{path} record {i + 1}", record) for i, record in enumerate(data)]
    return list(read_jsonl(path, what, fix))


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


SPOT_THE_BOT_QUESTION = ("spot_the_bot", "Is each speaker a bot or a human?")
_STB_FIX = ("pass Spot The Bot's annotated-dialogues-full-<domain>.json (from data_dump/MongoDump.zip) with its "
            "sampled-dialogues-full-<domain>.json beside it or as dialogues")
_HUMANNESS = {True: 2, None: 1, False: 0}  # the authors' score: judged human > undecided > spotted as a bot


def _plain(value):
    """A MongoDB extended-JSON value as plain JSON (``{"$oid": x}`` -> x, ``{"$numberLong": "5"}`` -> 5)."""
    if isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        if key == "$oid":
            return str(inner)
        if key in ("$numberLong", "$numberInt", "$numberDouble", "$numberDecimal"):
            return float(inner) if key in ("$numberDouble", "$numberDecimal") else int(inner)
        if key == "$date":
            return _plain(inner)
    return value


def _dialogues_beside(path: Path) -> Path:
    """``sampled-dialogues-full-X.json`` for ``annotated-dialogues-full-X.json`` (the dump's names)."""
    if "annotated-" not in path.name:
        raise UserError(f"Spot The Bot annotations {path}: cannot find the conversations file beside it (expected "
                        f"the dump's name annotated-dialogues-full-<domain>.json); pass dialogues=FILE",
                        param="dialogues")
    return path.with_name(path.name.replace("annotated-", "sampled-", 1))


def spot_the_bot_judgments(path: str | Path, dialogues: str | Path | None = None,
                           with_humans: bool = False) -> pd.DataFrame:
    """Spot The Bot annotations (module docstring: the layout and the column mapping) as a
    judgments table: one judgment per annotated segment, its two speakers the two sides.

    ``dialogues``: the conversations (``sampled-dialogues-full-<domain>.json``; default: beside
    ``path``, named as in the dump); ``with_humans``: keep conversations with a human speaker
    (the authors' win rates leave them out). Errors name the record and the field."""
    path = Path(path).expanduser()
    dialogues = Path(dialogues).expanduser() if dialogues else _dialogues_beside(path)
    conversations = {}
    for at, record in _records(dialogues, "Spot The Bot conversations file", _STB_FIX):
        if not isinstance(record, dict):
            raise UserError(f"{at}: a conversation must be an object; {_STB_FIX}")
        for name in ("_id", "system_type0", "system_type1"):
            if record.get(name) in (None, ""):
                raise UserError(f"{at}: missing field {name!r}; {_STB_FIX}")
        conversations[str(_plain(record["_id"]))] = record
    rows, where, humans = [], [], 0
    for at, record in _records(path, "Spot The Bot annotations file", _STB_FIX):
        if not isinstance(record, dict):
            raise UserError(f"{at}: an annotation must be an object; {_STB_FIX}")
        for name in ("convo_id", "user_name", "entity0_annotation", "entity1_annotation"):
            if name not in record or record[name] in (None, ""):
                raise UserError(f"{at}: missing field {name!r}; {_STB_FIX}")
        convo = str(_plain(record["convo_id"]))
        if convo not in conversations:
            raise UserError(f"{at}: convo_id {convo!r} is not in {dialogues}; pass the conversations file of the "
                            f"same domain as dialogues")
        conversation = conversations[convo]
        left, right = str(conversation["system_type0"]), str(conversation["system_type1"])
        if "human" in (left, right) and not with_humans:
            humans += 1
            continue
        scores = []
        for side in ("entity0_annotation", "entity1_annotation"):
            entity = record[side]
            if not isinstance(entity, dict) or "is_human" not in entity:
                raise UserError(f"{at}: field {side!r} has no 'is_human'; {_STB_FIX}")
            if entity["is_human"] not in _HUMANNESS:
                raise UserError(f"{at}: field '{side}.is_human' must be true, false or null (undecided), got "
                                f"{entity['is_human']!r}")
            scores.append(_HUMANNESS[entity["is_human"]])
        try:
            segment = int(_plain(record["entity0_annotation"].get("decision_turn", 0))) // 2
        except (TypeError, ValueError):
            raise UserError(f"{at}: field 'entity0_annotation.decision_turn' must be a whole number, got "
                            f"{record['entity0_annotation'].get('decision_turn')!r}") from None
        if scores[0] == scores[1]:
            winner, outcome = "", (BOTH_BAD if scores[0] == 0 else TIE)
        else:
            winner, outcome = (left if scores[0] > scores[1] else right), "win"
        end, elapsed = _plain(record.get("end_time")), _plain(record.get("elapsed_time"))
        rows.append({"run_id": f"spot-the-bot:{conversation.get('domain_name') or path.stem}",
                     "unit_id": str(_plain(record.get("package_id")) or ""),
                     "assignment_id": str(_plain(record.get("_id")) or ""), "worker": str(record["user_name"]),
                     "pair_id": f"{convo}@{segment}", "model_left": left, "model_right": right,
                     "dialogue_left": convo, "dialogue_right": convo, "winner": winner,
                     "winner_side": "" if not winner else ("left" if scores[0] > scores[1] else "right"),
                     "outcome": outcome, "reason": "", "question": SPOT_THE_BOT_QUESTION[1],
                     "question_key": SPOT_THE_BOT_QUESTION[0], "is_onboarding": False,
                     "timestamp": end / 1000 if isinstance(end, (int, float)) else None,
                     "duration": elapsed / 1000 if isinstance(elapsed, (int, float)) else None})
        where.append(at)
    if not rows:
        raise UserError(f"Spot The Bot annotations {path}: no annotation is left" +
                        (f" ({humans} of conversations with a human speaker; pass with_humans=True to keep them)"
                         if humans else "") + f"; {_STB_FIX}", param="with_humans" if humans else None)
    table = judgments_table(rows, where)
    table.attrs["conversations_with_humans_left_out"] = humans
    return table
