"""What every judge output records: version, judge configuration, templates, settings, seed, costs."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Sequence

import parlai_acute
from parlai_acute.files import write_json, write_jsonl
from parlai_acute.judges.runner import ItemResult, Runner, summarize
from parlai_acute.stats.position_bias import position_bias


def provenance(runner: Runner, templates: Sequence[str]) -> dict:
    return {"parlai_acute_version": parlai_acute.__version__, "judge": runner.judge.name,
            "judge_config": runner.judge.config, "templates": sorted(set(templates)),
            "settings": dataclasses.asdict(runner.settings), "seed": runner.settings.seed}


def costs(runner: Runner) -> dict:
    return {"calls": runner.calls, "cached_calls": runner.cached_calls, "failed_calls": runner.failed_calls,
            "prompt_tokens": runner.prompt_tokens, "completion_tokens": runner.completion_tokens}


def bias(results: Sequence[ItemResult]) -> list:
    """Position bias over every answered order of single-choice items."""
    picks = [(len(r.item.options), j.position_value) for r in results if r.item.kind == "one"
             for j in r.judged if not j.missing]
    return _clean(position_bias(picks))


def _clean(obj):
    if isinstance(obj, float) and math.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def write_items(path: Path, results: Sequence[ItemResult], protocol) -> None:
    write_jsonl(path, (r.as_record(protocol) for r in results))


def read_summary(given: str | None, table: str | None) -> dict | None:
    """A judge run's summary.json: ``given`` (it must exist), else the one beside the judge's
    ``table`` if there is one, else None. A file that is not a JSON object is a UserError."""
    import json

    from parlai_acute.errors import UserError

    path = Path(given) if given else Path(table).parent / "summary.json" if table else None
    if path is None or (not given and not path.is_file()):
        return None
    if not path.is_file():
        raise UserError(f"--judge-summary {path} does not exist; pass the summary.json of the judge run")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        summary = None
    if not isinstance(summary, dict):
        raise UserError(f"{path} is not a judge run's summary (a JSON object); pass the summary.json of the judge run")
    return summary


def write_summary(path: Path, summary: dict) -> None:
    write_json(path, _clean(summary))


def status_counts(results: Sequence[ItemResult]) -> dict:
    return summarize(results)
