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

Files: a JSON list, JSON lines or a Parquet file (``.parquet``, the Hugging Face dumps' format).
Arena releases millions of battles, so a file is read as one table (pyarrow's JSON-lines and
Parquet readers) and checked column by column, never record by record: three million battles
import in seconds. The table it makes passes :func:`~parlai_acute.acute.judgments.judgments_table`
unchanged (tested); an error still names the record (``FILE:LINE`` for JSON lines, ``FILE record
N`` for a JSON list, ``FILE row N`` for Parquet) and the field.

**The replies' style** (:func:`arena_replies`, for style control): one row per reply
(``dialogue`` = ``question_id`` + ``:a``/``:b``, as in the judgments) with the counts of
:data:`parlai_acute.stats.style_control.FEATURES`. From ``conv_metadata`` where the battle file
has it (Arena's style-control release: ``sum_assistant_a_tokens``, ``header_count_a``,
``list_count_a``, ``bold_count_a``, the dict counts summed; tokens are then Arena's tiktoken
tokens), else counted in the assistant turns of ``conversation_a``/``conversation_b``
(``[{"role", "content"}, ...]``, the Hugging Face dump's layout) by
:func:`~parlai_acute.stats.style_control.reply_style`.

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

import numpy as np
import pandas as pd

from parlai_acute.acute.judgments import BOTH_BAD, COLUMNS, TIE, judgments_table
from parlai_acute.errors import UserError
from parlai_acute.jsonl import input_file, read_jsonl, read_text
from parlai_acute.table_files import dictionary_text

__all__ = ["ARENA_QUESTION", "ARENA_WINNERS", "arena_judgments", "arena_replies", "arena_tables",
           "SPOT_THE_BOT_QUESTION", "spot_the_bot_judgments"]

ARENA_QUESTION = ("arena", "Which response is better?")
#: Arena's ``winner`` values -> (side that won or None, outcome)
ARENA_WINNERS = {"model_a": ("a", "win"), "model_b": ("b", "win"), "tie": (None, TIE), "tie (bothbad)": (None, BOTH_BAD)}
_FIX = ("pass Chatbot Arena battles: a JSON list, JSON lines or a Parquet file of records with model_a, model_b, "
        "winner and judge")
_REQUIRED = ("model_a", "model_b", "winner", "judge")


#: the fields a judgments table is made of (the others, e.g. the conversations, are read for replies only)
_FIELDS = ("question_id", "model_a", "model_b", "winner", "judge", "turn", "language", "tstamp")
_STYLE_FIELDS = ("conv_metadata", "conversation_a", "conversation_b")


def _from_arrow(table) -> pd.DataFrame:
    """An Arrow table as pandas: repeated text (models, judges, winner, language) dictionary-encoded
    in C (the one table reader's :func:`~parlai_acute.table_files.dictionary_text`), so it arrives as
    categories (codes and a few names) instead of millions of strings."""
    return dictionary_text(table, keep=("question_id",)).to_pandas(deduplicate_objects=False)


class _Battles:
    """The battles of one file as a table, and how to name record ``i`` in an error."""

    def __init__(self, path: Path, style: bool = False):
        self.path = path
        self.kind, self.frame = self._read(path, _FIELDS + (_STYLE_FIELDS if style else ()))

    def where(self, i: int) -> str:
        if self.kind == "list":
            return f"{self.path} record {i + 1}"
        if self.kind == "parquet":
            return f"{self.path} row {i + 1}"
        seen = -1  # JSON lines: the line of the i-th non-blank line (only when there is an error)
        with open(self.path, encoding="utf-8-sig") as fh:
            for number, line in enumerate(fh, start=1):
                seen += bool(line.strip())
                if seen == i:
                    return f"{self.path}:{number}"
        return f"{self.path} record {i + 1}"

    @staticmethod
    def _read(path: Path, fields: tuple[str, ...]) -> tuple[str, pd.DataFrame]:
        if path.suffix.lower() == ".parquet":
            input_file(path, "Arena battles file", _FIX)
            try:
                import pyarrow.parquet as pq
            except ImportError:
                raise UserError(f"Arena battles file {path} is Parquet, which needs pyarrow; pip install pyarrow, "
                                f"or pass the battles as JSON lines") from None
            try:
                schema = pq.read_schema(path)
                columns = [f for f in schema.names if f in fields]
                text = [f for f in columns if f != "question_id" and str(schema.field(f).type) in ("string", "large_string")]
                # repeated text read as the file's own dictionary (no decoding into strings and encoding again)
                return "parquet", _from_arrow(pq.read_table(path, columns=columns, read_dictionary=text))
            except Exception as exc:  # pyarrow's errors: not a Parquet file, a broken one
                raise UserError(f"Arena battles file {path}: not a readable Parquet file ({exc}); {_FIX}") from None
        text = read_text(path, "Arena battles file", _FIX)
        if text.lstrip("\ufeff \t\r\n").startswith("["):
            try:
                data = json.loads(text.lstrip("\ufeff"))
            except json.JSONDecodeError as exc:
                raise UserError(f"Arena battles file {path}: not valid JSON ({exc.msg} at line {exc.lineno}); "
                                f"{_FIX}") from None
            del text
            for i, record in enumerate(data):
                if not isinstance(record, dict):
                    raise UserError(f"{path} record {i + 1}: a battle must be an object; {_FIX}")
            return "list", pd.DataFrame.from_records(data) if data else pd.DataFrame()
        del text
        try:  # one table, parsed in C; a file pyarrow cannot type (mixed types in a field) is read line by line
            from pyarrow import json as pa_json

            table = pa_json.read_json(path)
            return "lines", _from_arrow(table.select([f for f in table.column_names if f in fields]))
        except Exception:
            pass
        records = []
        for at, record in read_jsonl(path, "Arena battles file", _FIX):
            if not isinstance(record, dict):
                raise UserError(f"{at}: a battle must be an object; {_FIX}")
            records.append(record)
        return "lines", pd.DataFrame.from_records(records)


def _blank(column: pd.Series) -> np.ndarray:
    """Missing (None, NaN) or empty-string values."""
    if isinstance(column.dtype, pd.CategoricalDtype):  # test the few categories, then their codes
        codes = column.cat.codes.to_numpy()
        empty = np.flatnonzero(column.cat.categories.to_numpy(dtype=object) == "")
        return (codes < 0) | np.isin(codes, empty)
    values = column.to_numpy(dtype=object)
    return pd.isna(values) | (values == "")


def _constant(n: int, value) -> np.ndarray:
    """An object column of one value (``ndarray.fill``: a quarter of ``np.full``'s time for objects)."""
    out = np.empty(n, dtype=object)
    out.fill(value)
    return out


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _kept(battles: _Battles, languages: list[str] | None, max_turns: int | None) -> np.ndarray:
    """Check the fields every battle needs, column by column; the positions of the battles the
    filters keep. An error names the first wrong record and the field."""
    df = battles.frame
    if max_turns is not None and max_turns < 1:
        raise UserError(f"max_turns must be at least 1, got {max_turns}", param="max_turns")
    if not len(df):
        raise UserError(f"Arena battles file {battles.path} holds no battle; {_FIX}")
    for field in _REQUIRED:
        bad = 0 if field not in df.columns else _first(_blank(df[field]))
        if bad is not None:
            raise UserError(f"{battles.where(bad)}: missing field {field!r}; {_FIX}")
    bad = _first(~df["winner"].isin(list(ARENA_WINNERS)).to_numpy())
    if bad is not None:
        raise UserError(f"{battles.where(bad)}: field 'winner' is {df['winner'].iloc[bad]!r}; Arena's values are "
                        f"{', '.join(ARENA_WINNERS)}")
    keep = np.ones(len(df), dtype=bool)
    if languages:
        keep &= df["language"].isin(list(languages)).to_numpy() if "language" in df.columns else False
    if max_turns is not None and "turn" in df.columns:
        raw = df["turn"].to_numpy(dtype=object)
        given = ~pd.isna(raw)
        turns = pd.to_numeric(df["turn"], errors="coerce").to_numpy(dtype=float)
        wrong = keep & given & ~(np.isfinite(turns) & (turns == np.floor(turns)))
        bad = _first(wrong)
        if bad is not None:
            raise UserError(f"{battles.where(bad)}: field 'turn' must be a whole number, got {raw[bad]!r}")
        keep &= ~given | (turns <= max_turns)
    if not keep.any():
        raise UserError(f"Arena battles file {battles.path}: no battle is left" +
                        (f" in {', '.join(sorted(languages))}" if languages else "") +
                        (f" of at most {max_turns} turns" if max_turns else "") + "; check the file and the filters")
    return np.flatnonzero(keep)


def _names(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Text of each value (``str``), each distinct name one shared object (a million rows, a few
    names), and where it is blanks only."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, uniques = column.cat.codes.to_numpy(), column.cat.categories
    else:
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
    text = [str(u) for u in uniques]
    return np.array(text, dtype=object)[codes], np.array([not t.strip() for t in text], dtype=bool)[codes]


def _battle_ids(df: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """``question_id``, or ``battle-N`` (N the record's position in the file, ``rows``) where it is
    missing or empty; ``df`` holds the kept battles."""
    ids = np.array([f"battle-{i + 1}" for i in rows], dtype=object) if "question_id" not in df.columns else None
    if ids is None:
        column = df["question_id"]
        ids = column.to_numpy(dtype=object).copy()
        falsy = _blank(column)
        if pd.api.types.infer_dtype(column, skipna=True) != "string":  # numbers: Python's falsy values, as `or`
            falsy |= (ids == 0) | (ids == False)  # noqa: E712
            ids = np.array([str(v) for v in ids], dtype=object)
        ids[falsy] = [f"battle-{i + 1}" for i in rows[falsy]]
    return ids


def _judgments(battles: _Battles, rows: np.ndarray) -> pd.DataFrame:
    df = battles.frame
    if len(rows) < len(df):  # the filters dropped some: the kept battles (else no copy)
        df = df.iloc[rows].reset_index(drop=True)
    n = len(rows)
    (left, blank_a), (right, blank_b) = _names(df["model_a"]), _names(df["model_b"])
    worker, blank_j = _names(df["judge"])
    bad = _first(blank_a | blank_b | blank_j)
    if bad is not None:
        raise UserError(f"{battles.where(int(rows[bad]))}: a model or judge name is blank; {_FIX}")
    winner = df["winner"].to_numpy(dtype=object)
    a_won, b_won = winner == "model_a", winner == "model_b"
    decided = a_won | b_won
    stamp = pd.to_numeric(df["tstamp"], errors="coerce").to_numpy(dtype=float) \
        if "tstamp" in df.columns else np.full(n, np.nan)
    if "tstamp" in df.columns:
        given = ~_blank(df["tstamp"])
        bad = _first(given & ~(np.isfinite(stamp) & (stamp >= 0)))
        if bad is not None:
            raise UserError(f"{battles.where(int(rows[bad]))}: field 'tstamp' must be a number of seconds (0 or "
                            f"more), got {df['tstamp'].iloc[bad]!r}; fix that value or leave it empty")
    battle = _battle_ids(df, rows)
    empty = _constant(n, "")

    def chosen(when_a, when_b, otherwise=""):  # object columns whose repeated values are one shared object each
        out = _constant(n, otherwise)
        out[a_won] = when_a[a_won] if isinstance(when_a, np.ndarray) else when_a
        out[b_won] = when_b[b_won] if isinstance(when_b, np.ndarray) else when_b
        return out

    outcome = _constant(n, TIE)
    outcome[decided] = "win"
    outcome[winner == "tie (bothbad)"] = BOTH_BAD
    table = {
        "run_id": _constant(n, "arena"), "unit_id": empty, "assignment_id": _constant(n, ""), "worker": worker,
        "pair_id": battle, "model_left": left, "model_right": right,
        "dialogue_left": battle + ":a", "dialogue_right": battle + ":b",
        "winner": chosen(left, right), "loser": chosen(right, left), "winner_side": chosen("left", "right"),
        "outcome": outcome,
        "reason": _constant(n, ""), "question": _constant(n, ARENA_QUESTION[1]),
        "question_key": _constant(n, ARENA_QUESTION[0]), "is_onboarding": np.zeros(n, dtype=bool),
        "onboarding_correct": _constant(n, None), "timestamp": stamp, "duration": np.full(n, np.nan)}
    # copy=False: the columns as made, not consolidated into one 2-D block (a copy of 3 million rows x 16)
    return pd.DataFrame({name: table[name] for name in COLUMNS}, copy=False)


def _count(value) -> float:
    """A conv_metadata count: a number, or a dict of counts (Arena's header/list/bold counts) summed."""
    if isinstance(value, dict):
        return float(sum(v for v in value.values() if v is not None))
    return float("nan") if value is None else float(value)


def _replies(battles: _Battles, rows: np.ndarray, dialogue_ids: np.ndarray, left: np.ndarray,
             right: np.ndarray) -> pd.DataFrame | None:
    from parlai_acute.stats.style_control import reply_style

    df = battles.frame
    out = []
    if "conv_metadata" in df.columns:
        keys = {"tokens": "sum_assistant_{}_tokens", "headers": "header_count_{}", "lists": "list_count_{}",
                "bold": "bold_count_{}"}
        for side, models in (("a", left), ("b", right)):
            rows_out = {"dialogue": dialogue_ids + f":{side}", "model": models}
            meta = df["conv_metadata"].iloc[rows].to_numpy(dtype=object)
            for name, key in keys.items():
                rows_out[name] = [_count((m or {}).get(key.format(side))) if isinstance(m, dict) else np.nan
                                  for m in meta]
            out.append(pd.DataFrame(rows_out).assign(source="conv_metadata"))
    elif "conversation_a" in df.columns and "conversation_b" in df.columns:
        for side, models in (("a", left), ("b", right)):
            texts = ["\n".join(str(t.get("content") or "") for t in (conv if conv is not None else [])
                               if isinstance(t, dict) and t.get("role") == "assistant")
                     for conv in df[f"conversation_{side}"].iloc[rows].to_numpy(dtype=object)]
            styles = pd.DataFrame([reply_style(text) for text in texts])
            out.append(styles.assign(dialogue=dialogue_ids + f":{side}", model=models, source="text"))
    else:
        return None
    table = pd.concat(out, ignore_index=True)
    return table[["dialogue", "model", "tokens", "headers", "lists", "bold", "source"]]


def arena_tables(path: str | Path, languages: list[str] | None = None,
                 max_turns: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(judgments, replies) of one battles file read once: :func:`arena_judgments` and
    :func:`arena_replies` (None when the file holds neither ``conv_metadata`` nor the conversations)."""
    battles = _Battles(Path(path).expanduser(), style=True)
    rows = _kept(battles, languages, max_turns)
    table = _judgments(battles, rows)
    replies = _replies(battles, rows, table["pair_id"].to_numpy(dtype=object), table["model_left"].to_numpy(),
                       table["model_right"].to_numpy())
    return table, replies


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
    battles = _Battles(Path(path).expanduser())
    return _judgments(battles, _kept(battles, languages, max_turns))


def arena_replies(path: str | Path, languages: list[str] | None = None, max_turns: int | None = None) -> pd.DataFrame:
    """The style of each reply of the battles (module docstring), for style control; a file with
    neither ``conv_metadata`` nor the conversations is a :class:`UserError`."""
    _, replies = arena_tables(path, languages, max_turns)
    if replies is None:
        raise UserError(f"Arena battles file {path} holds neither conv_metadata nor conversation_a/conversation_b, "
                        f"so the replies' length and markdown are unknown; pass the release with the conversations as path",
                        param="path")
    return replies


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
