"""Write a release bundle of a stored run (any task): the protocol tables the run stored (and its
Conversations log, when the task keeps one), the per-worker review table, worker ids replaced by
salted pseudonyms everywhere (cells, logs, free text), e-mail addresses and phone numbers flagged in
``pii_flags.json``, and ``datasheet.md`` / ``datasheet.json``.

Every file is checked, byte by byte, for every original worker id before it is written; one found
is an error and the bundle is not written at all (:func:`parlai_acute.files.output_dir`).
"""
from __future__ import annotations

import datetime
import json
import statistics
import tempfile
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.files import atomic_write, json_ready, output_dir
from parlai_acute.registry import PROTOCOLS, resolve
from parlai_acute.release.datasheet import markdown
from parlai_acute.release.pii import scan
from parlai_acute.release.pseudonyms import Pseudonymizer, load_salt

FREE_TEXT = {"reason", "question", "text", "worker_message", "user_reply", "justification", "context", "reply",
             "original", "error"}


def run_settings(db, task_name: str) -> list[dict]:
    """What each run of ``task_name`` was launched with (Mephisto stores the Hydra config): blueprint and task."""
    from omegaconf import OmegaConf

    runs = []
    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            args = run.args if OmegaConf.is_config(run.args) else None
            part = {k: OmegaConf.to_container(OmegaConf.select(args, k), resolve=True)
                    if args is not None and OmegaConf.is_config(OmegaConf.select(args, k, default=None)) else {}
                    for k in ("blueprint", "task")}
            runs.append({"task_run_id": str(run.db_id), "provider": run.provider_type, **part})
    return runs


def tables(db, task_name: str) -> dict[str, object]:
    """{protocol name: its validated table} for every protocol with rows stored by ``task_name``."""
    found = {}
    for p in PROTOCOLS.values():
        records = []
        for ref in p.task_records:
            got = resolve(ref)(db, task_name)
            records += got[0] if isinstance(got, tuple) else got
        if records:
            found[p.name] = p.get("from_records")(records)
    return found


def release(db, task_name: str, outdir: str | Path, salt_file: str | Path | None = None) -> dict:
    """Write the bundle of ``task_name`` into ``outdir``; returns a summary (files, salt file and whether
    it was made, pii flags)."""
    import pandas as pd

    from parlai_acute.mephisto_tasks.live import review as live_review
    from parlai_acute.review.rules import Policy

    outdir = Path(outdir)
    salt_path = Path(salt_file) if salt_file else outdir.resolve().parent / f"{outdir.resolve().name}.salt"
    p = live_review.protocol_of(db, task_name)
    found = tables(db, task_name)
    if not found:
        raise UserError(f"Mephisto task {task_name!r} has no stored rows yet; nothing to release")
    plan = live_review.review(db, task_name, Policy())
    agents = plan.agents
    workers = {a["worker"] for a in agents} | {str(w) for t in found.values() if "worker" in t for w in t["worker"]}
    salt, created = load_salt(salt_path, outdir)
    pz = Pseudonymizer(salt, workers)
    pii, files = [], []

    def put(name: str, text: str, rows: int, about: str) -> None:
        text = pz(text)
        leaked = pz.found(text.encode("utf-8"))
        if leaked:  # cannot happen after pz(); a guard against a future change writing around it
            raise UserError(f"{name} would contain {len(leaked)} original worker ids; nothing was written")
        with atomic_write(outdir / name) as out:
            out.write(text)
        files.append({"file": name, "rows": rows, "about": about})

    def flag(name: str, table) -> None:
        for column in [c for c in table.columns if c in FREE_TEXT]:
            for number, value in enumerate(table[column].tolist(), 1):
                for kind, _ in scan(value if isinstance(value, str) else ""):
                    pii.append({"file": name, "row": number, "column": column, "kind": kind})

    with output_dir(outdir):
        for name, table in found.items():
            q = PROTOCOLS[name]
            file = f"{q.table}.csv" if len(found) == 1 or name == p.name else f"{name}_{q.table}.csv"
            flag(file, table)
            put(file, table.to_csv(index=False), len(table), f"the {name} table (one row per {q.row}); columns as in "
                                                          f"parlai_acute.{q.package.split('.')[-1]}.{q.table}")
        store = p.review_units.partition(":")[0]
        writer = getattr(resolve(store), "write_conversations", None)
        if writer is not None:
            units = resolve(p.review_units)(db, task_name)
            units = units[0] if isinstance(units, tuple) else units
            with tempfile.TemporaryDirectory() as tmp:
                if writer(units, Path(tmp) / "conversations.jsonl") is not None:
                    for path in sorted(Path(tmp).glob("conversations*")):
                        text = path.read_text(encoding="utf-8").replace(str(Path(tmp)) + "/", "")
                        rows = text.count("\n")
                        for number, line in enumerate(text.splitlines(), 1):
                            for kind, _ in scan(line):
                                pii.append({"file": path.name, "row": number, "column": "", "kind": kind})
                        put(path.name, text, rows, "ParlAI Conversations log of every dialogue" if path.suffix ==
                            ".jsonl" else "the log's ParlAI metadata")
        table = plan.table
        put("workers.csv", table.to_csv(index=False), len(table),
            "the per-worker review table (evidence and pay; parlai_acute.review.plan.TABLE_COLUMNS)")
        put("pii_flags.json", pd.Series(pii, dtype=object).to_json(orient="values", indent=1) if pii else "[]\n",
            len(pii), "where free text holds an e-mail address or a phone number (kind, file, row; not changed)")
        sheet = datasheet(db, task_name, p.name, found, plan, pii, files)
        put("datasheet.json", json.dumps(json_ready(sheet), indent=2, sort_keys=True) + "\n", 1, "this datasheet")
        put("datasheet.md", markdown(sheet), 1, "this datasheet, for people")
        put("README.md", dataset_card(sheet, [f["file"] for f in files if f["file"].endswith(".csv")]), 1,
            "the dataset card: `datasets` (and the Hugging Face Hub) find each table from it")
    return {"files": [outdir / f["file"] for f in files], "salt_file": salt_path, "salt_created": created,
            "pii_flags": len(pii), "workers": len(workers)}


def dataset_card(sheet: dict, tables: list[str]) -> str:
    """A Hugging Face dataset card: YAML front matter naming one configuration per CSV table (so
    ``datasets.load_dataset(DIR, name)`` reads it), then where the datasheet is."""
    lines = ["---", "configs:"]
    for i, name in enumerate(tables):
        lines += [f"- config_name: {name[:-4]}", f"  data_files: {name}"] + (["  default: true"] if i == 0 else [])
    lines += ["---", "", f"# {sheet['task_name']} ({sheet['protocol']})", "",
              "Collected with parlai_acute; worker ids are salted pseudonyms. What was asked, pay, exclusions and "
              "quality checks: [datasheet.md](datasheet.md) (and datasheet.json).", ""]
    return "\n".join(lines)


def datasheet(db, task_name, protocol, found, plan, pii, files) -> dict:
    import parlai_acute
    from parlai_acute.mephisto_tasks.live.review import default_log, read_log

    t, agents = plan.table, plan.agents
    asked = []
    for table in found.values():
        for column in ("question", "question_key", "protocol", "mode"):
            if column in table:
                asked += [f"{column}: {v}" for v in sorted({str(v) for v in table[column] if str(v)})]
    hourly = [float(v) for v in t["hourly_pay"] if v == v]
    log = read_log(default_log(db, task_name))
    actions: dict[str, int] = {}
    for entry in log:
        actions[entry["action"]] = actions.get(entry["action"], 0) + 1
    exclusions: dict[str, int] = {}
    for text in t["excluded_because"]:
        for part in filter(None, str(text).split("; ")):
            rule, _, n = part.rpartition(": ")
            exclusions[rule] = exclusions.get(rule, 0) + int(n)
    statuses: dict[str, int] = {}
    for a in agents:
        statuses[a["status"]] = statuses.get(a["status"], 0) + 1
    return {
        "task_name": task_name, "protocol": protocol, "package_version": parlai_acute.__version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "asked": asked,
        "work": {"workers": len(t), "units": int(t["units"].sum()), "agents": len(agents), "statuses": statuses,
                 "judgments": int(t["judgments"].sum()), "hours": float(t["hours"].sum(skipna=True))},
        "pay": {"unit_pay": sorted({a["pay"] for a in agents}), "base_pay": float(t["base_pay"].sum()),
                "bonuses_paid": float(t["bonus_paid"].sum()),
                "hourly_median": statistics.median(hourly) if hourly else None,
                "hourly_min": min(hourly) if hourly else None,
                "hourly_note": (f"{len(hourly)} of {len(t)} workers have stored times" if hourly else
                                "no worker has stored start and end times, so no hourly pay"),
                "actions": actions},
        "exclusions": exclusions,
        "quality_checks": {"gold_items": int(t["gold_items"].sum()), "gold_correct": int(t["gold_correct"].sum()),
                           "messages": int(t["messages"].sum()), "messages_flagged": int(t["messages_flagged"].sum()),
                           "alpha": 0.05, "position_bias_workers": int((t["position_p"] < 0.05).sum()),
                           "pii_flags": len(pii)},
        "configuration": run_settings(db, task_name),
        "files": list(files),
    }
