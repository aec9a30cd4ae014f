"""Human ratings of replies for ``metrics correlate``: one rating per reply, or one per annotator.

Released rating sets come per annotator (USR: three annotators rate every reply; others give
one row per annotator and reply). :func:`rated_replies` reads either layout into one row per
rated reply, the rating aggregated over its annotators by the mean or the median (the choice is
stated in the output and in ``run.json``), and keeps the per-annotator ratings so their
agreement (Krippendorff's alpha, interval level: :func:`parlai_acute.stats.agreement.interval_agreement`)
is reported beside the correlations: a metric cannot agree with people better than people agree
with each other.

Long format (a CSV, other people's column names given by the caller; the CLI's ``--*-column``
options):

================  ==========================================================================
column            meaning
================  ==========================================================================
``item``          what was rated against (a context id); absent: the context text is the item
``context``       the context (turns on separate lines, or split by ``__eou__``)
``response``      the rated reply
``model``         the system that wrote it
``annotator``     who rated it; absent: one row is one reply, rated once (no aggregation)
``rating``        a number
``reference``     the reference reply (the single reference)
``references``    further references (a JSON list or tab-separated)
================  ==========================================================================

Rows with the same item, model and reply are one rated reply; they must agree on the
references, and an annotator rates a reply once.

:func:`usr_ratings` converts USR's released JSON (Mehri and Eskenazi 2020,
``tc_usr_data.json`` / ``pc_usr_data.json``: a list of contexts, each with ``context``,
``fact`` and ``responses``, every response with ``model``, ``response`` and a list of the
annotators' scores per quality, e.g. ``"Overall": [4, 5, 4]``) into that long table: the
``Original Ground Truth`` response is the reference of its context and not itself a rated
reply (so Topical-Chat gives 300 rated replies and PersonaChat 240, as in the published tables),
the annotator is the record's ``annotators`` entry where present, else the position
(``annotator-1`` ...), the context's index is the item.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from parlai_acute.errors import UserError

__all__ = ["AGGREGATES", "COLUMNS", "rated_replies", "usr_ratings", "USR_REFERENCE"]

#: how the annotators' ratings of one reply become its rating
AGGREGATES = {"mean": np.mean, "median": np.median}
#: the long table's roles and their default column names
COLUMNS = {"item": "item", "context": "context", "response": "response", "model": "model", "annotator": "annotator",
           "rating": "rating", "reference": "reference", "references": "references"}
#: USR's name of the human reply every other reply of a context is compared with
USR_REFERENCE = "Original Ground Truth"


def rated_replies(rows: list[dict], where: list[str], columns: dict | None = None,
                  aggregate: str = "mean") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(replies, ratings): one row per rated reply (``id``, ``item``, ``model``, ``context``,
    ``response``, ``references`` (a list), ``rating`` aggregated by ``aggregate``, ``annotators``),
    and the per-annotator ratings (``id``, ``annotator``, ``rating``; empty without an annotator
    column). ``columns`` maps a role of :data:`COLUMNS` to the file's column name; errors name
    the row and the column."""
    names = {**COLUMNS, **(columns or {})}
    if aggregate not in AGGREGATES:
        raise UserError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {aggregate!r}", param="aggregate")
    from parlai_acute.metrics.inputs import split_context, split_references

    present = set(rows[0]) if rows else set()
    per_annotator = names["annotator"] in present
    by_key: dict[tuple, dict] = {}
    long = []
    for row, at in zip(rows, where):
        value = row.get(names["rating"])
        try:
            rating = float(value)
        except (TypeError, ValueError):
            rating = math.nan
        if not math.isfinite(rating):
            raise UserError(f"{at}: column {names['rating']!r}: rating {value!r} is not a finite number; give every "
                            f"reply a numeric rating")
        reference = (row.get(names["reference"]) or "")
        if not reference.strip():
            raise UserError(f"{at}: empty {names['reference']!r}; every reply needs a reference")
        refs = [reference] + split_references(row.get(names["references"]) or "")
        context = row.get(names["context"]) or ""
        item = (row.get(names["item"]) or "") if names["item"] in present else context
        response, model = row.get(names["response"]) or "", row.get(names["model"]) or ""
        key = (item, model, response) if per_annotator else (at,)
        reply = by_key.get(key)
        if reply is None:
            reply = by_key[key] = {"id": str(len(by_key) + 1), "item": item, "model": model, "context":
                                   split_context(context), "response": response, "references": refs, "ratings": [],
                                   "annotators": set(), "where": at}
        elif refs != reply["references"]:
            raise UserError(f"{at}: the references differ from those of the same reply at {reply['where']}; give one "
                            f"reply's rows the same {names['reference']!r} and {names['references']!r}")
        if per_annotator:
            annotator = str(row.get(names["annotator"]) or "").strip()
            if not annotator:
                raise UserError(f"{at}: empty {names['annotator']!r}; name who gave each rating")
            if annotator in reply["annotators"]:
                raise UserError(f"{at}: annotator {annotator!r} rated this reply already at {reply['where']}; one "
                                f"rating per annotator and reply")
            reply["annotators"].add(annotator)
            long.append({"id": reply["id"], "annotator": annotator, "rating": rating})
        reply["ratings"].append(rating)
    how = AGGREGATES[aggregate]
    replies = pd.DataFrame([{"id": r["id"], "item": r["item"], "model": r["model"], "context": r["context"],
                             "response": r["response"], "references": r["references"],
                             "rating": float(how(r["ratings"])), "annotators": len(r["ratings"])}
                            for r in by_key.values()])
    return replies, pd.DataFrame(long, columns=["id", "annotator", "rating"])


def usr_ratings(path: str | Path, quality: str = "Overall") -> pd.DataFrame:
    """USR's released ratings (module docstring: the layout) as the long table of
    :func:`rated_replies` (columns of :data:`COLUMNS`), the annotators' scores of ``quality``."""
    from parlai_acute.jsonl import read_text

    path = Path(path).expanduser()
    fix = "pass USR's tc_usr_data.json or pc_usr_data.json (a JSON list of contexts with their rated responses)"
    import json

    try:
        data = json.loads(read_text(path, "USR ratings file", fix))
    except json.JSONDecodeError as exc:
        raise UserError(f"USR ratings file {path}: not valid JSON ({exc.msg} at line {exc.lineno}); {fix}") from None
    if not isinstance(data, list):
        raise UserError(f"USR ratings file {path}: not a JSON list; {fix}")
    rows = []
    for number, record in enumerate(data, start=1):
        at = f"{path} context {number}"
        if not isinstance(record, dict) or not isinstance(record.get("responses"), list):
            raise UserError(f"{at}: missing field 'responses'; {fix}")
        responses = record["responses"]
        reference = [r.get("response", "") for r in responses if isinstance(r, dict) and r.get("model") == USR_REFERENCE]
        if not reference:
            raise UserError(f"{at}: no response of model {USR_REFERENCE!r}, the reference of the others; {fix}")
        for r in responses:
            if not isinstance(r, dict) or r.get("model") == USR_REFERENCE:
                continue
            scores = r.get(quality)
            if not isinstance(scores, list) or not scores:
                raise UserError(f"{at}: response of {r.get('model')!r} has no list of scores of quality "
                                f"{quality!r}; the qualities are Understandable, Natural, Maintains Context, Engaging, Uses Knowledge, "
                                f"Overall", param="quality")
            annotators = record.get("annotators") or [f"annotator-{i + 1}" for i in range(len(scores))]
            for annotator, score in zip(annotators, scores):
                rows.append({"item": str(number), "context": str(record.get("context", "")).strip(),
                             "response": str(r.get("response", "")).strip(), "model": str(r.get("model", "")),
                             "annotator": str(annotator), "rating": score, "reference": reference[0].strip(),
                             "references": ""})
    if not rows:
        raise UserError(f"USR ratings file {path}: no rated response besides {USR_REFERENCE!r}; {fix}")
    return pd.DataFrame(rows, columns=list(COLUMNS))
