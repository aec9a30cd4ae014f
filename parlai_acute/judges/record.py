"""What every judge output records: version, judge configuration, templates, settings, seed, costs."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Sequence

import parlai_acute
from parlai_acute.files import json_ready, write_json, write_jsonl
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
    """Position bias over every answered order of single-choice items (a tie picks no position)."""
    picks = [(len(r.item.options), j.position_value) for r in results if r.item.kind == "one"
             for j in r.judged if not j.missing and isinstance(j.position_value, int)]
    return json_ready(position_bias(picks))


def run_id(runner: Runner) -> str:
    """The id of a judge run: a digest of the judge's configuration (the same judge, the same id)."""
    import hashlib

    return "judge-" + hashlib.sha1(repr(sorted(runner.judge.config.items())).encode()).hexdigest()[:10]


def count_lines(counts: dict, noun: str, rule: str, biases: Sequence[dict] = ()) -> list[str]:
    """What a judge command says about its items (``noun``: "comparisons", "turns"): consistent,
    inconsistent (``rule``: what happened to them), missing, the first error and position bias."""
    lines = [f"{counts['items']} {noun}: {counts['consistent']} consistent, {counts['inconsistent']} inconsistent "
             f"({counts['inconsistent_following_position']} followed the position; {rule}), {counts['missing']} "
             f"missing ({counts['orders_missing_unparseable']} unparseable and {counts['orders_missing_error']} "
             f"failed orders)"]
    if counts["first_error"]:
        lines.append(f"  first error: {counts['first_error']}")
    for b in biases:
        candidates = f" ({b['positions']} candidates)" if b.get("positions", 2) != 2 else ""
        expected = f", expected {100 * b['expected_rate']:.0f}%" if b.get("expected_rate") is not None else ""
        lines.append(f"position bias{candidates}: first position chosen {b['picks'][0]}/{b['n']} "
                     f"({100 * b['first_rate']:.0f}%{expected}, p={b['pvalue']:.3g})")
    return lines


def cost_line(summary: dict) -> str:
    """What a judge run cost, in one line: calls made, cached and failed, and tokens."""
    c = summary["costs"]
    return (f"calls: {c['calls']} made, {c['cached_calls']} from cache, {c['failed_calls']} failed; "
            f"tokens: {c['prompt_tokens']} prompt + {c['completion_tokens']} completion")


def write_items(path: Path, results: Sequence[ItemResult], protocol) -> None:
    write_jsonl(path, (r.as_record(protocol) for r in results))


def read_summary(judge_summary: str | None, table: str | None) -> dict | None:
    """A judge run's summary.json: ``judge_summary`` (it must exist), else the one beside the judge's
    ``table`` if there is one, else None. A file that is not a JSON object is a UserError."""
    import json

    from parlai_acute.errors import UserError

    path = Path(judge_summary) if judge_summary else Path(table).parent / "summary.json" if table else None
    if path is None or (not judge_summary and not path.is_file()):
        return None
    from parlai_acute.jsonl import input_file

    input_file(path, "judge_summary", "pass the summary.json of the judge run", param="judge_summary")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        summary = None
    if not isinstance(summary, dict):
        raise UserError(f"{path} is not a judge run's summary (a JSON object); pass the summary.json of the judge run")
    return summary


def write_summary(path: Path, summary: dict) -> None:
    write_json(path, summary)


def status_counts(results: Sequence[ItemResult]) -> dict:
    return summarize(results)
