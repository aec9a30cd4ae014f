"""ACUTE-Eval pairings files: the format ParlAI's ``acute_eval`` task reads, validated and built.

A pairings file has one JSON object per line; each line is one comparison shown to an
annotator (Li, Weston, Roller 2019)::

    {"is_onboarding": false,
     "speakers_to_eval": ["model_a", "model_b"],
     "dialogue_ids": ["model_a:4", "model_b:12"],
     "dialogue_dicts": [
        {"id": "model_a:4", "speakers": ["model_a", "other_speaker"], "context": [],
         "dialogue": [{"id": "model_a", "text": "..."}, {"id": "other_speaker", "text": "..."}]},
        {"id": "model_b:12", "speakers": ["other_speaker", "model_b"], ...}]}

Onboarding (gold) lines have ``"is_onboarding": true`` and ``correct_answer`` (the
speaker id that must win); ``dialogue_ids`` is optional there, as in ParlAI's
``onboarding.json``. The evaluated speaker of dialogue *i* is ``speakers_to_eval[i]`` and
must not speak in the other dialogue: ParlAI's ``AcuteEvalRunner`` asserts exactly that
order. The same file therefore runs in ParlAI's task and in ours.

Files we build name each conversation ``"<model>:<line of its log>"`` (stable across seeds
and model sets, so a worker's "already seen" history survives a rebuilt file) and add
``source`` (``log:line``) to each dialogue; ParlAI ignores extra keys.

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
    from parlai_acute.jsonl import read_jsonl

    return [validate_pairing(obj, where) for where, obj in
            read_jsonl(path, "pairings file", "create it with `parlai-acute acute pairings`")]


# ----------------------------------------------------------------------------- selection


def plan_pair(n_a: int, n_b: int, comparisons: int, rng: random.Random,
              usage_a: list[int] | None = None, usage_b: list[int] | None = None) -> list[tuple[int, int]]:
    """Choose ``comparisons`` (a, b) conversation index pairs for one model pair.

    Guarantees, the selection rules of the ACUTE-Eval paper:
    no (a, b) pair twice; if ``comparisons <= min(n_a, n_b)`` no conversation twice;
    otherwise the uses of any two conversations of one model differ by at most one.

    Index k is paired as (k mod n_a, (k + k // L) mod n_b), L = lcm(n_a, n_b): the k of one
    block of L steps visit distinct pairs (Chinese remainder theorem), and the shift by
    ``k // L`` moves each later block onto the next residue class of (b - a) mod gcd, so
    blocks never meet. The indices are then mapped through random permutations that put
    the least used conversations so far (``usage_*``, across model pairs) first.
    """
    if comparisons > n_a * n_b:
        raise ValueError(f"{comparisons} comparisons need more than {n_a}x{n_b} conversation pairs")
    perms = []
    for n, usage in ((n_a, usage_a), (n_b, usage_b)):
        perm = list(range(n))
        rng.shuffle(perm)
        if usage is not None:
            perm.sort(key=usage.__getitem__)  # stable: ties keep the random order
        perms.append(perm)
    lcm = math.lcm(n_a, n_b)
    chosen = [(perms[0][k % n_a], perms[1][(k + k // lcm) % n_b]) for k in range(comparisons)]
    if usage_a is not None and usage_b is not None:
        for a, b in chosen:
            usage_a[a] += 1
            usage_b[b] += 1
    return chosen


# ----------------------------------------------------------------------------- logs -> dialogues

SIDES = ("first", "second")
#: --self-chat-side: random per conversation, a fixed side, or the side that did not speak a seeded opening.
SELF_CHAT_SIDES = ("random", "first", "second", "unseeded")
#: The default: never credit a model with a dataset's human-written opening (random when a log has none).
DEFAULT_SELF_CHAT_SIDE = "unseeded"
#: Who talked to whom in a conversation (see :func:`mixed_settings_warning`).
SELF_CHAT, HUMAN_MODEL, HUMAN_HUMAN, MODEL_MODEL = "self-chat", "human-model", "human-human", "model-model"
_HUMAN_ID = re.compile(r"human|worker|turker|user|person|crowd", re.IGNORECASE)


@dataclass
class ModelLog:
    """One ``NAME=PATH[:SPEAKER]`` argument: which log holds a model and which speaker it is.

    ``speaker``: ``auto`` (the non-human speaker of human-model logs; a side chosen by
    ``self_chat_side`` for self-chats and human-human logs), ``random``, ``first``,
    ``second``, ``unseeded``, or a speaker id of the log.
    """

    name: str
    path: str
    speaker: str = "auto"


def parse_model_spec(spec: str) -> ModelLog:
    name, eq, rest = spec.partition("=")
    name = name.strip()
    if not eq or not name or not rest:
        raise UserError(f"model {spec!r} is not NAME=PATH[:SPEAKER]; write e.g. blender=logs/blender.jsonl")
    if name in RESERVED_NAMES:
        raise UserError(f"model name {name!r} is reserved for the unevaluated speaker; choose another name")
    path, speaker = rest, "auto"
    if ":" in rest and not Path(rest).exists():
        path, speaker = rest.rsplit(":", 1)
        if not speaker:
            raise UserError(f"model {spec!r} ends with ':'; give a speaker id, first, second or random after it")
    return ModelLog(name, path, speaker)


@dataclass
class Dialogue:
    """A conversation ready for a pairings line: evaluated side renamed to the model name."""

    uid: str  # "<model>:<line of the log>": unique in a file, stable across seeds and model sets
    model: str
    source: str
    turns: list[dict]
    context: list = field(default_factory=list)
    setting: str = SELF_CHAT  # who talked: SELF_CHAT, HUMAN_MODEL, HUMAN_HUMAN or MODEL_MODEL
    cut: int = 0  # turns dropped from the end: from the first one a person wrote in the other side's place

    def as_dict(self) -> dict:
        speakers: list[str] = []
        for turn in self.turns:
            if turn["id"] not in speakers:
                speakers.append(turn["id"])
        return {"id": self.uid, "speakers": speakers, "dialogue": self.turns, "context": self.context,
                "source": self.source}


def person_in_partners_place(turns: list[dict]) -> int | None:
    """Index of the first turn a person wrote in the other side's place: the same person id twice in
    a row, as a per-turn SATA-User log records a reply the worker wrote instead of the models'.

    ACUTE-Eval's judge reads every turn of the evaluated side as the model's, so a conversation
    is cut before the message that turn answers (the worker's words are never credited to a model,
    and the conversation ends on the model's last turn)."""
    from parlai_acute.logs import HUMAN, turn_role

    if len({t["id"] for t in turns}) != 2:
        return None
    for i in range(1, len(turns)):
        if turns[i]["id"] == turns[i - 1]["id"] and turn_role(turns[i]) == HUMAN:
            return i
    return None


def _split_context(ep: Episode) -> tuple[list[dict], list]:
    turns = [t for t in ep.turns if t["id"] != CONTEXT_ID]
    context = list(ep.context) + [t for t in ep.turns if t["id"] == CONTEXT_ID]
    return turns, context


def log_metadata(path: str | Path) -> dict:
    """The ``.metadata`` beside a Conversations log (``{}`` if absent or unreadable)."""
    meta = Path(path).with_suffix(".metadata")
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


CONFIG_KEYS = ("model", "model_file", "gguf", "inference", "temperature", "topp", "topk", "num_samples",
               "beam_size", "max_new_tokens", "repetition_filter", "persona", "system_prompt", "openai_base_url",
               "openai_model", "hf_model", "task", "selfchat_max_turns", "seed")


def model_configs(pairings_path: str | Path) -> dict:
    """Each model's configuration for a report: from the pairings file's ``.metadata.json``, the
    log it came from, that log's ParlAI ``.metadata`` (agent and options) and the first reply's
    ``decoding`` record. ``{}`` when the pairings were made elsewhere (no sidecar)."""
    from parlai_acute.logs import read_log

    sidecar = Path(pairings_path).with_name(Path(pairings_path).stem + ".metadata.json")
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for model in meta.get("models") or []:
        log = model.get("log") or ""
        opt = (log_metadata(log).get("opt") or {}) if log else {}
        entry = {"log": log, "speaker": model.get("speaker"), "conversations": model.get("conversations")}
        entry["options"] = {k: opt[k] for k in CONFIG_KEYS if opt.get(k) not in (None, "")}
        for spec_key in ("model_spec", "partner_model_spec"):
            if log_metadata(log).get(spec_key):
                entry[spec_key] = log_metadata(log)[spec_key]
        try:
            decoding = next((t["decoding"] for ep in read_log(log) for t in ep.turns if t.get("decoding")), None)
        except UserError:
            decoding = None
        if decoding:
            entry["decoding"] = {k: v for k, v in decoding.items() if not isinstance(v, (list, dict))}
        out[model.get("name", log)] = entry
    return out


def _is_plain_self_chat(meta: dict) -> bool:
    """A self-chat of one model with itself (ParlAI's metadata; ours adds ``partner_model_spec``)."""
    return meta.get("self_chat") is True and not meta.get("partner_model_spec")


def _setting(turns: list[dict], self_chat: bool) -> str:
    """Who talked to whom, from the log's metadata and the speaker ids."""
    first, second = turns[0]["id"], turns[1]["id"]
    if self_chat or first == second:
        return SELF_CHAT
    humans = bool(_HUMAN_ID.search(first)) + bool(_HUMAN_ID.search(second))
    return (MODEL_MODEL, HUMAN_MODEL, HUMAN_HUMAN)[humans]


def _unseeded_side(turns: list[dict]) -> str:
    """The side that spoke fewer dataset-written turns (a ``seed`` field); random on a tie or none.

    Our chitchat self-chats open with 1-3 real turns of a human conversation said on the
    agents' behalf: evaluating the side that spoke them would credit a model with a person's words.
    """
    seeded = [0, 0]
    for i, turn in enumerate(turns):
        if "seed" in turn:
            seeded[i % 2] += 1
    if seeded[0] == seeded[1]:
        return "random"
    return SIDES[0] if seeded[0] < seeded[1] else SIDES[1]


def _model_side(ml: ModelLog, ep: Episode, turns: list[dict], self_chat_side: str, rng: random.Random,
                self_chat: bool = False) -> int:
    where = f"{ep.source}:{ep.line}"
    first, second = turns[0]["id"], turns[1]["id"]
    spec = ml.speaker
    if spec == "auto":
        human = (bool(_HUMAN_ID.search(first)), bool(_HUMAN_ID.search(second)))
        if self_chat or first == second:
            spec = self_chat_side
        elif human[0] != human[1]:
            return 1 if human[0] else 0
        elif not any(human):
            raise UserError(f"{where}: cannot tell which of {first!r} and {second!r} is model {ml.name!r}; "
                            f"write {ml.name}={ml.path}:SPEAKER_ID (or :first, :second, :random)")
        else:
            spec = self_chat_side  # a human-human log: either human stands for "human"
    if spec == "unseeded":
        spec = _unseeded_side(turns)
    if spec == "random":
        return rng.randrange(2)
    if spec in SIDES:
        return SIDES.index(spec)
    if spec == first != second:
        return 0
    if spec == second != first:
        return 1
    raise UserError(f"{where}: speaker {spec!r} of model {ml.name!r} is not one of the two speakers "
                    f"{first!r}, {second!r}; fix the :SPEAKER suffix or use :first/:second/:random")


def load_dialogues(ml: ModelLog, self_chat_side: str = DEFAULT_SELF_CHAT_SIDE, seed: int = 0,
                   normalize: bool = False) -> list[Dialogue]:
    """Read one model's log and turn every conversation into a :class:`Dialogue`."""
    from parlai_acute.logs import read_log

    if self_chat_side not in SELF_CHAT_SIDES:
        raise UserError(f"self-chat side {self_chat_side!r} is unknown; use one of {', '.join(SELF_CHAT_SIDES)}")
    rng = random.Random(f"{seed}:{ml.name}")
    normal = _normalizer() if normalize else (lambda text: text)
    meta = log_metadata(ml.path)
    self_chat = _is_plain_self_chat(meta)
    if ml.speaker == "auto" and meta.get("self_chat") is True and not self_chat:
        raise UserError(f"{ml.path} is a self-chat of two different models ({meta.get('model_spec')!r} and "
                        f"{meta.get('partner_model_spec')!r}); write {ml.name}={ml.path}:first or :second")
    dialogues = []
    for ep in read_log(ml.path):
        where = f"{ep.source}:{ep.line}"
        turns, context = _split_context(ep)
        cut_at = person_in_partners_place(turns)
        cut = 0
        if cut_at is not None:
            keep = cut_at - 1  # also the message the person then answered themselves: ends on the model's turn
            cut, turns = len(turns) - keep, turns[:keep]
            if len(turns) < 2:
                continue  # nothing of the model's before the person's turn: nothing to compare
        distinct = {t["id"] for t in turns}
        if len(distinct) > 2:
            raise UserError(f"{where}: {len(distinct)} speakers ({', '.join(sorted(distinct))}); ACUTE-Eval "
                            "compares two-party conversations, drop this conversation from the log")
        if len(turns) < 2:
            raise UserError(f"{where}: fewer than two turns; drop this conversation or rerun the chat")
        if len(distinct) == 2:
            Episode(turns=turns, line=ep.line, source=ep.source).check_alternating()
        else:  # one id for both sides (ParlAI self-chat): sides are positions in each [a, b] pair
            sizes = [len([t for t in pair if t.get("id") != CONTEXT_ID]) for pair in ep.raw.get("dialog", [])
                     if isinstance(pair, list)]
            sizes = [size for size in sizes if size]
            if any(size != 2 for size in sizes[:-1]):
                raise UserError(f"{where}: a turn pair of this self-chat has not two turns, so the speakers cannot "
                                "be told apart; drop this conversation or rerun the self-chat")
        side = _model_side(ml, ep, turns, self_chat_side, rng, self_chat)
        out = []
        for i, turn in enumerate(turns):
            row = {"id": ml.name if i % 2 == side else OTHER_SPEAKER, "text": normal(turn["text"])}
            if "image_src" in turn:
                row["image_src"] = turn["image_src"]
            out.append(row)
        dialogues.append(Dialogue(f"{ml.name}:{ep.line}", ml.name, where, out, context,
                                  _setting(turns, self_chat), cut))
    return dialogues


def mixed_settings_warning(dialogues: dict[str, list[Dialogue]]) -> str | None:
    """One line when models from human-model chats are compared with models from self-chats.

    In a human-model log the model talked to a person; in a self-chat to a model. ACUTE-Eval
    (Li et al. 2019) compares like with like: a difference between the two settings mixes
    the models with who they talked to.
    """
    settings = {name: {d.setting for d in ds} for name, ds in dialogues.items()}
    with_people = [name for name, s in settings.items() if HUMAN_MODEL in s]
    with_models = [name for name, s in settings.items() if s & {SELF_CHAT, MODEL_MODEL}]
    if not with_people or not with_models:
        return None
    return (f"{', '.join(with_people)} talked to people (human-model log) but {', '.join(with_models)} "
            "talked to models (self-chat): differences mix the models with their partners; compare "
            "human-model logs with human-model logs and self-chats with self-chats")


def _normalizer():
    from parlai.utils.strings import normalize_reply  # as ParlAI's fast_eval does

    return normalize_reply


def build_pairings(dialogues: dict[str, list[Dialogue]], comparisons_per_pair: int, seed: int = 0,
                   onboarding: Iterable[dict] = ()) -> list[dict]:
    """Pairings lines: onboarding first, then ``comparisons_per_pair`` per unordered model pair.

    Models are paired in the order given; the lines of one pair keep ``speakers_to_eval``
    in that order (ParlAI's runner shows them left/right at random).
    """
    if comparisons_per_pair < 1:
        raise UserError(f"comparisons_per_pair must be at least 1, got {comparisons_per_pair}",
                        param="comparisons_per_pair")
    names = list(dialogues)
    if len(names) < 2:
        raise UserError("ACUTE-Eval needs at least two models; pass two or more NAME=PATH arguments")
    for a, b in itertools.combinations(names, 2):
        n_a, n_b = len(dialogues[a]), len(dialogues[b])
        if comparisons_per_pair > n_a * n_b:
            raise UserError(f"models {a!r} ({n_a} conversations) and {b!r} ({n_b}) give only {n_a * n_b} distinct "
                            f"conversation pairs, fewer than comparisons_per_pair {comparisons_per_pair}; "
                            "lower it or add conversations", param="comparisons_per_pair")
    rng = random.Random(seed)
    usage = {name: [0] * len(dialogues[name]) for name in names}
    lines = [dict(p) for p in onboarding]
    for a, b in itertools.combinations(names, 2):
        for i, j in plan_pair(len(dialogues[a]), len(dialogues[b]), comparisons_per_pair, rng, usage[a], usage[b]):
            da, db = dialogues[a][i], dialogues[b][j]
            lines.append({"is_onboarding": False, "speakers_to_eval": [a, b], "dialogue_ids": [da.uid, db.uid],
                          "dialogue_dicts": [da.as_dict(), db.as_dict()]})
    return lines


# ----------------------------------------------------------------------------- onboarding

DEFAULT_ONBOARDING = Path(__file__).parent / "onboarding" / "default.jsonl"


def read_onboarding(path: str | Path = DEFAULT_ONBOARDING) -> list[dict]:
    """Gold pairs from a JSONL file, or a JSON object/list (ParlAI's ``onboarding.json``)."""
    from parlai_acute.jsonl import read_jsonl, read_text

    path = Path(path)
    fix = "pass a JSON/JSONL file of gold pairs or no_onboarding"
    try:
        whole = json.loads(read_text(path, "onboarding file", fix, "no_onboarding"))
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        pairs = [(f"{path}", whole)]
    elif isinstance(whole, list):
        pairs = [(f"{path}[{i}]", obj) for i, obj in enumerate(whole)]
    else:
        pairs = list(read_jsonl(path, "onboarding file", fix, "no_onboarding"))
    if not pairs:
        raise UserError(f"onboarding file {path} has no gold pairs; add some or pass no_onboarding",
                        param="no_onboarding")
    for where, obj in pairs:
        validate_pairing(obj, where)
        if not obj["is_onboarding"]:
            _fail(where, "is_onboarding", "is false in an onboarding file", "set it to true and add correct_answer")
    return [obj for _, obj in pairs]
