"""Review a stored run through Mephisto: read it into the review's evidence (every task, through its
registry entry) and carry the plan out with Mephisto's own unit and worker API.

Pay is keyed to the *work*, never to an agent row: a piece of work continued in a later agent (a
relaunch, a page back after a drop: :mod:`.sessions`) is one unit of work, decided and paid once
through the agent that holds it; the agents it continued get no action of their own (logged as
such), so nobody is approved twice for one assignment; an agent that held no work at all (a page told
"no more work", or one that stored nothing; a run before the live runner expired such agents left
them "completed") is neither a unit of the review nor approved. Rejected work is not paid; work cut short
(the worker left, the run stopped) cannot be approved on the provider, so its time is paid through
the wage bonus.

``apply`` is idempotent: an agent already approved, soft-rejected or rejected is skipped, a worker
who holds the block qualification is skipped, and bonuses already paid (read back from the action
log) count toward the wage, so a second ``--apply`` does nothing. Every action is appended to the
log (JSON lines, rewritten atomically after each action) with the evidence behind it.
"""
from __future__ import annotations

import time
from pathlib import Path

from parlai_acute.errors import UserError
from parlai_acute.files import write_jsonl
from parlai_acute.registry import PROTOCOLS, resolve

PAYABLE = ("completed", "approved", "soft_rejected")  # submitted work: its unit's pay is (or will be) paid
DONE = {"approved": "approve", "soft_rejected": "soft_reject", "rejected": "reject"}


def protocol_of(db, task_name: str):
    """The protocol whose live task ran as ``task_name`` (by the task's blueprint type)."""
    tasks = db.find_tasks(task_name=task_name)
    if not tasks:
        known = sorted({task.task_name for task in db.find_tasks()})
        raise UserError(f"no Mephisto task named {task_name!r} (known: {', '.join(known) or 'none'}); pass the "
                        f"mephisto.task.task_name the run was launched with (and its mephisto_db)")
    types = {task.task_type for task in tasks}
    for p in PROTOCOLS.values():
        if p.review_units and p.blueprint_type in types:
            return p
    raise UserError(f"Mephisto task {task_name!r} ran blueprint {', '.join(sorted(types))}, which no protocol of "
                    f"parlai_acute reviews; review it with `parlai-acute mephisto review`")


def holds_work(data: dict) -> bool:
    """Did this agent's stored state get work? Not when it was never started (no state, or no status /
    ACUTE plan yet), was told "no more work" (status ``unavailable``) or got an empty ACUTE plan."""
    if not data.get("schema"):
        return False
    if data.get("status") is not None:  # per-turn, SSA, multi-reference
        return data["status"] != "unavailable"
    return bool(data.get("plan") or data.get("comparisons"))  # ACUTE-Eval: comparisons planned or judged


def agents(db, task_name: str) -> list[dict]:
    """Every agent of every run of ``task_name``: ids, worker, status, seconds worked (Mephisto's
    start and end), the unit's pay, and ``work``: the agent that holds the piece of work."""
    from parlai_acute.mephisto_tasks.live.stored_units import _agent_data, agent_dir

    found, names = [], {}
    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            for agent in db.find_agents(task_run_id=run.db_id):
                data = _agent_data(agent_dir(run, agent))
                if agent.worker_id not in names:
                    names[agent.worker_id] = db.get_worker(agent.worker_id)["worker_name"]
                start, end = data.get("start_time"), data.get("end_time")
                found.append({"agent_id": str(agent.db_id), "worker_id": str(agent.worker_id),
                              "worker": names[agent.worker_id], "unit_id": str(agent.unit_id),
                              "task_run_id": str(run.db_id), "status": agent.db_status,
                              "seconds": (end - start) if start and end and end >= start else None,
                              "pay": float(db.get_unit(agent.unit_id)["pay_amount"]),
                              "superseded_by": data.get("superseded_by"), "holds_work": holds_work(data),
                              "resumed_from": [str(a) for a in data.get("resumed_from") or ()]})
    by_id = {a["agent_id"]: a for a in found}
    continued = {old: a["agent_id"] for a in found for old in a["resumed_from"]}
    for a in found:
        holder, seen = a["agent_id"], set()
        while holder not in seen:
            seen.add(holder)
            nxt = continued.get(holder) or by_id.get(holder, {}).get("superseded_by")
            if nxt is None or str(nxt) not in by_id:
                break
            holder = str(nxt)
        a["work"] = holder
    return found


def work_units(found: list[dict]) -> list[dict]:
    """One unit per piece of work (the review's units): its worker, the time of all its agents, and
    the pay of its unit when it was submitted (else 0: paid through the wage bonus, if any)."""
    by_work: dict[str, dict] = {}
    for a in found:
        if a["agent_id"] == a["work"] and not a["holds_work"]:
            continue
        w = by_work.setdefault(a["work"], {"worker": a["worker"], "unit_id": None, "seconds": None, "pay": 0.0})
        if a["seconds"] is not None:
            w["seconds"] = (w["seconds"] or 0.0) + a["seconds"]
        if a["agent_id"] == a["work"]:
            w["unit_id"] = a["unit_id"]
            w["pay"] = a["pay"] if a["status"] in PAYABLE else 0.0
    return [w for w in by_work.values() if w["unit_id"] is not None]


def default_log(db, task_name: str) -> Path:
    """Where the actions on ``task_name`` are logged: beside the database, one file per task."""
    return Path(db.db_path).resolve().parent / "parlai_acute_review" / f"{task_name}.actions.jsonl"


def read_log(path: Path) -> list[dict]:
    from parlai_acute.jsonl import read_jsonl

    if not Path(path).is_file():
        return []
    return [entry for _, entry in read_jsonl(path, "review actions log", "pass the log an earlier --apply wrote")]


def bonuses_paid(log: list[dict]) -> dict[str, float]:
    paid: dict[str, float] = {}
    for entry in log:
        if entry.get("action") == "bonus" and entry.get("result") == "done":
            paid[entry["worker"]] = paid.get(entry["worker"], 0.0) + float(entry["amount"])
    return paid


def block_qualification(db, task_name: str, configured: str | None) -> str:
    """The qualification that keeps blocked workers out: the policy's, else the run's
    ``mephisto.blueprint.block_qualification``, else ``<task_name>_block``."""
    if configured:
        return configured
    from omegaconf import OmegaConf

    for task in db.find_tasks(task_name=task_name):
        for run in db.find_task_runs(task_id=task.db_id):
            name = OmegaConf.select(run.args, "blueprint.block_qualification", default=None) \
                if OmegaConf.is_config(run.args) else None
            if name:
                return str(name)
    return f"{task_name}_block"


def review(db, task_name: str, policy, *, log_path: Path | None = None, alpha: float = 0.05):
    """The :class:`parlai_acute.review.plan.ReviewPlan` of the stored run ``task_name``."""
    from parlai_acute.review.plan import make_plan

    p = protocol_of(db, task_name)
    found = resolve(p.review_units)(db, task_name)
    units, settings = found if isinstance(found, tuple) else (found, {})
    rows = resolve(f"{p.package}.{p.review}:evidence")(units, **settings)
    everyone = agents(db, task_name)
    log = read_log(log_path or default_log(db, task_name))
    plan = make_plan(p.name, task_name, rows, work_units(everyone), policy, bonus_paid=bonuses_paid(log),
                     alpha=alpha)
    plan.agents = everyone
    plan.block_qualification = block_qualification(db, task_name, policy.block_qualification)
    return plan


def apply(db, plan, log_path: Path | None = None, *, dry_run: bool = True) -> list[dict]:
    """Carry ``plan`` out (``dry_run``: only say what would be done). Returns one entry per action:
    ``result`` done / skipped (why) / would do / failed (the provider's message); applied ones are
    appended to the log with their evidence."""
    from mephisto.data_model.agent import Agent
    from mephisto.data_model.unit import Unit
    from mephisto.data_model.worker import Worker

    log_path = Path(log_path or default_log(db, plan.task_name))
    log = read_log(log_path)
    entries = []

    def record(entry: dict) -> None:
        entry = dict(entry, task_name=plan.task_name, protocol=plan.protocol, time=time.time(),
                     dry_run=dry_run)
        entries.append(entry)
        if not dry_run and entry["result"] == "done":
            log.append(entry)
            log_path.parent.mkdir(parents=True, exist_ok=True)
            write_jsonl(log_path, log)

    by_worker: dict[str, list[dict]] = {}
    for a in plan.agents:
        by_worker.setdefault(a["worker"], []).append(a)
    for proposal in plan.proposals:
        worker, evidence = proposal["worker"], proposal["evidence"]
        reason = "; ".join(proposal["reasons"])
        mine = by_worker.get(worker, [])
        for a in mine:
            base = {"action": proposal["decision"], "worker": worker, "worker_id": a["worker_id"],
                    "agent_id": a["agent_id"], "unit_id": a["unit_id"], "reason": reason, "evidence": evidence}
            if a["agent_id"] != a["work"]:
                record(dict(base, action="none", result=f"skipped: continued in agent {a['work']}, decided there"))
                continue
            if not a["holds_work"]:
                record(dict(base, action="none", result=f"skipped: held no work (status {a['status']})"))
                continue
            if a["status"] in DONE:
                record(dict(base, result=f"skipped: already {a['status']}"))
                continue
            if a["status"] != "completed":
                record(dict(base, action="none", result=f"skipped: not submitted (status {a['status']}); its time "
                                                        f"counts toward the wage bonus"))
                continue
            if dry_run:
                record(dict(base, result="would do"))
                continue
            agent = Agent.get(db, a["agent_id"])
            if proposal["decision"] == "approve":
                agent.approve_work()
            elif proposal["decision"] == "soft_reject":
                agent.soft_reject_work()
            else:
                agent.reject_work(reason)
            record(dict(base, result="done"))
        if not mine:
            continue
        # a bonus goes with a unit the worker submitted where there is one (MTurk pays bonuses on
        # submitted assignments); else with the last piece of work
        holders = [a for a in mine if a["agent_id"] == a["work"] and a["holds_work"]] or mine
        holder = next((a for a in reversed(holders) if a["status"] in PAYABLE), holders[-1])
        for amount, why in proposal["bonuses"]:
            base = {"action": "bonus", "worker": worker, "worker_id": holder["worker_id"],
                    "agent_id": holder["agent_id"], "unit_id": holder["unit_id"], "amount": round(amount, 2),
                    "reason": why, "evidence": evidence}
            if any(e.get("action") == "bonus" and e.get("worker") == worker and e.get("reason") == why
                   for e in log):
                record(dict(base, result="skipped: paid before"))
                continue
            if dry_run:
                record(dict(base, result="would do"))
                continue
            ok, message = Worker.get(db, holder["worker_id"]).bonus_worker(round(amount, 2), why,
                                                                          Unit.get(db, holder["unit_id"]))
            record(dict(base, result="done" if ok else f"failed: {message}"))
        if proposal["block"]:
            name = plan.block_qualification
            base = {"action": "block", "worker": worker, "worker_id": holder["worker_id"], "qualification": name,
                    "reason": "; ".join(proposal["block"]), "evidence": evidence}
            worker_obj = Worker.get(db, holder["worker_id"])
            if worker_obj.get_granted_qualification(name) is not None:
                record(dict(base, result="skipped: already holds the block qualification"))
                continue
            if dry_run:
                record(dict(base, result="would do"))
                continue
            if not db.find_qualifications(name):
                db.make_qualification(name)
            worker_obj.grant_qualification(name, 1)
            record(dict(base, result="done"))
    return entries
